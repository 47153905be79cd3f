"""Blame: each line of a file with the commit that last changed it, grouped in blocks."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from django.http import HttpRequest, HttpResponse
from django.views.decorators.http import require_GET

from memoryui.roles import VIEWER, require_role
from memoryui.store import NotFound
from memoryui.store.history import BlameLine
from memoryui.web.common import render_page, web_errors
from memoryui.web.links import file_url
from memoryui.workspace import get_store

from .rows import ActorView, checked_path


@dataclass
class BlameBlock:
    sha: str
    actor: ActorView
    time: int
    summary: str
    age: int  # 0 (oldest) .. 4 (newest), for the age bar
    lines: list[BlameLine]

    @property
    def short(self) -> str:
        return self.sha[:8]

    @property
    def when(self) -> dt.datetime:
        return dt.datetime.fromtimestamp(self.time, tz=dt.UTC)

    @property
    def uncommitted(self) -> bool:
        return self.sha.startswith("0000000")


def blocks_of(lines: list[BlameLine]) -> list[BlameBlock]:
    """Consecutive lines of one commit form a block; age is relative to the file's span."""
    times = [ln.time for ln in lines] or [0]
    oldest, newest = min(times), max(times)
    span = max(newest - oldest, 1)
    blocks: list[BlameBlock] = []
    for ln in lines:
        if blocks and blocks[-1].sha == ln.sha:
            blocks[-1].lines.append(ln)
            continue
        age = min(4, int(4 * (ln.time - oldest) / span)) if newest > oldest else 4
        blocks.append(BlameBlock(ln.sha, ActorView(ln.actor or f"git:{ln.author}"), ln.time,
                                 ln.summary, age, [ln]))
    return blocks


@require_GET
@require_role(VIEWER)
@web_errors
def blame(request: HttpRequest, path: str) -> HttpResponse:
    path = checked_path(path)
    store = get_store()
    if store.head() is None or store.file_at(path, "HEAD") is None:
        raise NotFound(f"{path} is not in the committed workspace")
    lines = store.blame(path)
    blocks = blocks_of(lines)
    return render_page(request, "web/history/blame.html", {
        "path": path, "blocks": blocks, "line_count": len(lines),
        "commit_count": len({b.sha for b in blocks}), "file_href": file_url(path),
        "address": store.address_of(path),
    }, path=path)
