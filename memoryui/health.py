"""Liveness that means something: the workspace and the database both answer."""

from __future__ import annotations

import logging

from django.db import connection
from django.http import HttpRequest, JsonResponse

from memoryui.workspace import get_store

log = logging.getLogger("memoryui.health")


def healthz(request: HttpRequest) -> JsonResponse:
    problems = []
    try:
        store = get_store()
        store.head()
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
        return JsonResponse({"ok": False, "problems": problems}, status=503)
    return JsonResponse({"ok": True})
