"""Budgets and cuts: how much of a file an agent's framework loads, and where it stops.

The tools (zerostack's 32 KiB read cap), the UI's size meters and the file page's
"agents see everything above this mark" all ask this module, so the numbers and the
exact notices a framework appends are written once. Layouts name their budgets from here,
so a cut knows a layout only by its key.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Protocol

from .kinds import Kind

DAGU_MAX_LINES = 200  # Dagu truncateToMaxLines: strings.Split(content, "\n"), > 200 elements
DAGU_MARKER = "\n[... truncated at 200 lines. Use read tool for full file: {path}]"
ZEROSTACK_MAX_BYTES = 32 * 1024  # zerostack MAX_INJECT_BYTES (memory_read, injection, search)
ZEROSTACK_SKIP_BYTES = 128 * 1024  # zerostack skips injecting a MEMORY.md above this size
ZEROSTACK_MARKER = "\n…[memory truncated]"  # zerostack truncate_cjk's marker
INDEX_MAX_LINES, INDEX_MAX_BYTES = 200, 25_000  # Claude-style index budget (jutul: advisory)

_ZEROSTACK_CAPPED = ("global", "daily", "note", "scratchpad")


@dataclass(frozen=True)
class Budget:
    """How much of a file an agent's framework injects or reads; the UI shows size against it."""

    max_bytes: int | None = None
    max_lines: int | None = None
    min_bytes: int | None = None
    label: str = ""

    def state(self, size: int, lines: int) -> str:
        """'ok', 'warn' (above 80 %) or 'over'."""
        worst = self.ratio(size, lines)
        return "over" if worst > 1 else "warn" if worst > 0.8 else "ok"

    def ratio(self, size: int, lines: int) -> float:
        ratios = []
        if self.max_bytes:
            ratios.append(size / self.max_bytes)
        if self.max_lines:
            ratios.append(lines / self.max_lines)
        return max(ratios, default=0.0)


def count_lines(text: str) -> int:
    """Lines as an editor counts them (a final newline does not start a new line)."""
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def truncate_bytes(text: str, limit: int) -> str:
    """The longest prefix of at most `limit` UTF-8 bytes that ends on a char boundary."""
    data = text.encode()
    if len(data) <= limit:
        return text
    return data[:limit].decode("utf-8", "ignore")


def cap_bytes(text: str, limit: int, marker: str = ZEROSTACK_MARKER) -> str:
    """zerostack's `truncate_cjk`: over `limit` bytes, the prefix plus the marker."""
    if len(text.encode()) <= limit:
        return text
    return truncate_bytes(text, limit) + marker


@dataclass(frozen=True)
class Cut:
    """Where an agent's view of a file ends.

    `offset` is the character index of the cut in the text; `hard` is False for an
    advisory budget line (the framework still loads everything). `notice` is what the
    UI quotes; `marker` is exactly what the framework appends (`{path}`: the file).
    """

    offset: int
    kept_lines: int  # complete lines before the cut
    hidden_lines: int  # lines (or the part of one) below it
    hidden_bytes: int
    partial: bool  # the cut falls inside a line
    hard: bool
    rule: str
    notice: str = ""  # what the framework appends where it cuts, as the UI shows it
    skipped: bool = False  # the framework drops the whole file from its injection
    marker: str = ""  # the exact text appended after the kept part
    kept_bytes: int = 0

    @property
    def line(self) -> int:
        """The line after which the marker is drawn (1-based)."""
        return self.kept_lines + (1 if self.partial else 0)

    def apply(self, text: str, path: str = "") -> str:
        """The text the agent's tool returns: the kept part and the marker (soft: all)."""
        if not self.hard:
            return text
        return text[: self.offset] + self.marker.replace("{path}", path)


class Keyed(Protocol):
    """A layout, as far as a cut needs one."""

    @property
    def key(self) -> str: ...


def cut(layout: Keyed | str, kind: Kind | str | None, text: str) -> Cut | None:
    """The cut an agent's framework applies to this file in this layout, if any."""
    key = layout if isinstance(layout, str) else layout.key
    if kind is None:
        return None
    kind = str(kind)
    if key == "dagu" and kind in ("global", "memory"):
        parts = text.split("\n")
        if len(parts) <= DAGU_MAX_LINES:
            return None
        offset = len("\n".join(parts[:DAGU_MAX_LINES]))
        return _make_cut(text, offset, hard=True,
                         rule="Dagu injects and reads the first 200 lines of MEMORY.md",
                         notice="[... truncated at 200 lines. Use read tool for full file: …]",
                         marker=DAGU_MARKER)
    if key == "zerostack" and kind in _ZEROSTACK_CAPPED:
        data = text.encode()
        if len(data) <= ZEROSTACK_MAX_BYTES:
            return None
        offset = len(truncate_bytes(text, ZEROSTACK_MAX_BYTES))
        found = _make_cut(text, offset, hard=True,
                          rule="zerostack reads and injects the first 32 KiB",
                          notice=ZEROSTACK_MARKER.lstrip("\n"), marker=ZEROSTACK_MARKER)
        if kind == "global" and len(data) > ZEROSTACK_SKIP_BYTES:
            found = replace(found, skipped=True,
                            rule="zerostack does not inject a MEMORY.md over 128 KiB at all; "
                                 "memory_read returns its first 32 KiB")
        return found
    if key == "jutul" and kind == "memory":
        parts = text.split("\n")
        end: int | None = None
        if count_lines(text) > INDEX_MAX_LINES:
            end = len("\n".join(parts[:INDEX_MAX_LINES]))
        data = text.encode()
        if len(data) > INDEX_MAX_BYTES:
            by_bytes = len(truncate_bytes(text, INDEX_MAX_BYTES))
            end = by_bytes if end is None else min(end, by_bytes)
        if end is None:
            return None
        return _make_cut(text, end, hard=False,
                         rule="jutul loads the whole index, but an index should stay within "
                              "200 lines / 25 KB (Claude Code cuts its MEMORY.md there)")
    return None


def _make_cut(text: str, offset: int, *, hard: bool, rule: str, notice: str = "",
              marker: str = "") -> Cut:
    kept, hidden = text[:offset], text[offset:]
    at_line_start = not kept or kept.endswith("\n")
    partial = not at_line_start and bool(hidden) and not hidden.startswith("\n")
    kept_lines = kept.count("\n") + (0 if at_line_start or partial else 1)
    # A cut just before a newline leaves that newline as the end of the last kept line.
    rest = hidden[1:] if not at_line_start and hidden.startswith("\n") else hidden
    hidden_lines = count_lines(rest)
    return Cut(offset, kept_lines, hidden_lines, len(hidden.encode()), partial, hard, rule,
               notice, marker=marker, kept_bytes=len(kept.encode()))
