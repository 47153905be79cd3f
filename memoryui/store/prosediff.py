"""A block-level diff of two markdown texts, for the rendered (prose) diff.

The diff is taken on markdown *blocks* (paragraphs, list runs, headings, fenced code),
never on HTML, so the web layer can render each block with the one safe renderer and the
result stays valid and sanitized. A changed block carries its word diff as markdown with
private-use marks around the changed words (see INS/DEL); the input texts are stripped of
those characters first, so no file can forge a mark.

Changed blocks are word-diffed at any length by `worddiff` (rapidfuzz, cost bounded by one
budget per diff): a long paragraph with a few edits gets its few words marked; blocks the
budget cannot pay for show as deleted and inserted whole.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from difflib import SequenceMatcher

from .mdblocks import fence_map
from .worddiff import Budget, Opcode, tokens, word_opcodes

INS_OPEN, INS_CLOSE, DEL_OPEN, DEL_CLOSE = "\ue000", "\ue001", "\ue002", "\ue003"
MARKS = INS_OPEN + INS_CLOSE + DEL_OPEN + DEL_CLOSE
_MARKS_RE = re.compile(f"[{MARKS}]")


@dataclass
class Block:
    """One piece of the prose diff: op is equal | ins | del | change."""

    op: str
    text: str  # markdown; for "change", with INS/DEL marks around changed words


def blocks(text: str) -> list[str]:
    """Markdown split at blank lines, keeping fenced code (blank lines and all) whole."""
    out: list[str] = []
    cur: list[str] = []
    lines = _MARKS_RE.sub("", text or "").replace("\r\n", "\n").split("\n")
    for line, code in zip(lines, fence_map(lines)[0], strict=True):
        if not code and not line.strip():
            if cur:
                out.append("\n".join(cur))
                cur = []
            continue
        cur.append(line)
    if cur:
        out.append("\n".join(cur))
    return out


def _marks(a: list[str], b: list[str], ops: list[Opcode]) -> str:
    """The new block with the words it lost from the old and the words it gained marked."""
    out: list[str] = []
    for op, i1, i2, j1, j2 in ops:
        if op == "equal":
            out.append("".join(b[j1:j2]))
            continue
        gone, came = "".join(a[i1:i2]), "".join(b[j1:j2])
        if gone.strip():
            out.append(DEL_OPEN + gone + DEL_CLOSE)
        elif gone and not came:
            out.append(gone)
        if came.strip():
            out.append(INS_OPEN + came + INS_CLOSE)
        elif came:
            out.append(came)
    return "".join(out)


def _changed(old: str, new: str, budget: Budget) -> str | None:
    """The new block with word marks when the two blocks are alike, else None."""
    a, b = tokens(old), tokens(new)
    ops = word_opcodes(a, b, budget)
    return None if ops is None else _marks(a, b, ops)


def prose_diff(old: str | None, new: str | None, budget: Budget | None = None
               ) -> list[Block]:
    """Blocks of `new` with the blocks `old` had marked deleted, in reading order;
    runs of unchanged blocks are joined into one so they render in one go. Word marks
    are paid from `budget` (a fresh `worddiff.Budget` when None)."""
    budget = Budget() if budget is None else budget
    a, b = blocks(old or ""), blocks(new or "")
    out: list[Block] = []

    def add(op: str, text: str) -> None:
        if out and out[-1].op == op and op != "change":
            out[-1].text += "\n\n" + text
        else:
            out.append(Block(op, text))

    sm = SequenceMatcher(None, [s.strip() for s in a], [s.strip() for s in b], autojunk=False)
    for op, i1, i2, j1, j2 in sm.get_opcodes():
        if op == "equal":
            for s in b[j1:j2]:
                add("equal", s)
            continue
        olds, news = a[i1:i2], b[j1:j2]
        for k in range(max(len(olds), len(news))):
            o = olds[k] if k < len(olds) else None
            n = news[k] if k < len(news) else None
            marked = _changed(o, n, budget) if o is not None and n is not None else None
            if marked is not None:
                add("change", marked)
                continue
            if o is not None:
                add("del", o)
            if n is not None:
                add("ins", n)
    return out
