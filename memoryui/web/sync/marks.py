"""Marking commits that arrived via the remote or by a git push, for the activity feed and
history pages.

One call per page: the sync domain keeps the list of integrated remote commits, and served
git the pushed commits with their pusher, in the clone's state folder (read incrementally),
so this costs a lookup per row.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from memoryui.gitserve.pushlog import pushed_by
from memoryui.store.sync import via_remote
from memoryui.workspace import get_store


class _Commit(Protocol):
    @property
    def sha(self) -> str: ...


class _Row(Protocol):
    @property
    def info(self) -> _Commit: ...  # read only, so a row's own commit type fits

    via_remote: bool
    via_push: str


def mark_via_remote(rows: Iterable[_Row]) -> None:
    """Set `row.via_remote` on rows whose commit was fetched from the remote."""
    rows = list(rows)
    if not rows:
        return
    store = get_store()
    shas = [r.info.sha for r in rows]
    arrived = via_remote(store, shas)
    pushers = pushed_by(store.git.state_dir, shas)
    for row in rows:
        row.via_remote = row.info.sha in arrived
        row.via_push = pushers.get(row.info.sha, "")
