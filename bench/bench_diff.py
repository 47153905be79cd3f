"""The rendered (prose) diff's word marks: a long paragraph with a few edits, and the worst
case, beside `git diff --no-index --word-diff` of the same two texts as the floor.

- a 58-line paragraph with 4 one-word edits (what a curator's fix of an agent's note is);
- the same paragraph with every other word changed (alike, with many edits);
- the same words in another order (alike by the bag of words, little in order): the
  longest common subsequence of the whole paragraph, the most a paragraph of this length
  can cost within the page's budget (`worddiff.STEPS`).

Timed on `prose_diff` (the domain: blocks, word matching, marks), not the rendering.
"""

from __future__ import annotations

import random
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench.options import OPTIONS
from memoryui.store.prosediff import prose_diff

SAMPLES = 10 if OPTIONS.preset == "huge" else 30
WORDS = ["agent", "memory", "team", "lead", "curated", "note", "daily", "entry", "review",
         "the", "a", "of", "to", "and", "in", "that", "with", "for", "topics", "world",
         "skill", "deploy", "canary", "rollback", "on", "call", "page"]


def _paragraph(lines: int, rnd: random.Random) -> list[str]:
    return [" ".join(rnd.choice(WORDS) for _ in range(11)) for _ in range(lines)]


def cases() -> list[tuple[str, str, str]]:
    """(name, old, new) for each row."""
    rnd = random.Random(12)
    old = _paragraph(58, rnd)
    few = list(old)
    for i in (3, 17, 40, 55):
        ws = few[i].split(" ")
        ws[4] = "Thursday"
        few[i] = " ".join(ws)
    words = " ".join(old).split(" ")
    every_other = " ".join(w if i % 2 else w.upper() for i, w in enumerate(words))
    shuffled = list(words)
    rnd.shuffle(shuffled)
    text = "\n".join(old)
    return [("58-line paragraph, 4 edits", text, "\n".join(few)),
            ("58-line paragraph, every other word changed", text, every_other),
            ("58-line paragraph, words reordered (worst case)", text, " ".join(shuffled))]


def _ms(fn: Callable[..., object], *args: object) -> float:
    t = time.perf_counter()
    fn(*args)
    return (time.perf_counter() - t) * 1000


def _git(cmd: list[str]) -> None:
    subprocess.run(cmd, capture_output=True, check=False)


def run(corpus: Path, report: Callable[..., None]) -> None:
    del corpus  # the texts are generated: a paragraph of the length the UI must handle
    with tempfile.TemporaryDirectory(prefix="memoryui-bench-diff-") as tmp:
        for name, old, new in cases():
            a, b = Path(tmp) / "old.md", Path(tmp) / "new.md"
            a.write_text(old + "\n")
            b.write_text(new + "\n")
            cmd = ["git", "diff", "--no-index", "--word-diff=porcelain", str(a), str(b)]
            for _ in range(3):
                prose_diff(old, new)
            ours = [_ms(prose_diff, old, new) for _ in range(SAMPLES)]
            floor = [_ms(_git, cmd) for _ in range(SAMPLES)]
            ops = [b.op for b in prose_diff(old, new)]
            report(f"prose diff: {name}", ours, floor="git diff --no-index --word-diff",
                   floor_ms=floor, note="word marks" if "change" in ops else
                   "whole paragraph deleted + inserted")
