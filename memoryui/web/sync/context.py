"""The header's sync badge on every page: a lazy value, so pages that never draw the badge
(fragments, JSON) never read the sync state, and the ones that do read it once.

`Syncer.status()` reads a small state file and counts commits between HEAD and the
remote-tracking ref: cheap enough for every page.
"""

from __future__ import annotations

import logging

from django.http import HttpRequest
from django.utils.functional import SimpleLazyObject

from memoryui import workspace
from memoryui.store.sync import SyncStatus

log = logging.getLogger("memoryui.sync")


def current_status() -> SyncStatus | None:
    """The sync status, or None when no remote is configured (or it cannot be read)."""
    try:
        syncer = workspace.get_syncer()
        if syncer is None:
            return None
        return syncer.status()
    except Exception:  # noqa: BLE001 - a broken state file must not break every page
        log.exception("cannot read the sync status")
        return None


def sync_badge(request: HttpRequest) -> dict:
    """`sync_status` for templates/web/sync/_badge.html (signed-in people only)."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {"sync_status": None}
    return {"sync_status": SimpleLazyObject(current_status)}
