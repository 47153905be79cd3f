"""Reading conflict regions out of a merged text, as `merge3` writes them."""

from __future__ import annotations

from memoryui.store.conflicts import Piece, Side, pieces
from memoryui.store.merge import merge3


def test_a_real_merge_reads_as_text_a_region_with_both_sides_and_text(tmp_path):
    result = merge3("# Ops\n\n- deploy Tuesday\n- two\n",
                    "# Ops\n\n- deploy Wednesday\n- two\n",
                    "# Ops\n\n- deploy Thursday\n- two\n", tmp_path)
    assert result is not None and result.conflicts == 1
    assert pieces(result.text) == [
        Piece("# Ops\n"),
        Piece(sides=(Side("your edit", "- deploy Wednesday", "ours"),
                     Side("current file", "- deploy Thursday", "theirs"))),
        Piece("- two\n"),
    ]


def test_diff3_regions_keep_the_base_side():
    text = "<<<<<<< mine\na\n||||||| base\nb\n=======\nc\n>>>>>>> theirs\n"
    (region,) = pieces(text)
    assert [(s.role, s.label, s.text) for s in region.sides] == [
        ("ours", "mine", "a"), ("base", "base", "b"), ("theirs", "theirs", "c")]


def test_unfinished_regions_and_lone_markers_are_stray_lines_not_regions():
    text = "intro\n<<<<<<< mine\na\n=======\nb\n\n>>>>>>>x\n"
    out = pieces(text)
    assert all(not p.sides for p in out)
    assert [p.text for p in out if p.stray] == ["<<<<<<< mine"]
    # a setext heading's underline is markdown, not a marker
    assert pieces("Title\n=======\n") == [Piece("Title\n=======\n")]


def test_markers_inside_fenced_code_are_code():
    text = "How to read a conflict:\n\n```\n<<<<<<< ours\na\n=======\nb\n>>>>>>> theirs\n```\n"
    assert pieces(text) == [Piece(text)]
