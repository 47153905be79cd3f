"""The policy: which writes are refused, which are committed and flagged.

`MEMORYUI_SECRETS=block` (the default) refuses an agent's write that adds a secret (the
store counts every write made with an API token as an agent's: Dagu and orchestrators use
admin tokens); people's writes, files agents wrote natively (pending commits) and sync arrivals are
flagged, never refused. `flag` flags everything; `off` scans nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from pathlib import Path

from .allow import AllowList
from .detector import Finding, added_lines, scan_lines, scan_text
from .record import FlaggedRecord

log = logging.getLogger("memoryui.secrets")
MODES = ("block", "flag", "off")


def refusal(findings: list[Finding]) -> str:
    """The one text every framework shows for a blocked write (kind and line, never the value)."""
    first = findings[0]
    more = f" and {len(findings) - 1} more" if len(findings) > 1 else ""
    return (f"Refused: the text contains a secret ({first.kind}) on line {first.line}{more}. "
            "Nothing was written.")


class Guard:
    """One per workspace: scans writes, keeps the flagged record and the allow list."""

    def __init__(self, git_dir: Path, mode: str = "block",
                 record_lock: AbstractContextManager | None = None):
        if mode not in MODES:
            raise ValueError(f"secrets mode must be one of {', '.join(MODES)}, got {mode!r}")
        self.mode = mode
        folder = git_dir / "memoryui"
        # writers of different files run at once: the store gives a lock across processes
        self.record = FlaggedRecord(folder / "secrets.json", record_lock)
        self.allow = AllowList(folder / "secrets-allow.json")

    @property
    def enabled(self) -> bool:
        return self.mode != "off"

    def check(self, path: str, old: str | None, new: str, actor_kind: str,
              refuse: Callable[[str, list[Finding]], Exception]) -> list[Finding]:
        """Findings in the lines a write adds; raises `refuse(message, findings)` when the
        policy blocks this actor's write (before anything is written)."""
        if not self.enabled:
            return []
        found = self.added(old, new)
        if found and self.mode == "block" and actor_kind == "agent":
            log.info("secrets: refused an agent write to %s (%s)", path,
                     ", ".join(sorted({f.kind for f in found})))
            raise refuse(refusal(found), found)
        return found

    def added(self, old: str | None, new: str) -> list[Finding]:
        """Findings in the lines `new` adds to `old`, nothing refused or recorded: what a
        change not yet committed (a pending file) would bring into history."""
        return self._scan(added_lines(old, new)) if self.enabled else []

    def clean_tail(self, text: str) -> bool:
        """Whether `text`, appended after a newline, adds no finding (or checks are off):
        such an append leaves the file's record as it is (see `written`), so it needs
        neither the old text nor line numbers."""
        return not self.enabled or not self._scan(enumerate(text.splitlines(), 1))

    def _scan(self, lines: Iterable[tuple[int, str]]) -> list[Finding]:
        """Findings not on the allow list, which is read only when there are some (a stat
        of its file on every agent write otherwise)."""
        found = scan_lines(lines)
        if found:
            allowed = self.allow.digests()
            found = [f for f in found if f.digest not in allowed]
        return found

    def written(self, path: str, old: str | None, new: str | None,
                added: list[Finding]) -> None:
        """Keep the record current after a write (new None: the file was deleted).

        A clean file stays clean unless the write added a secret; an append keeps the
        findings above what it added (no rescan of a long flagged log on every append);
        any other change to a flagged file rescans it whole."""
        if not self.enabled:
            return
        if new is None:
            self.record.set(path, [])
            return
        flagged = self.record.has(path)
        if not flagged and not added:
            return
        if not old or not flagged:
            self.record.set(path, list(added))
        elif new.startswith(old):
            first = old.count("\n", 0, old.rfind("\n") + 1) + 1  # as in added_lines
            kept = [f for f in self.record.get(path) if f.line < first]
            self.record.set(path, kept + list(added))
        else:
            self.record.set(path, scan_text(new, self.allow.digests()))

    def moved(self, old: str, new: str) -> None:
        """A rename keeps the text, so the findings move with it."""
        if self.enabled and self.record.has(old):
            self.record.set(new, self.record.get(old))
            self.record.set(old, [])

    def rescan(self, path: str, text: str | None) -> list[Finding]:
        """Re-check a whole file that changed outside the write primitive (pending, sync)."""
        if not self.enabled:
            return []
        found = [] if text is None else scan_text(text, self.allow.digests())
        self.record.set(path, found)
        if found:
            log.info("secrets: flagged %s (%s)", path, ", ".join(sorted({f.kind for f in found})))
        return found

    def rebuild(self, files: Iterable[tuple[str, str]]) -> int:
        """Scan every (path, text) once and replace the record; returns the flagged count."""
        allowed = self.allow.digests()
        data = {p: found for p, text in files if (found := scan_text(text, allowed))}
        self.record.replace(data)
        return len(data)

    def scan(self, text: str) -> list[Finding]:
        """Findings in a text about to be written (the promotion editor asks first)."""
        return scan_text(text, self.allow.digests()) if self.enabled else []

    def findings(self, path: str) -> list[Finding]:
        return self.record.get(path) if self.enabled else []

    def flagged(self) -> dict[str, list[Finding]]:
        return self.record.all() if self.enabled else {}
