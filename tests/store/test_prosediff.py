"""The prose diff's word marks inside changed paragraphs of any length, at a bounded cost."""

from __future__ import annotations

import random
import re
from difflib import SequenceMatcher

from memoryui.store.prosediff import DEL_OPEN, INS_OPEN, prose_diff
from memoryui.store.worddiff import STEPS, Budget, tokens, word_opcodes

WORDS = ["agent", "memory", "team", "lead", "curated", "note", "daily", "entry", "review", "the", "a", "of", "to", "and", "in", "that", "with", "for", "topics", "world", "skill", "deploy", "canary", "rollback"]


def long_paragraph(lines: int = 58, seed: int = 7) -> list[str]:
    rnd = random.Random(seed)
    return [" ".join(rnd.choice(WORDS) for _ in range(11)) for _ in range(lines)]


def edited(lines: list[str], at: tuple[int, ...], word: str) -> list[str]:
    out = list(lines)
    for i in at:
        ws = out[i].split(" ")
        ws[4] = word
        out[i] = " ".join(ws)
    return out


def test_a_58_line_paragraph_with_4_edits_marks_just_the_edited_words():
    old = long_paragraph()
    new = edited(old, (3, 17, 40, 55), "Thursday")
    (block,) = prose_diff("# Notes\n\n" + "\n".join(old) + "\n",
                          "# Notes\n\n" + "\n".join(new) + "\n")[1:]
    assert block.op == "change"
    assert block.text.count(INS_OPEN) == 4 and block.text.count(DEL_OPEN) == 4
    assert block.text.count("Thursday") == 4
    # without the deleted words and the marks, the block is the new paragraph
    assert re.sub("\ue002[^\ue003]*\ue003|[\ue000\ue001]", "", block.text) == "\n".join(new)


def test_a_paragraph_of_one_long_line_gets_word_marks_too():
    old = " ".join(long_paragraph(80))
    new = old.replace(" the ", " THE ", 2)
    (block,) = prose_diff(old, new)
    assert block.op == "change" and block.text.count(INS_OPEN) == 2


def test_unlike_paragraphs_stay_a_deletion_and_an_insertion():
    ops = [b.op for b in prose_diff("alpha beta gamma delta\n", "one two three four\n")]
    assert ops == ["del", "ins"]


def test_the_worst_case_spends_no_more_than_the_budget_and_falls_back_to_whole_blocks():
    old = long_paragraph(200)
    words = " ".join(old).split(" ")
    random.Random(1).shuffle(words)  # same words, no order in common: alike by the bag
    n = len(tokens(" ".join(words)))
    budget = Budget(steps=n * n // 64 // 2)  # half of what matching them would cost
    out = prose_diff("\n".join(old), " ".join(words), budget)
    assert [b.op for b in out] == ["del", "ins"]
    assert budget.steps >= 0  # refused before it was paid: nothing overspent
    # with the page's whole budget the same paragraph is matched word by word
    assert [b.op for b in prose_diff("\n".join(old), " ".join(words), Budget())] == ["change"]
    assert n * n // 64 < STEPS


def test_the_budget_is_shared_by_every_block_of_a_diff():
    para = long_paragraph(30)
    old = "\n\n".join(" ".join(para[i:i + 10]) for i in range(0, 30, 10))
    new = old.replace("memory", "MEMORY")
    assert all(b.op == "change" for b in prose_diff(old, new, Budget()) if b.op != "equal")
    poor = Budget(steps=1)
    assert [b.op for b in prose_diff(old, new, poor)].count("change") == 0


def test_word_opcodes_rebuild_the_new_text_with_no_more_edits_than_difflib():
    rnd = random.Random(5)
    for _ in range(500):
        a = [rnd.choice("abc d") for _ in range(rnd.randint(1, 25))]
        b = list(a)
        for _ in range(rnd.randint(0, 5)):
            if not b:
                break
            pos = rnd.randint(0, len(b) - 1)
            b[pos:pos + rnd.randint(0, 2)] = [rnd.choice("abc d")] * rnd.randint(0, 2)
        if not b:
            continue
        ops = word_opcodes(a, b, Budget(), similar=0.0)
        assert ops is not None
        rebuilt: list[str] = []
        i = j = 0
        for op, i1, i2, j1, j2 in ops:
            assert (i1, j1) == (i, j)
            if op == "equal":
                assert a[i1:i2] == b[j1:j2]
            rebuilt += b[j1:j2]
            i, j = i2, j2
        assert (i, j) == (len(a), len(b)) and rebuilt == b
        edits = sum(i2 - i1 + j2 - j1 for op, i1, i2, j1, j2 in ops if op != "equal")
        sm = SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
        assert edits <= sum(i2 - i1 + j2 - j1 for op, i1, i2, j1, j2 in sm if op != "equal")
