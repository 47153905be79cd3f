"""Agents' memory tools never read a hard-linked file: a second name of the server's secret
or of another scope's memory is refused with a clear 400, never served."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memoryui.store import Actor
from memoryui.tools.registry import ToolError
from tests.tools.conftest import run

SECRET = "SECRET_KEY = 'server-secret-never-leak-42'\n"
THEIRS = "# billing-agent\n\n- the vendor portal password is in vault/billing\n"


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    path = tmp_path / "secret.key"
    path.write_text(SECRET)
    return path


def refused(ctx, name: str, /, **args: object) -> ToolError:
    with pytest.raises(ToolError) as info:
        run(ctx, name, **args)
    assert info.value.status == 400 and "hard link" in info.value.message
    assert "server-secret" not in info.value.message and "vault" not in info.value.message
    return info.value


def test_duragent_recall_refuses_a_memory_that_is_another_scopes_file(make_ctx) -> None:
    ctx = make_ctx("duragent", "ops-bot")
    theirs = "agents/billing-agent/memory/MEMORY.md"
    ctx.store.write(theirs, THEIRS, actor=Actor.agent("billing-agent"), tool="reflect")
    mine = ctx.store.root / "agents/ops-bot/memory/MEMORY.md"
    mine.parent.mkdir(parents=True)
    os.link(ctx.store.root / theirs, mine)
    refused(ctx, "recall")
    refused(ctx, "reflect", content="# mine\n")  # not written through it either
    assert (ctx.store.root / theirs).read_text() == THEIRS


def test_duragent_recall_leaves_out_a_hard_linked_world_topic(make_ctx, secret: Path) -> None:
    ctx = make_ctx("duragent", "ops-bot", world=True)
    run(ctx, "update_world", topic="dns", content="resolver 10.0.0.2")
    world = ctx.store.root / ctx.store.path_for("world", None, "dns")
    os.link(secret, world.parent / "keys.md")
    text = run(ctx, "recall")
    assert "resolver 10.0.0.2" in text and "server-secret" not in text and "keys" not in text


def test_claude_memory_view_refuses_the_link_and_leaves_it_out_of_listings(
        make_ctx, secret: Path) -> None:
    ctx = make_ctx("duragent", "ops-bot")
    run(ctx, "memory", command="create", path="/memories/notes/a.md", file_text="note a\n")
    os.link(secret, ctx.store.root / "agents/ops-bot/memory/notes/key.md")
    refused(ctx, "memory", command="view", path="/memories/notes/key.md")
    listing = run(ctx, "memory", command="view", path="/memories")
    assert "/memories/notes/a.md" in listing and "key.md" not in listing
    refused(ctx, "memory", command="str_replace", path="/memories/notes/key.md",
            old_str="server", new_str="x")
    assert secret.read_text() == SECRET
