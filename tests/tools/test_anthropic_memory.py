"""Claude's memory tool over the workspace: the reference implementation's exact texts for
view, create, str_replace and insert, Letta's aliases, one attributed commit per change."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from anthropic.tools import BetaLocalFilesystemMemoryTool

from memoryui.store import Store
from tests.tools.memory_tool import FOLDER, LISTING, SCOPE, commits, duragent_store, fails, put, run


@pytest.fixture
def ws(tmp_path: Path) -> Iterator[Store]:
    yield from duragent_store(tmp_path)


# -- view -------------------------------------------------------------------------------

def test_view_of_an_empty_memory_lists_only_the_root(ws: Store) -> None:
    assert run(ws, command="view", path="/memories") == (
        LISTING.format("/memories") + "\n4K\t/memories")


def test_view_lists_two_levels_with_reference_sizes_and_no_hidden_items(ws: Store) -> None:
    put(ws, "MEMORY.md", "")
    put(ws, "notes/deploys.md", "x" * 1536)
    put(ws, "notes/deep/too-deep.md", "never listed")
    put(ws, "daily/2026-02-12.md", "# 2026-02-12\n")
    (ws.root / FOLDER / ".secret").write_text("hidden")
    (ws.root / FOLDER / "big.md").write_bytes(b"y" * (3 * 1024 * 1024))
    assert run(ws, command="view", path="/memories") == "\n".join([
        LISTING.format("/memories"),
        "4K\t/memories",
        "0B\t/memories/MEMORY.md",
        "3M\t/memories/big.md",
        "4K\t/memories/daily/",
        "13B\t/memories/daily/2026-02-12.md",
        "4K\t/memories/notes/",
        "4K\t/memories/notes/deep/",
        "1.5K\t/memories/notes/deploys.md",
    ])


def test_view_of_a_subfolder_uses_the_path_as_given(ws: Store) -> None:
    put(ws, "notes/a.md", "abc")
    assert run(ws, command="view", path="/memories/notes") == "\n".join([
        LISTING.format("/memories/notes"), "4K\t/memories/notes", "3B\t/memories/notes/a.md"])


def test_view_file_numbers_lines_like_the_reference(ws: Store) -> None:
    put(ws, "MEMORY.md", "# Ops\n- deploys on Fridays\n- staging is flaky\n")
    assert run(ws, command="view", path="/memories/MEMORY.md") == (
        "Here's the content of /memories/MEMORY.md with line numbers:\n"
        "     1\t# Ops\n     2\t- deploys on Fridays\n     3\t- staging is flaky\n     4\t")


def test_view_range_is_one_based_inclusive_and_minus_one_means_end(ws: Store) -> None:
    put(ws, "a.md", "one\ntwo\nthree\nfour")
    head = "Here's the content of /memories/a.md with line numbers:\n"
    assert run(ws, command="view", path="/memories/a.md", view_range=[2, 3]) == (
        head + "     2\ttwo\n     3\tthree")
    assert run(ws, command="view", path="/memories/a.md", view_range=[3, -1]) == (
        head + "     3\tthree\n     4\tfour")


def test_view_of_a_missing_path(ws: Store) -> None:
    err = fails(ws, command="view", path="/memories/nope.md")
    assert err.message == "The path /memories/nope.md does not exist. Please provide a valid path."
    assert (err.status, err.code) == (404, "not_found")


# -- create -----------------------------------------------------------------------------

def test_create_writes_the_scope_file_as_one_commit_by_the_agent(ws: Store) -> None:
    before = len(commits(ws))
    out = run(ws, command="create", path="/memories/progress.md", file_text="step 1 done\n")
    assert out == "File created successfully at: /memories/progress.md"
    assert ws.read(f"{FOLDER}/progress.md") == "step 1 done\n"
    log = commits(ws)
    assert len(log) == before + 1
    assert log[0].actor == f"agent:{SCOPE}"
    assert log[0].author == SCOPE
    assert log[0].tools == ["memory"]
    assert [f.path for f in log[0].files] == [f"{FOLDER}/progress.md"]


def test_create_makes_parent_folders(ws: Store) -> None:
    run(ws, command="create", path="/memories/projects/infra/plan.md", file_text="plan")
    assert ws.read(f"{FOLDER}/projects/infra/plan.md") == "plan"


def test_create_refuses_to_overwrite_like_the_reference(ws: Store) -> None:
    put(ws, "progress.md", "curated by the lead")
    err = fails(ws, command="create", path="/memories/progress.md", file_text="oops")
    assert err.message == "File /memories/progress.md already exists"
    assert (err.status, err.code) == (409, "conflict")
    assert ws.read(f"{FOLDER}/progress.md") == "curated by the lead"
    assert fails(ws, command="create", path="/memories", file_text="x").message == (
        "File /memories already exists")


def test_create_below_a_file_is_a_clear_error(ws: Store) -> None:
    put(ws, "a.md", "x")
    err = fails(ws, command="create", path="/memories/a.md/b.md", file_text="y")
    assert err.message == "Cannot create /memories/a.md/b.md: /memories/a.md is a file"
    assert err.status == 400


def test_create_needs_file_text(ws: Store) -> None:
    err = fails(ws, command="create", path="/memories/x.md")
    assert err.message == "missing required field 'file_text' for command 'create'"


# -- str_replace ------------------------------------------------------------------------

TEXT = "line 1\nline 2\nline 3\nline 4\nline 5\nline 6\nline 7\n"


def test_str_replace_returns_the_reference_snippet(ws: Store) -> None:
    put(ws, "a.md", TEXT)
    out = run(ws, command="str_replace", path="/memories/a.md", old_str="line 4",
              new_str="line four")
    assert out == (
        "The memory file has been edited. Here is the snippet showing the change "
        "(with line numbers):\n"
        "     2\tline 2\n     3\tline 3\n     4\tline four\n     5\tline 5\n     6\tline 6")
    assert ws.read(f"{FOLDER}/a.md") == TEXT.replace("line 4", "line four")


def test_str_replace_snippet_is_clipped_at_the_top(ws: Store) -> None:
    put(ws, "a.md", "alpha\nbeta\n")
    out = run(ws, command="str_replace", path="/memories/a.md", old_str="alpha", new_str="A")
    assert out.split("\n", 1)[1] == "     1\tA\n     2\tbeta\n     3\t"


def test_str_replace_with_no_match(ws: Store) -> None:
    put(ws, "a.md", TEXT)
    err = fails(ws, command="str_replace", path="/memories/a.md", old_str="line 9",
                new_str="x")
    assert err.message == ("No replacement was performed, old_str `line 9` did not appear "
                           "verbatim in /memories/a.md.")
    assert err.status == 400


def test_str_replace_with_several_matches_names_their_lines(ws: Store) -> None:
    put(ws, "a.md", "todo: a\nok\ntodo: b\n\ntodo: c\n")
    before = len(commits(ws))
    err = fails(ws, command="str_replace", path="/memories/a.md", old_str="todo", new_str="x")
    assert err.message == ("No replacement was performed. Multiple occurrences of old_str "
                           "`todo` in lines: 1, 3, 5. Please ensure it is unique")
    assert ws.read(f"{FOLDER}/a.md") == "todo: a\nok\ntodo: b\n\ntodo: c\n"
    assert len(commits(ws)) == before


def test_str_replace_on_a_folder_or_missing_file(ws: Store) -> None:
    put(ws, "notes/a.md", "x")
    assert fails(ws, command="str_replace", path="/memories/notes", old_str="x",
                 new_str="y").message == "The path /memories/notes is not a file."
    err = fails(ws, command="str_replace", path="/memories/gone.md", old_str="x", new_str="y")
    assert err.message == "The path /memories/gone.md does not exist. Please provide a valid path."
    assert err.status == 404


def test_str_replace_accepts_lettas_names_and_reason(ws: Store) -> None:
    put(ws, "a.md", "staging is flaky\n")
    out = run(ws, command="str_replace", file_path="/memories/a.md",
              old_string="flaky", new_string="fixed since v2", reason="staging got fixed")
    assert out.startswith("The memory file has been edited.")
    assert ws.read(f"{FOLDER}/a.md") == "staging is fixed since v2\n"
    assert commits(ws)[0].subject == "staging got fixed"
    assert commits(ws)[0].actor == f"agent:{SCOPE}"


def test_str_replace_without_new_str_deletes_the_text(ws: Store) -> None:
    put(ws, "a.md", "keep DROP keep\n")
    run(ws, command="str_replace", path="/memories/a.md", old_str=" DROP")
    assert ws.read(f"{FOLDER}/a.md") == "keep keep\n"


def test_conflicting_alias_values_are_refused(ws: Store) -> None:
    put(ws, "a.md", "x\n")
    err = fails(ws, command="str_replace", path="/memories/a.md", old_str="x",
                old_string="y", new_str="z")
    assert err.message == "'old_str' and its alias 'old_string' disagree; send only one"


# -- insert -----------------------------------------------------------------------------

def test_insert_after_a_line_and_at_the_top(ws: Store) -> None:
    put(ws, "a.md", "one\nthree\n")
    assert run(ws, command="insert", path="/memories/a.md", insert_line=1,
               insert_text="two\n") == "The file /memories/a.md has been edited."
    assert ws.read(f"{FOLDER}/a.md") == "one\ntwo\nthree\n"
    run(ws, command="insert", path="/memories/a.md", insert_line=0, insert_text="zero")
    run(ws, command="insert", path="/memories/a.md", insert_line=4, insert_text="four")
    assert ws.read(f"{FOLDER}/a.md") == "zero\none\ntwo\nthree\nfour\n"


def test_insert_out_of_range(ws: Store) -> None:
    put(ws, "a.md", "one\ntwo\n")
    for line in (3, -1):
        err = fails(ws, command="insert", path="/memories/a.md", insert_line=line,
                    insert_text="x")
        assert err.message == (f"Invalid `insert_line` parameter: {line}. It should be within "
                               "the range [0, 2].")
        assert err.status == 400
    assert ws.read(f"{FOLDER}/a.md") == "one\ntwo\n"


# Texts whose lines `str.splitlines()` would count differently from a split on "\n".
ORACLE_TEXTS = ["one\r\ntwo\r\n", "a\u2028b\nc\n", "form\ffeed\nline\n", "lone\rcr\nx\n",
                "no newline at the end", "", "\n", "x\n\n\n", "crlf at end only\r\n",
                "\u0085next line\n\x1cfile sep\n"]


@pytest.mark.parametrize("text", ORACLE_TEXTS, ids=repr)
def test_insert_matches_anthropics_reference_byte_for_byte(ws: Store, tmp_path: Path,
                                                          text: str) -> None:
    """The SDK's BetaLocalFilesystemMemoryTool is the oracle: same bytes, same texts."""
    ref = BetaLocalFilesystemMemoryTool(base_path=str(tmp_path / "ref"))
    ref_file = tmp_path / "ref" / "memories" / "a.md"
    ours = ws.root / FOLDER / "a.md"
    lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
    for line in sorted({0, 1, lines, lines + 1}):
        for insert_text in ("new", "new\n", "two\nlines\r\n"):
            ref_file.write_bytes(text.encode())
            put(ws, "a.md", text)
            args = {"command": "insert", "path": "/memories/a.md", "insert_line": line,
                    "insert_text": insert_text}
            try:
                expected = ref.call(args)
            except Exception as exc:  # the SDK's own ToolError
                assert fails(ws, **args).message == str(exc), (line, insert_text)
            else:
                assert run(ws, **args) == expected
            assert ours.read_bytes() == ref_file.read_bytes(), (line, insert_text)


def test_insert_into_a_missing_file(ws: Store) -> None:
    err = fails(ws, command="insert", path="/memories/a.md", insert_line=0, insert_text="x")
    assert err.message == "The path /memories/a.md does not exist. Please provide a valid path."
