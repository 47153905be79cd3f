"""Liveness that means something: the workspace and the database both answer.

The reply also says whether a committer process runs on the workspace (`committer`: ok or
missing). Without one the workers commit their own writes, so nothing is lost and the
status stays 200; the log says so once each time one goes missing, not at every probe."""

from __future__ import annotations

import logging

from django.db import connection
from django.http import HttpRequest, JsonResponse

from memoryui.workspace import get_store

log = logging.getLogger("memoryui.health")
_missing_said = False  # "no committer" logged since one was last seen


def healthz(request: HttpRequest) -> JsonResponse:
    problems = []
    committer = "missing"
    try:
        store = get_store()
        store.head()
        committer = "ok" if store.committer.running else "missing"
        if not store.root.is_dir():
            problems.append("workspace folder is missing")
    except Exception as exc:  # noqa: BLE001 - reported, not raised
        problems.append(f"workspace: {exc}")
    try:
        with connection.cursor() as cur:
            cur.execute("SELECT 1")
    except Exception as exc:  # noqa: BLE001
        problems.append(f"database: {exc}")
    if problems:
        log.warning("unhealthy: %s", "; ".join(problems))
        return JsonResponse({"ok": False, "committer": committer, "problems": problems},
                            status=503)
    _say(committer)
    return JsonResponse({"ok": True, "committer": committer})


def _say(committer: str) -> None:
    global _missing_said
    if committer == "ok":
        _missing_said = False
    elif not _missing_said:
        _missing_said = True
        log.warning("no committer process runs on the workspace: the workers commit their "
                    "own writes (start `manage.py committer` beside the server)")
