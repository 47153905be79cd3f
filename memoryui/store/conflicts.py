"""Conflict regions in a merged text: what lies between `<<<<<<<`, `=======` and `>>>>>>>`.

`merge3` writes these markers where both sides changed the same lines; a person resolves
them in an editor. Previews and conflict views read a text through `pieces` so a conflict
shows as a conflict (each side labelled), not as markdown: `>>>>>>>` would otherwise be
seven nested quotes and `=======` a heading underline.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .mdblocks import fence_map

_OPEN = re.compile(r"<{7}(?: (.*))?")
_BASE = re.compile(r"\|{7}(?: (.*))?")
_SPLIT = re.compile(r"={7}")
_CLOSE = re.compile(r">{7}(?: (.*))?")
# `=======` alone is also a heading underline in markdown: only these two are stray marks
STRAY_RE = re.compile(r"(?:<{7}|>{7})(?: .*)?")


@dataclass(frozen=True)
class Side:
    label: str  # from the marker line: whose text this is ("" when unnamed)
    text: str
    role: str  # ours | base | theirs


@dataclass(frozen=True)
class Piece:
    """Plain text (sides empty), one conflict region (its sides), or a marker line that
    belongs to no whole region (`stray`: shown as the literal line)."""

    text: str = ""
    sides: tuple[Side, ...] = ()
    stray: bool = False


def _region(lines: list[str], start: int) -> tuple[tuple[Side, ...], int] | None:
    """The sides of the region opened at `start` and the index of its closing line; None
    when it is not a whole region (no `=======`, no `>>>>>>>`, or another one opened)."""
    first = _OPEN.fullmatch(lines[start])
    assert first is not None
    sides: list[Side] = []
    cur: list[str] = []
    label, role = first.group(1) or "", "ours"
    for i in range(start + 1, len(lines)):
        line = lines[i]
        base = _BASE.fullmatch(line) if role == "ours" else None
        if base:
            sides.append(Side(label, "\n".join(cur), role))
            label, role, cur = base.group(1) or "", "base", []
        elif _SPLIT.fullmatch(line) and role != "theirs":
            sides.append(Side(label, "\n".join(cur), role))
            label, role, cur = "", "theirs", []
        elif (end := _CLOSE.fullmatch(line)) and role == "theirs":
            sides.append(Side(end.group(1) or "", "\n".join(cur), role))
            return tuple(sides), i
        elif _OPEN.fullmatch(line):
            return None
        else:
            cur.append(line)
    return None


def pieces(text: str) -> list[Piece]:
    """`text` cut into plain runs, whole conflict regions and stray marker lines, in order.
    Marker lines inside fenced code are code (a note about merging may quote them)."""
    lines = text.split("\n")
    code = fence_map(lines)[0]
    out: list[Piece] = []
    plain: list[str] = []

    def flush() -> None:
        if "".join(plain).strip():
            out.append(Piece("\n".join(plain)))
        plain.clear()

    i = 0
    while i < len(lines):
        line = lines[i]
        if code[i]:
            plain.append(line)
            i += 1
            continue
        region = _region(lines, i) if _OPEN.fullmatch(line) else None
        if region is not None:
            flush()
            out.append(Piece(sides=region[0]))
            i = region[1] + 1
            continue
        if STRAY_RE.fullmatch(line):
            flush()
            out.append(Piece(line, stray=True))
        else:
            plain.append(line)
        i += 1
    flush()
    return out

