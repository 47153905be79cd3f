"""Claude's memory tool deletes and renames, keeps to the scope's folder in every layout."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from memoryui.store import Actor, Store
from memoryui.tools.registry import ToolContext, call_tool, find_tool, tools_for
from tests.tools.memory_tool import (
    FOLDER,
    LISTING,
    SCOPE,
    commits,
    ctx_for,
    duragent_store,
    fails,
    put,
    run,
)


@pytest.fixture
def ws(tmp_path: Path) -> Iterator[Store]:
    yield from duragent_store(tmp_path)


# -- delete -----------------------------------------------------------------------------

def test_delete_a_file(ws: Store) -> None:
    put(ws, "old.md", "stale")
    assert run(ws, command="delete", path="/memories/old.md") == "Successfully deleted /memories/old.md"
    assert not (ws.root / FOLDER / "old.md").exists()
    assert commits(ws)[0].actor == f"agent:{SCOPE}"


def test_delete_a_folder_is_one_commit(ws: Store) -> None:
    put(ws, "notes/a.md", "a")
    put(ws, "notes/sub/b.md", "b")
    put(ws, "keep.md", "k")
    before = len(commits(ws))
    assert run(ws, command="delete", path="/memories/notes") == "Successfully deleted /memories/notes"
    assert not (ws.root / FOLDER / "notes").exists()
    assert ws.read(f"{FOLDER}/keep.md") == "k"
    log = commits(ws)
    assert len(log) == before + 1
    assert sorted(f.path for f in log[0].files) == [f"{FOLDER}/notes/a.md",
                                                     f"{FOLDER}/notes/sub/b.md"]


def test_delete_refuses_the_root_and_reports_missing_paths(ws: Store) -> None:
    put(ws, "a.md", "a")
    for root in ("/memories", "/memories/", "/memories/notes/.."):
        assert fails(ws, command="delete", path=root).message == (
            "Cannot delete the /memories directory itself")
    err = fails(ws, command="delete", path="/memories/nope")
    assert err.message == "The path /memories/nope does not exist"
    assert err.status == 404
    assert ws.read(f"{FOLDER}/a.md") == "a"


# -- rename -----------------------------------------------------------------------------

def test_rename_a_file(ws: Store) -> None:
    put(ws, "draft.md", "text")
    before = len(commits(ws))
    out = run(ws, command="rename", old_path="/memories/draft.md",
              new_path="/memories/archive/final.md", reason="archive the draft")
    assert out == "Successfully renamed /memories/draft.md to /memories/archive/final.md"
    assert ws.read(f"{FOLDER}/archive/final.md") == "text"
    assert not (ws.root / FOLDER / "draft.md").exists()
    log = commits(ws)
    assert len(log) == before + 1
    assert log[0].subject == "archive the draft"


def test_rename_a_folder_is_one_commit(ws: Store) -> None:
    put(ws, "notes/a.md", "a")
    put(ws, "notes/sub/b.md", "b")
    before = len(commits(ws))
    run(ws, command="rename", old_path="/memories/notes", new_path="/memories/topics")
    assert ws.read(f"{FOLDER}/topics/a.md") == "a"
    assert ws.read(f"{FOLDER}/topics/sub/b.md") == "b"
    assert not (ws.root / FOLDER / "notes").exists()
    assert len(commits(ws)) == before + 1


def test_rename_onto_an_existing_path_or_from_a_missing_one(ws: Store) -> None:
    put(ws, "a.md", "a")
    put(ws, "b.md", "b")
    err = fails(ws, command="rename", old_path="/memories/a.md", new_path="/memories/b.md")
    assert err.message == "The destination /memories/b.md already exists"
    assert (err.status, err.code) == (409, "conflict")
    err = fails(ws, command="rename", old_path="/memories/c.md", new_path="/memories/d.md")
    assert err.message == "The path /memories/c.md does not exist"
    assert err.status == 404
    assert ws.read(f"{FOLDER}/b.md") == "b"


def test_rename_a_folder_into_itself_is_refused(ws: Store) -> None:
    put(ws, "notes/a.md", "a")
    err = fails(ws, command="rename", old_path="/memories/notes",
                new_path="/memories/notes/inner")
    assert err.message == "Cannot move /memories/notes into itself (/memories/notes/inner)"
    assert ws.read(f"{FOLDER}/notes/a.md") == "a"


# -- attribution ------------------------------------------------------------------------

def test_every_command_commits_with_the_callers_trailers(ws: Store) -> None:
    """The API and MCP hand the token's trailer to the tools; each commit carries it."""
    ctx = ToolContext(ws, SCOPE, Actor.agent(SCOPE), trailers=[("Memoryui-Token", "mui_abc")])
    calls = [
        {"command": "create", "path": "/memories/a.md", "file_text": "one\n"},
        {"command": "str_replace", "path": "/memories/a.md", "old_str": "one", "new_str": "1"},
        {"command": "insert", "path": "/memories/a.md", "insert_line": 1, "insert_text": "2"},
        {"command": "rename", "old_path": "/memories/a.md", "new_path": "/memories/d/a.md"},
        {"command": "rename", "old_path": "/memories/d", "new_path": "/memories/e"},
        {"command": "delete", "path": "/memories/e"},
        {"command": "create", "path": "/memories/b.md", "file_text": "b\n"},
        {"command": "delete", "path": "/memories/b.md"},
    ]
    for args in calls:
        call_tool(ctx, "memory", args)
    log = commits(ws)
    assert len(log) == len(calls)
    assert [c.trailers.get("Memoryui-Token") for c in log] == [["mui_abc"]] * len(calls)
    assert {c.author for c in log} == {SCOPE}


