"""jutul-agent's `remember`, golden against `agent/memory.py` (slug, note, index upsert)."""

from __future__ import annotations

import pytest

from memoryui.store.layout import jutul_workspace_hash
from memoryui.tools.jutul import MAX_CONTENT_BYTES
from memoryui.tools.registry import ToolError
from tests.tools.conftest import commits, disk, run

SCOPE = jutul_workspace_hash("/home/alice/reservoir")
M = f"workspaces/{SCOPE}/memory"
INDEX = f"{M}/MEMORY.md"

# jutul-agent's `_INDEX_SEED`, copied from the reference.
SEED = """# Memory index

This file is the always-loaded index. Each entry below should be **one
line** pointing to a sibling note file in this directory:

- `<title>` — one-line hook (file: `<file.md>`)

The agent maintains this file and the linked notes via the `read_file`,
`write_file`, and `edit_file` tools.

(Empty for now; add entries as durable facts come up.)
"""


@pytest.fixture
def ctx(make_ctx):
    return make_ctx("jutul", SCOPE)


def error(ctx, /, **args: object) -> ToolError:
    with pytest.raises(ToolError) as info:
        run(ctx, "remember", **args)
    return info.value


def put(ctx, path: str, text: str) -> None:
    ctx.store.write(path, text, actor=ctx.actor, tool="test-setup")


def test_first_remember_writes_the_note_and_seeds_the_index(ctx):
    result = run(ctx, "remember", title=" User role ", kind=" User",
                 content="\n  The user is a   reservoir engineer.\nPrefers SI units.\n\n")
    assert result == f"remembered `User role` → {M}/user-role.md (kind=user)"
    assert disk(ctx, f"{M}/user-role.md") == (
        "---\nname: user-role\ndescription: User role\ntype: user\n---\n\n"
        "The user is a   reservoir engineer.\nPrefers SI units.\n")
    assert disk(ctx, INDEX) == (
        SEED.rstrip() + "\n"
        "- `User role` — The user is a reservoir engineer. (file: `user-role.md`)\n")


@pytest.mark.parametrize("title,filename", [
    ("User role", "user-role.md"),
    ("Quirk X", "quirk-x.md"),
    ("  --Fluid: CO₂ / brine!!  ", "fluid-co-brine.md"),
    ("!!!", "note.md"),
    ("a" * 47 + " tail of a long title", "a" * 47 + "-.md"),
])
def test_slug_examples(ctx, title, filename):
    assert run(ctx, "remember", title=title, content="x").startswith(
        f"remembered `{title.strip()}` → {M}/{filename} (kind=project)")
    assert ctx.store.exists(f"{M}/{filename}")


@pytest.mark.parametrize("kind,stored", [
    ("simulator", "simulator"), (" Preference ", "preference"), ("REFERENCE", "reference"),
    ("fact", "project"), ("", "project"), (None, "project"),
])
def test_kind_is_normalised_and_falls_back_to_project(ctx, kind, stored):
    args = {"title": "T", "content": "x"} | ({} if kind is None else {"kind": kind})
    assert run(ctx, "remember", **args).endswith(f"(kind={stored})")
    assert f"\ntype: {stored}\n" in disk(ctx, f"{M}/t.md")


def test_updating_a_note_moves_its_index_line_to_the_end(ctx):
    run(ctx, "remember", title="A", content="first a")
    run(ctx, "remember", title="B", content="only b")
    run(ctx, "remember", title="A", content="second a")
    assert disk(ctx, INDEX).endswith(
        "(Empty for now; add entries as durable facts come up.)\n"
        "- `B` — only b (file: `b.md`)\n"
        "- `A` — second a (file: `a.md`)\n")
    assert disk(ctx, f"{M}/a.md").endswith("---\n\nsecond a\n")


def test_an_existing_index_is_kept_and_trailing_blank_lines_dropped(ctx):
    put(ctx, INDEX, "# My index\n\n- `Old` — stale (file: `old.md`)\n- `Kept` — k (file: `kept.md`)"
                    "\n\n\n")
    put(ctx, f"{M}/old.md", "---\nname: old\ndescription: Old\ntype: project\n---\n\nstale\n")
    run(ctx, "remember", title="Old", content="fresh")
    assert disk(ctx, INDEX) == ("# My index\n\n- `Kept` — k (file: `kept.md`)\n"
                                "- `Old` — fresh (file: `old.md`)\n")


def test_hook_is_the_first_non_blank_line_cut_at_100_chars(ctx):
    long = "word " * 30  # 150 chars
    run(ctx, "remember", title="Long", content=f"\n\n   {long}\nsecond line")
    hook = ("word " * 20)[:100]
    assert disk(ctx, INDEX).endswith(f"- `Long` — {hook}… (file: `long.md`)\n")
    run(ctx, "remember", title="Exact", content="y" * 100)
    assert disk(ctx, INDEX).endswith(f"- `Exact` — {'y' * 100} (file: `exact.md`)\n")


def test_same_slug_with_another_title_is_refused(ctx):
    run(ctx, "remember", title="User role", content="engineer")
    note, index = disk(ctx, f"{M}/user-role.md"), disk(ctx, INDEX)
    before = len(commits(ctx))

    err = error(ctx, title="User Role!", content="manager")
    assert (err.code, err.status) == ("conflict", 409)
    assert "`User role`" in err.message and "user-role.md" in err.message
    assert (disk(ctx, f"{M}/user-role.md"), disk(ctx, INDEX)) == (note, index)
    assert len(commits(ctx)) == before

    # The same title updates the note.
    run(ctx, "remember", title="User role", content="manager")
    assert disk(ctx, f"{M}/user-role.md").endswith("\n\nmanager\n")


def test_a_hand_written_note_without_a_title_is_not_overwritten(ctx):
    put(ctx, f"{M}/quirk-x.md", "Written by hand with edit_file.\n")
    assert error(ctx, title="Quirk X", content="x").status == 409
    assert disk(ctx, f"{M}/quirk-x.md") == "Written by hand with edit_file.\n"


def test_bad_input_is_refused_before_any_write(ctx):
    err = error(ctx, title="two\nlines", content="x")
    assert (err.code, err.status) == ("invalid_arguments", 400)
    err = error(ctx, title="big", content="x" * (MAX_CONTENT_BYTES + 1))
    assert (err.code, err.status) == ("payload_too_large", 413)
    assert error(ctx, content="no title").message == "missing required field 'title'"
    assert ctx.store.list_files() == []


def test_writes_are_attributed_and_grouped_by_the_deferred_committer(ctx, make_ctx):
    run(ctx, "remember", title="User role", content="engineer")
    log = commits(ctx)
    assert [sorted(f.path for f in c.files) for c in log] == [[INDEX], [f"{M}/user-role.md"]]
    assert {(c.author, c.actor, tuple(c.tools)) for c in log} == {
        (SCOPE, f"agent:{SCOPE}", ("remember",))}

    deferred = make_ctx("jutul", SCOPE, commit_delay=60)
    run(deferred, "remember", title="User role", content="engineer")
    deferred.store.flush()
    (commit,) = commits(deferred)
    assert sorted(f.path for f in commit.files) == [INDEX, f"{M}/user-role.md"]
    assert commit.tools == ["remember"] and commit.actor == f"agent:{SCOPE}"
