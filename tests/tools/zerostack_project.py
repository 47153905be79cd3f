"""A zerostack project's paths and tool calls, for the zerostack memory tool tests."""

from __future__ import annotations

import pytest

from memoryui.store.layout import zerostack_project_slug
from memoryui.tools.registry import ToolError
from tests.tools.conftest import run

SLUG = zerostack_project_slug("/home/alice/projects/api")  # api-2a0e6f52
P = f"projects/{SLUG}"
DAILY = f"{P}/daily/2026-02-12.md"


def error(ctx, name: str, /, **args: object) -> ToolError:
    with pytest.raises(ToolError) as info:
        run(ctx, name, **args)
    return info.value


def put(ctx, path: str, text: str) -> None:
    ctx.store.write(path, text, actor=ctx.actor, tool="test-setup")


def no_backups(ctx) -> bool:
    return not [p for p in ctx.store.list_files() if not p.endswith(".md")]
