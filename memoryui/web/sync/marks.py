"""Marking commits that arrived via the remote, for the activity feed and history pages.

One call per page: the sync domain keeps the list of integrated remote commits in the
clone's state folder (read incrementally), so this costs a set lookup per row.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from memoryui.store.sync import via_remote
from memoryui.workspace import get_store


class _Row(Protocol):
    info: object
    via_remote: bool


def mark_via_remote(rows: Iterable[_Row]) -> None:
    """Set `row.via_remote` on rows whose commit was fetched from the remote."""
    rows = list(rows)
    if not rows:
        return
    arrived = via_remote(get_store(), [r.info.sha for r in rows])  # type: ignore[attr-defined]
    for row in rows:
        row.via_remote = row.info.sha in arrived  # type: ignore[attr-defined]
