"""A word diff with a bounded cost, for word marks inside changed text of any length.

Myers' O(ND) diff over tokens (words, runs of whitespace, single punctuation): its cost
grows with the text's length times the number of edits, so a long paragraph with a few
edits costs little more than reading it. Every call spends from a `Budget` of steps (one
per diagonal tried, one per token compared); a diff that would overspend returns None and
the caller shows the text changed as a whole, so no input, however adversarial, costs more
than the budget it was given.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

TOKEN_RE = re.compile(r"\w+|\s+|[^\w\s]")
SIMILAR = 0.5  # at least this share of tokens in common (as difflib's ratio) to be "alike"
STEPS = 100_000  # word matching for one page's prose diffs, all blocks (see bench_diff)

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


def _myers(a: list[str], b: list[str], max_d: int, budget: Budget) -> list[Opcode] | None:
    """The shortest edit script of a -> b as opcodes, or None past `max_d` edits or the
    budget. Greedy forward Myers, keeping each round's frontier to walk back."""
    n, m = len(a), len(b)
    offset = max_d + 1
    v = [0] * (2 * max_d + 3)
    trace: list[list[int]] = []
    for d in range(max_d + 1):
        trace.append(v[offset - d - 1:offset + d + 2])
        steps = d + 1
        for k in range(-d, d + 1, 2):
            if k == -d or (k != d and v[offset + k - 1] < v[offset + k + 1]):
                x = v[offset + k + 1]
            else:
                x = v[offset + k - 1] + 1
            y = x - k
            x0 = x
            while x < n and y < m and a[x] == b[y]:
                x += 1
                y += 1
            steps += x - x0
            v[offset + k] = x
            if x >= n and y >= m:
                return _walk_back(trace, d, k, n, m) if budget.spend(steps) else None
        if not budget.spend(steps):
            return None
    return None


def _walk_back(trace: list[list[int]], d: int, k: int, n: int, m: int) -> list[Opcode]:
    """Opcodes from the frontiers kept by _myers (trace[e] holds diagonals -e-1..e+1 as
    they stood before round e)."""
    edits: list[tuple[str, int, int]] = []  # each single edit and where it starts
    for e in range(d, 0, -1):
        prev = trace[e]
        if k == -e or (k != e and prev[k - 1 + e + 1] < prev[k + 1 + e + 1]):
            k += 1
            x = prev[k + e + 1]
            edits.append(("insert", x, x - k))
        else:
            k -= 1
            x = prev[k + e + 1]
            edits.append(("delete", x, x - k))
    out: list[Opcode] = []
    i = j = 0
    for op, x, y in reversed(edits):
        if x > i:  # the run of equal tokens before this edit
            out.append(("equal", i, x, j, y))
        i, j = (x, y + 1) if op == "insert" else (x + 1, y)
        _add(out, op, x, i, y, j)
    if i < n or j < m:
        out.append(("equal", i, n, j, m))
    return out


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
    # ratio = (total - edits) / total, so "alike" caps the edits
    max_d = int(total * (1 - similar))
    ops = _myers(mid_a, mid_b, max_d, budget)
    if ops is None:
        return None
    out: list[Opcode] = [("equal", 0, pre, 0, pre)] if pre else []
    for op, i1, i2, j1, j2 in ops:
        if i1 == i2 and j1 == j2:
            continue
        out.append((op, i1 + pre, i2 + pre, j1 + pre, j2 + pre))
    if suf:
        out.append(("equal", len(a) - suf, len(a), len(b) - suf, len(b)))
    return out
