"""Every dialect's tools refuse to create a name that only differs from an existing one in
letter case or Unicode form, with a 400 naming the existing file."""

from __future__ import annotations

import pytest

from memoryui.store.layout import jutul_workspace_hash, zerostack_project_slug
from memoryui.tools.registry import ToolError
from tests.tools.conftest import run


def refused(ctx, name: str, /, **args: object) -> str:
    with pytest.raises(ToolError) as info:
        run(ctx, name, **args)
    assert info.value.status == 400
    return info.value.message


def test_zerostack_note_beside_its_other_case(make_ctx) -> None:
    slug = zerostack_project_slug("/home/alice/projects/api")
    ctx = make_ctx("zerostack", slug)
    run(ctx, "memory_write", target="note", name="sec", content="one")
    message = refused(ctx, "memory_write", target="note", name="Sec", content="two")
    assert f"looks like the existing projects/{slug}/notes/sec.md" in message
    run(ctx, "memory_write", target="note", name="sec", content="again", mode="overwrite")
    assert ctx.store.list_files(f"projects/{slug}/notes") == [f"projects/{slug}/notes/sec.md"]


def test_jutul_note_named_like_the_index(make_ctx) -> None:
    scope = jutul_workspace_hash("/home/alice/reservoir")
    ctx = make_ctx("jutul", scope)
    run(ctx, "remember", title="User role", content="lead")  # seeds MEMORY.md
    message = refused(ctx, "remember", title="Memory", content="x")
    assert f"looks like the existing workspaces/{scope}/memory/MEMORY.md" in message
    assert not (ctx.store.root / f"workspaces/{scope}/memory/memory.md").exists()


def test_claude_memory_create_and_rename(make_ctx) -> None:
    ctx = make_ctx("duragent", "ops-bot")
    run(ctx, "memory", command="create", path="/memories/notes/plan.md", file_text="a\n")
    run(ctx, "memory", command="create", path="/memories/notes/other.md", file_text="b\n")
    message = refused(ctx, "memory", command="create", path="/memories/notes/PLAN.md",
                      file_text="c\n")
    assert "looks like the existing" in message and "plan.md" in message
    assert "looks like the existing" in refused(
        ctx, "memory", command="rename", old_path="/memories/notes/other.md",
        new_path="/memories/notes/Plan.md")
