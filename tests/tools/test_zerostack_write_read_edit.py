"""zerostack's memory_write, memory_read and memory_edit, golden against zerostack's rules."""

from __future__ import annotations

import pytest

from tests.tools.conftest import commits, disk, error, put, run
from tests.tools.zerostack_project import DAILY, SLUG, P, no_backups


@pytest.fixture
def ctx(make_ctx):
    return make_ctx("zerostack", SLUG, global_=True)


# -- memory_write -----------------------------------------------------------------------

def test_append_newline_rules(ctx):
    assert run(ctx, "memory_write", target="daily", content="first") == \
        f"Wrote 5 bytes to {DAILY}"
    assert disk(ctx, DAILY) == "first\n"
    assert run(ctx, "memory_write", target="daily", content="second\n", mode="append") == \
        f"Wrote 7 bytes to {DAILY}"
    assert disk(ctx, DAILY) == "first\nsecond\n"

    put(ctx, f"{P}/SCRATCHPAD.md", "- [ ] a")  # no trailing newline
    run(ctx, "memory_write", target="scratchpad", content="- [ ] b", mode="anything-else")
    assert disk(ctx, f"{P}/SCRATCHPAD.md") == "- [ ] a\n- [ ] b\n"


def test_append_of_empty_content_to_a_new_file_writes_a_newline(ctx):
    assert run(ctx, "memory_write", target="note", name="empty", content="") == \
        f"Wrote 0 bytes to {P}/notes/empty.md"
    assert disk(ctx, f"{P}/notes/empty.md") == "\n"


def test_overwrite_replaces_exactly_and_keeps_no_bak(ctx):
    put(ctx, f"{P}/SCRATCHPAD.md", "- [ ] old\n")
    assert run(ctx, "memory_write", target="scratchpad", content="- [x] done",
               mode="overwrite") == f"Wrote 10 bytes to {P}/SCRATCHPAD.md"
    assert disk(ctx, f"{P}/SCRATCHPAD.md") == "- [x] done"
    run(ctx, "memory_write", target="long_term", content="fact", mode="overwrite")
    assert disk(ctx, "MEMORY.md") == "fact"
    assert no_backups(ctx)
    # The earlier version is in git instead.
    first = commits(ctx, f"{P}/SCRATCHPAD.md")[-1]
    assert ctx.store.file_at(f"{P}/SCRATCHPAD.md", first.sha) == "- [ ] old\n"


def test_note_names_are_trimmed_and_lose_md_suffixes(ctx):
    assert run(ctx, "memory_write", target="note", name="  auth.md.md ", content="x") == \
        f"Wrote 1 bytes to {P}/notes/auth.md"
    assert run(ctx, "memory_read", source="note", name="auth") == "x\n"


def test_long_term_append_drops_duplicate_lines(ctx):
    put(ctx, "MEMORY.md", "- likes tea\n- uses vim\n")
    result = run(ctx, "memory_write", target="long_term",
                 content="- likes   tea\n- new fact\n\n- new fact\n- Uses vim\n- likes\u3000tea")
    assert result == "Wrote 22 bytes to MEMORY.md (skipped 3 duplicate line(s))"
    assert disk(ctx, "MEMORY.md") == "- likes tea\n- uses vim\n- new fact\n\n- Uses vim\n"


def test_long_term_append_of_only_duplicates_writes_nothing(ctx):
    put(ctx, "MEMORY.md", "- likes tea\n")
    before = len(commits(ctx))
    assert run(ctx, "memory_write", target="long_term", content="\n - likes tea \n\n- likes tea") \
        == "Nothing written to MEMORY.md: all 2 line(s) were duplicates"
    assert disk(ctx, "MEMORY.md") == "- likes tea\n"
    assert len(commits(ctx)) == before


def test_dedup_is_for_long_term_only(ctx):
    run(ctx, "memory_write", target="daily", content="same\nsame")
    assert disk(ctx, DAILY) == "same\nsame\n"


def test_write_caps_content_at_64_kib_on_a_char_boundary(ctx):
    content = "€" * 30_000  # 3 bytes each: 90,000 bytes
    assert run(ctx, "memory_write", target="note", name="big", content=content,
               mode="overwrite") == (
        f"Wrote 65535 bytes to {P}/notes/big.md (truncated from 90000 bytes to 65536 byte cap)")
    assert disk(ctx, f"{P}/notes/big.md") == "€" * 21_845