# -- paths: no way out ------------------------------------------------------------------

@pytest.mark.parametrize("path", ["/memories/../MEMORY.md", "/memories/a/../../x.md",
                                  "/memories/../../../etc/passwd"])
def test_traversal_is_refused_with_the_reference_text(ws: Store, path: str) -> None:
    err = fails(ws, command="create", path=path, file_text="x")
    assert err.message == f"Path {path} would escape /memories directory"
    assert err.status == 400
    assert ws.list_files() == []


@pytest.mark.parametrize("path", ["/etc/passwd", "memories/a.md", "/memoriesX/a.md", ""])
def test_paths_must_start_with_memories(ws: Store, path: str) -> None:
    err = fails(ws, command="view", path=path)
    assert err.message == f"Path must start with /memories, got: {path}"


def test_dot_dot_inside_memories_stays_inside(ws: Store) -> None:
    run(ws, command="create", path="/memories/notes/../top.md", file_text="x")
    assert ws.read(f"{FOLDER}/top.md") == "x"


def test_symlink_escape_is_refused(ws: Store, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("secret")
    folder = ws.root / FOLDER
    folder.mkdir(parents=True)
    os.symlink(outside, folder / "link")
    for args in ({"command": "view", "path": "/memories/link/secret.md"},
                 {"command": "create", "path": "/memories/link/new.md", "file_text": "x"},
                 {"command": "delete", "path": "/memories/link"}):
        assert fails(ws, **args).message == "Path would escape /memories directory via symlink"
    assert sorted(p.name for p in outside.iterdir()) == ["secret.md"]
    assert run(ws, command="view", path="/memories") == LISTING.format("/memories") + (
        "\n4K\t/memories")


def test_hidden_names_are_refused_in_memories_terms(ws: Store) -> None:
    err = fails(ws, command="create", path="/memories/.env", file_text="x")
    assert err.message == "invalid path '/memories/.env': hidden names are reserved"
    assert err.status == 400


# -- layouts: /memories is the scope's memory folder ------------------------------------

@pytest.mark.parametrize(("layout", "scope", "folder"), [
    ("duragent", "ops-bot", "agents/ops-bot/memory"),
    ("dagu", "nightly-etl", "memory/dags/nightly-etl"),
    ("zerostack", "shop-1a2b3c4d", "projects/shop-1a2b3c4d"),
    ("jutul", "0123456789ab", "workspaces/0123456789ab/memory"),
])
def test_each_layout_maps_memories_to_the_scope_folder(tmp_path: Path, layout: str,
                                                       scope: str, folder: str) -> None:
    store = Store(tmp_path / layout, layout)
    other = "someone-else"
    store.write(store.layout.scope_prefix(other) + "x.md", "theirs",
                actor=Actor.agent(other), tool="edit")
    ctx = ctx_for(store, scope)
    for args in ({"command": "create", "path": "/memories/notes.md", "file_text": "a\n"},
                 {"command": "str_replace", "path": "/memories/notes.md", "old_str": "a",
                  "new_str": "b"},
                 {"command": "rename", "old_path": "/memories/notes.md",
                  "new_path": "/memories/kept.md"}):
        call_tool(ctx, "memory", args)
    assert [p for p in store.list_files() if not p.startswith(store.layout.scope_prefix(other))
            ] == [f"{folder}/kept.md"]
    assert store.read(f"{folder}/kept.md") == "b\n"
    listing = call_tool(ctx, "memory", {"command": "view", "path": "/memories"})
    assert "theirs" not in listing and other not in listing
    store.close()


# -- registry ---------------------------------------------------------------------------

def test_schema_is_one_strict_object_with_a_command_enum() -> None:
    tool = next(t for t in tools_for("zerostack") if t.name == "memory")
    assert tool.dialect == "anthropic"
    schema = tool.input_schema
    assert schema["additionalProperties"] is False
    assert schema["required"] == ["command"]
    assert schema["properties"]["command"]["enum"] == [
        "view", "create", "str_replace", "insert", "delete", "rename"]
    assert {"old_string", "new_string", "file_path", "reason"} <= set(schema["properties"])


def test_unknown_fields_and_commands_are_refused(ws: Store) -> None:
    assert "unknown field(s): colour" in fails(ws, command="view", path="/memories",
                                               colour="red").message
    assert fails(ws, command="update_description", path="/memories").message.startswith(
        "field 'command' must be one of: view, create")


def test_duragent_lists_its_own_memory_but_dispatches_command_to_anthropics() -> None:
    listed = {t.name: t.dialect for t in tools_for("duragent")}
    assert listed["memory"] == "duragent"
    assert find_tool("duragent", "memory", {"command": "view"}).dialect == "anthropic"
    assert {t.name: t.dialect for t in tools_for("dagu")}["memory"] == "anthropic"
