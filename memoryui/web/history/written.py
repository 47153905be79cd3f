"""A write's commit, from the handle its flash message or API reply gave (its journal
record id): the committer makes that commit a moment after the write is acknowledged."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_GET

from memoryui.roles import VIEWER, require_role
from memoryui.store.committed import RECORD_ID
from memoryui.web.common import error_page, web_errors
from memoryui.workspace import get_store

# Seconds a request waits for the commit: a live committer commits within a second, and a
# worker stands in for one that lets writes wait for 2 s.
WAIT = 5.0


@require_GET
@require_role(VIEWER)
@web_errors
def write_commit(request: HttpRequest, record: str) -> HttpResponse:
    """Redirect to the commit that holds a write, waiting briefly while it is being made."""
    if not RECORD_ID.fullmatch(record):
        return error_page(request, f"{record[:80]!r} does not name a write", 404)
    sha = get_store().commit_for(record, wait=WAIT)
    if sha is None:
        return error_page(request, "This write is saved, and no commit holds it yet (is the "
                                   "committer running?). Reload this page in a moment.", 404)
    return redirect("commit", sha=sha)