def test_long_term_writes_need_the_global_grant(make_ctx):
    ctx = make_ctx("zerostack", SLUG)
    for name, args in (("memory_write", {"content": "x"}), ("memory_edit", {"new_str": "x"})):
        err = error(ctx, name, target="long_term", **args)
        assert (err.code, err.status) == ("forbidden", 403)
    assert disk(ctx, "MEMORY.md") is None
    put(ctx, "MEMORY.md", "shared\n")
    assert run(ctx, "memory_read", source="long_term") == "shared\n"
    assert run(ctx, "memory_write", target="daily", content="mine").startswith("Wrote 4 bytes")


@pytest.mark.parametrize("args,message", [
    ({"target": "note", "content": "x"}, "invalid note name (no slashes or dots)"),
    ({"target": "note", "name": "a/b", "content": "x"}, "invalid note name (no slashes or dots)"),
    ({"target": "note", "name": "v1.2", "content": "x"}, "invalid note name (no slashes or dots)"),
    ({"target": "note", "name": " .md", "content": "x"}, "invalid note name (no slashes or dots)"),
    ({"target": "inbox", "content": "x"}, "unknown target: inbox"),
])
def test_write_errors(ctx, args, message):
    err = error(ctx, "memory_write", **args)
    assert (err.message, err.status) == (message, 400)
    assert ctx.store.list_files() == []


def test_each_write_is_one_commit_by_the_project(ctx):
    run(ctx, "memory_write", target="daily", content="a")
    run(ctx, "memory_edit", target="daily", old_str="a", new_str="b")
    log = commits(ctx, DAILY)
    assert [c.tools for c in log] == [["memory_edit"], ["memory_write"]]
    assert {(c.author, c.actor) for c in log} == {(SLUG, f"agent:{SLUG}")}


# -- memory_read ------------------------------------------------------------------------

def test_read_sources_and_empty(ctx):
    assert run(ctx, "memory_read", source="long_term") == "(empty)"
    put(ctx, f"{P}/SCRATCHPAD.md", "")
    assert run(ctx, "memory_read", source="scratchpad") == "(empty)"
    assert run(ctx, "memory_read", source="daily") == "(empty)"
    put(ctx, f"{P}/daily/2026-02-01.md", "old day\n")
    assert run(ctx, "memory_read", source="daily", name="2026-02-01") == "old day\n"
    assert run(ctx, "memory_read", source="daily", name="2026-1-1") == "(empty)"
    assert run(ctx, "memory_read", source="note", name="nothing") == "(empty)"


def test_read_caps_at_32_kib_with_the_marker(ctx):
    put(ctx, f"{P}/notes/long.md", "€" * 12_000)  # 36,000 bytes
    assert run(ctx, "memory_read", source="note", name="long") == \
        "€" * 10_922 + "\n…[memory truncated]"
    put(ctx, f"{P}/notes/fits.md", "x" * 32_768)
    assert run(ctx, "memory_read", source="note", name="fits") == "x" * 32_768


def test_read_editors_see_the_full_text(ctx):
    put(ctx, f"{P}/notes/long.md", "y" * 40_000)
    assert disk(ctx, f"{P}/notes/long.md") == "y" * 40_000


@pytest.mark.parametrize("args,message", [
    ({"source": "note"}, "note requires name"),
    ({"source": "note", "name": "../x"}, "invalid note name"),
    ({"source": "note", "name": ""}, "invalid note name"),
    ({"source": "daily", "name": "../../MEMORY"}, "invalid daily date name (expected YYYY-MM-DD)"),
    ({"source": "daily", "name": ""}, "invalid daily date name (expected YYYY-MM-DD)"),
    ({"source": "everything"}, "unknown source: everything"),
])
def test_read_errors(ctx, args, message):
    err = error(ctx, "memory_read", **args)
    assert (err.message, err.status) == (message, 400)


def test_list(ctx, make_ctx):
    assert run(ctx, "memory_read", source="list") == ""
    put(ctx, "MEMORY.md", "g")
    put(ctx, f"{P}/notes/zeta.md", "z")
    put(ctx, f"{P}/notes/auth.md", "a")
    put(ctx, f"{P}/notes/auth.txt", "not markdown")
    put(ctx, f"{P}/notes/sub/deep.md", "not scanned")
    put(ctx, f"{P}/SCRATCHPAD.md", "- [ ] not listed")
    put(ctx, "projects/other-00000000/notes/theirs.md", "other project")
    run(ctx, "memory_write", target="daily", content="d")
    assert run(ctx, "memory_read", source="list") == "\n".join([
        "MEMORY.md", DAILY, f"{P}/notes/auth.md", f"{P}/notes/zeta.md"])


# -- memory_edit ------------------------------------------------------------------------

