"""The queue's counts (header, scope chips, day counts) for the page and, after an action,
as out-of-band swaps, so they change without a reload."""

from __future__ import annotations

import json
from urllib.parse import urlencode, urlsplit

from django.http import HttpRequest, QueryDict
from django.urls import reverse

from memoryui import review
from memoryui.review.state import LEDGER
from memoryui.store import Store

from . import forms


def counts_context(queue: review.Queue) -> dict:
    """What `_counts.html` shows: the chips' links keep the other filters."""
    filters = queue.filters

    def link(**over: object) -> str:
        return "?" + urlencode(filters.as_query(**over))

    return {
        "queue": queue, "filters": filters,
        "scope_links": [(s, n, link(scope=s, page=1)) for s, n in queue.counts],
        "all_scopes_url": link(scope="", page=1),
        "day_counts_json": json.dumps(queue.day_counts or {}, sort_keys=True),
    }


def after_action(request: HttpRequest, store: Store) -> dict:
    """The counts of the queue the lead is looking at (htmx's HX-Current-URL), or {}
    when the action came from another page (nothing there to update)."""
    current = getattr(getattr(request, "htmx", None), "current_url", None) or ""
    parts = urlsplit(current)
    if parts.path != reverse("review"):
        return {}
    form = forms.QueueFilters(QueryDict(parts.query))
    queue = review.build_queue(store, LEDGER, form.filters(), details=False)
    return {"counts": counts_context(queue)}
