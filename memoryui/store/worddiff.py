"""A word diff with a bounded cost, for word marks inside changed text of any length.

The diff is rapidfuzz's `Indel.opcodes` over tokens (words, runs of whitespace, single
punctuation): the longest common subsequence, computed bit-parallel in C, 64 token pairs a
step. Common starts and ends are set aside first, so a long paragraph with a few edits
compares only the stretch between its first and last edit. Every call spends from a
`Budget` of steps (one per 64 token pairs compared, one per token read); a diff that would
overspend returns None and the caller shows the text changed as a whole, so no input,
however adversarial, costs more than the budget it was given.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from rapidfuzz.distance import Indel

TOKEN_RE = re.compile(r"\w+|\s+|[^\w\s]")
SIMILAR = 0.5  # at least this share of tokens in common (as difflib's ratio) to be "alike"
STEPS = 500_000  # word matching for one page's prose diffs, all blocks (see bench_diff)

Opcode = tuple[str, int, int, int, int]  # difflib's: equal | replace | delete | insert


@dataclass
class Budget:
    """Steps left for word matching; shared by every diff of one page."""

    steps: int = STEPS

    def spend(self, n: int) -> bool:
        self.steps -= n
        return self.steps >= 0


def tokens(text: str) -> list[str]:
    return TOKEN_RE.findall(text)


def _bag_ratio(a: list[str], b: list[str]) -> float:
    """An upper bound of the share in common (as difflib's quick_ratio), in linear time."""
    total = len(a) + len(b)
    if not total:
        return 1.0
    common = sum((Counter(a) & Counter(b)).values())
    return 2.0 * common / total


def _add(out: list[Opcode], op: str, i1: int, i2: int, j1: int, j2: int) -> None:
    """Append an edit, joined to an edit just before it (delete + insert = replace)."""
    if out and out[-1][0] != "equal" and out[-1][2] == i1 and out[-1][4] == j1:
        _, i1, _, j1, _ = out[-1]
        out.pop()
        op = "replace" if i2 > i1 and j2 > j1 else "delete" if i2 > i1 else "insert"
    out.append((op, i1, i2, j1, j2))


def word_opcodes(a: list[str], b: list[str], budget: Budget,
                 similar: float = SIMILAR) -> list[Opcode] | None:
    """Opcodes turning tokens `a` into `b` when they are alike (at least `similar` of the
    tokens in common), else None; None too when the budget cannot pay for the diff."""
    total = len(a) + len(b)
    if not a or not b or _bag_ratio(a, b) < similar:
        return None
    if not budget.spend(total):  # tokenizing and the bag count, paid for
        return None
    pre = 0
    while pre < len(a) and pre < len(b) and a[pre] == b[pre]:
        pre += 1
    suf = 0
    while suf < len(a) - pre and suf < len(b) - pre and a[-1 - suf] == b[-1 - suf]:
        suf += 1
    mid_a, mid_b = a[pre:len(a) - suf], b[pre:len(b) - suf]
    cost = len(mid_a) * len(mid_b) // 64 + 1
    if cost > budget.steps:  # refused before it is paid: a smaller block may still fit
        return None
    budget.spend(cost)
    raw: list[Opcode] = [(o.tag, o.src_start, o.src_end, o.dest_start, o.dest_end)
                         for o in Indel.opcodes(mid_a, mid_b)]
    edits = sum(i2 - i1 + j2 - j1 for tag, i1, i2, j1, j2 in raw if tag != "equal")
    if (total - edits) / total < similar:  # difflib's ratio, exactly
        return None
    ops: list[Opcode] = []
    for tag, i1, i2, j1, j2 in raw:
        if tag == "equal":
            ops.append(("equal", i1, i2, j1, j2))
        else:
            _add(ops, tag, i1, i2, j1, j2)
    out: list[Opcode] = [("equal", 0, pre, 0, pre)] if pre else []
    for op, i1, i2, j1, j2 in ops:
        if i1 == i2 and j1 == j2:
            continue
        out.append((op, i1 + pre, i2 + pre, j1 + pre, j2 + pre))
    if suf:
        out.append(("equal", len(a) - suf, len(a), len(b) - suf, len(b)))
    return out