def test_edit_replaces_exactly_once(ctx):
    put(ctx, "MEMORY.md", "- likes tea\n- uses vim\n")
    assert run(ctx, "memory_edit", target="long_term", old_str="- uses vim\n", new_str="") \
        == "Edited MEMORY.md"
    assert disk(ctx, "MEMORY.md") == "- likes tea\n"
    assert no_backups(ctx)


@pytest.mark.parametrize("text,count", [("a a", 2), ("b", 0)])
def test_edit_must_match_exactly_once(ctx, text, count):
    put(ctx, f"{P}/SCRATCHPAD.md", text)
    before = len(commits(ctx))
    err = error(ctx, "memory_edit", target="scratchpad", old_str="a", new_str="c")
    assert err.message == (f"old_str matched {count} time(s) in {P}/SCRATCHPAD.md; "
                           "it must match exactly once")
    assert err.status == 400
    assert disk(ctx, f"{P}/SCRATCHPAD.md") == text
    assert len(commits(ctx)) == before


def test_edit_an_earlier_daily_log(ctx):
    put(ctx, f"{P}/daily/2026-02-01.md", "typo teh\n")
    assert run(ctx, "memory_edit", target="daily", name="2026-02-01", old_str="teh",
               new_str="the") == f"Edited {P}/daily/2026-02-01.md"
    assert disk(ctx, f"{P}/daily/2026-02-01.md") == "typo the\n"
    err = error(ctx, "memory_edit", target="daily", name="../x", old_str="a", new_str="b")
    assert err.message == \
        "invalid daily date name (expected YYYY-MM-DD: digits and hyphens only)"


def test_edit_of_a_missing_file_is_not_found(ctx):
    err = error(ctx, "memory_edit", target="note", name="ghost", old_str="a", new_str="b")
    assert (err.message, err.code, err.status) == (
        "No such file or directory (os error 2)", "not_found", 404)
    assert error(ctx, "memory_edit", target="daily", name="2026-99-99", old_str="a",
                 new_str="b").status == 404
    assert ctx.store.list_files() == []


def test_edit_without_old_str_deletes_a_whole_note_only(ctx):
    put(ctx, f"{P}/notes/auth.md", "token rotation\n")
    assert run(ctx, "memory_edit", target="note", name="auth", new_str="") == \
        f"Deleted {P}/notes/auth.md"
    assert disk(ctx, f"{P}/notes/auth.md") is None
    assert no_backups(ctx)
    deleted = commits(ctx, f"{P}/notes/auth.md")[0]
    assert [(f.status, f.path) for f in deleted.files] == [("D", f"{P}/notes/auth.md")]
    assert deleted.tools == ["memory_edit"] and deleted.actor == f"agent:{SLUG}"

    err = error(ctx, "memory_edit", target="note", name="auth", new_str="")
    assert (err.code, err.status) == ("not_found", 404)

    put(ctx, f"{P}/SCRATCHPAD.md", "keep\n")
    for target in ("scratchpad", "daily", "long_term"):
        err = error(ctx, "memory_edit", target=target, new_str="")
        assert err.message == ("memory_edit without old_str deletes a whole note; it is only "
                               "allowed for target=note, not long_term/scratchpad/daily")
    assert disk(ctx, f"{P}/SCRATCHPAD.md") == "keep\n"


def test_edit_errors_for_names_and_targets(ctx):
    assert error(ctx, "memory_edit", target="note", old_str="a", new_str="b").message == \
        "invalid note name (no slashes or dots)"
    assert error(ctx, "memory_edit", target="notes", new_str="b").message == \
        "unknown target: notes"


def test_a_call_without_target_is_refused_and_the_schema_says_what_target_takes(ctx):
    """`memory_write {"content": ...}`: memoryui's one argument check answers (zerostack's
    own answer is serde's, through rig, with the column of the model's raw JSON, which
    memoryui never sees); the definition the model was given says what `target` takes."""
    from memoryui.tools.registry import tools_for

    exc = error(ctx, "memory_write", content="staging needs the VPN")
    assert (exc.status, exc.message) == (400, "missing required field 'target'")
    assert ctx.store.list_files() == []
    tools = {t.name: t.input_schema for t in tools_for("zerostack")}
    for name in ("memory_write", "memory_edit"):
        target = tools[name]["properties"]["target"]
        assert "target" in tools[name]["required"]
        assert target["enum"] == ["long_term", "scratchpad", "daily", "note"]
        for value, meaning in [("long_term", "MEMORY.md"), ("scratchpad", "SCRATCHPAD.md"),
                               ("daily", "today's log"), ("note", "notes/<name>.md")]:
            assert f"{value}: " in target["description"] and meaning in target["description"]
    assert "list" in tools["memory_read"]["properties"]["source"]["description"]
    assert tools["memory_search"]["properties"]["query"]["description"]
