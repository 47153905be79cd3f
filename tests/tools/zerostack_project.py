"""A zerostack project's paths, for the zerostack memory tool tests."""

from __future__ import annotations

from memoryui.store.layout import zerostack_project_slug

SLUG = zerostack_project_slug("/home/alice/projects/api")  # api-2a0e6f52
P = f"projects/{SLUG}"
DAILY = f"{P}/daily/2026-02-12.md"


def no_backups(ctx) -> bool:
    return not [p for p in ctx.store.list_files() if not p.endswith(".md")]
