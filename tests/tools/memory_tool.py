"""Calling Claude's memory tool as ops-bot on a Duragent workspace, for the memory tool tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memoryui.store import Actor, Store
from memoryui.tools.registry import ToolContext, ToolError, call_tool

SCOPE = "ops-bot"
FOLDER = f"agents/{SCOPE}/memory"  # /memories in the duragent layout
LISTING = "Here're the files and directories up to 2 levels deep in {}, excluding hidden items:"


def duragent_store(tmp_path: Path) -> Iterator[Store]:
    """A Duragent workspace in tmp_path, closed once the test is done (a fixture's body)."""
    s = Store(tmp_path / "ws", "duragent")
    yield s
    s.close()


def ctx_for(store: Store, scope: str = SCOPE) -> ToolContext:
    return ToolContext(store, scope, Actor.agent(scope))


def run(store: Store, **args: object) -> str:
    return call_tool(ctx_for(store), "memory", args)


def fails(store: Store, **args: object) -> ToolError:
    with pytest.raises(ToolError) as info:
        run(store, **args)
    return info.value


def put(store: Store, rel: str, text: str) -> None:
    store.write(f"{FOLDER}/{rel}", text, actor=Actor.user("lead"), tool="edit")


def commits(store: Store) -> list:
    return store.log(limit=100)
