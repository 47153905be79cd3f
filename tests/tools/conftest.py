"""Tool contexts on real git workspaces in each framework's layout, with a fixed clock."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from memoryui.store import Actor, Store
from memoryui.tools.registry import ToolContext, ToolError, call_tool


@pytest.fixture
def make_ctx(tmp_path: Path, clock) -> Iterator[Callable[..., ToolContext]]:
    """make_ctx("zerostack", "api-2a0e6f52", global_=True): one workspace per layout."""
    stores: dict[tuple[str, float], Store] = {}

    def make(layout: str, scope: str, *, world: bool = False, global_: bool = False,
             commit_delay: float = 0.0) -> ToolContext:
        key = (layout, commit_delay)
        if key not in stores:
            stores[key] = Store(tmp_path / f"ws-{layout}-{commit_delay}", layout,
                                commit_delay=commit_delay)
        return ToolContext(stores[key], scope, Actor.agent(scope), can_write_world=world,
                           can_write_global=global_, clock=clock)

    yield make
    for s in stores.values():
        s.close()


def run(ctx: ToolContext, name: str, /, **args: object) -> str:
    """Call a tool through the one entry point the API, MCP and UI use."""
    return call_tool(ctx, name, args)


def error(ctx: ToolContext, name: str, /, **args: object) -> ToolError:
    """The refusal a tool call raises (the test fails when it does not raise)."""
    with pytest.raises(ToolError) as info:
        run(ctx, name, **args)
    return info.value


def put(ctx: ToolContext, path: str, text: str) -> None:
    """A file set up for a test, written past the tools."""
    ctx.store.write(path, text, actor=ctx.actor, tool="test-setup")


def disk(ctx: ToolContext, path: str) -> str | None:
    """The file's exact text on disk (None when absent), read past the store."""
    full = ctx.store.root / path
    return full.read_bytes().decode() if full.exists() else None


def commits(ctx: ToolContext, path: str | None = None) -> list:
    return ctx.store.log(path, limit=1000)
