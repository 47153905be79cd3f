"""The activity page's Atom feed (`django.contrib.syndication`), for a signed-in viewer or a
feed reader holding an API token.

Readers cannot sign in and most cannot send headers, so the token is taken from
`Authorization: Bearer` or from `?token=` (that URL is then a secret: docs/ui.md).
The entries are the activity page's first page, with the same filters, and the proposals
made and rejected in that time (approvals are merge commits, among the commits).
"""

from __future__ import annotations

import datetime as dt
import uuid
from dataclasses import dataclass
from typing import Any

from django.contrib.syndication.views import Feed
from django.http import HttpRequest, HttpResponse
from django.urls import reverse
from django.utils.feedgenerator import Atom1Feed
from django.utils.xmlutils import SimplerXMLGenerator
from django.views.decorators.http import require_GET

from memoryui.api.auth import bearer, token_for
from memoryui.models import Token
from memoryui.roles import VIEWER, require_role
from memoryui.throttle import Throttled
from memoryui.web.common import web_errors
from memoryui.web.proposals.events import Event, day_of, feed_events

from .activity import ACTIVITY_PAGE, ActivityFilters, activity_page
from .rows import CommitRow

# Characters XML 1.0 cannot hold (commit messages may have them): shown as U+FFFD.
XML_INVALID_CHARS = dict.fromkeys([*range(0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0xFFFE,
                                   0xFFFF], "\ufffd")
# The feed's date when it has no entry (a fixed one: readers compare it between fetches).
EMPTY_UPDATED = dt.datetime(2000, 1, 1, tzinfo=dt.UTC)


def _xml_text(value: str) -> str:
    return value.translate(XML_INVALID_CHARS)


class _Atom(Atom1Feed):
    """Atom as memoryui writes it: a plain-text summary (the commit's body and files, never
    HTML), a generator, and the feed dated by its newest entry, the first."""

    def add_root_elements(self, handler: SimplerXMLGenerator) -> None:
        super().add_root_elements(handler)
        handler.addQuickElement("generator", "memoryui")

    def add_item_elements(self, handler: SimplerXMLGenerator, item: dict[str, Any]) -> None:
        super().add_item_elements(handler, {**item, "description": None})
        handler.addQuickElement("summary", item["description"], {"type": "text"})

    def latest_post_date(self) -> dt.datetime:
        return self.items[0]["updateddate"] if self.items else EMPTY_UPDATED


@dataclass
class _Page:
    """What the feed is made of: the filters and the commits they let through."""

    filters: ActivityFilters
    rows: list[CommitRow | Event]

    def url(self, request: HttpRequest, name: str) -> str:
        query = self.filters.query()
        return request.build_absolute_uri(reverse(name) + (f"?{query}" if query else ""))


class ActivityFeed(Feed):
    feed_type = _Atom

    def get_object(self, request: HttpRequest, *args: Any, **kwargs: Any) -> _Page:
        self.request = request
        return kwargs["page"]

    def title(self, page: _Page) -> str:
        query = page.filters.query()
        return _xml_text("memoryui activity" + (f" ({query.replace('&', ', ')})" if query else ""))

    def link(self, page: _Page) -> str:
        return page.url(self.request, "activity")

    def feed_guid(self, page: _Page) -> str:
        return page.url(self.request, "activity")

    def feed_url(self, page: _Page) -> str:
        return page.url(self.request, "activity_atom")

    def items(self, page: _Page) -> list[CommitRow | Event]:
        return page.rows

    def item_title(self, row: CommitRow | Event) -> str:
        return _xml_text(row.title() if isinstance(row, Event) else row.info.subject)

    def item_link(self, row: CommitRow | Event) -> str:
        if isinstance(row, Event):
            return self.request.build_absolute_uri(reverse("proposal", args=[row.id]))
        return self.request.build_absolute_uri(reverse("commit", args=[row.info.sha]))

    def item_guid(self, row: CommitRow | Event) -> str:
        name = f"proposal:{row.id}:{row.what}" if isinstance(row, Event) else row.info.sha
        return f"urn:uuid:{uuid.uuid5(uuid.NAMESPACE_OID, 'memoryui:' + name)}"

    def item_updateddate(self, row: CommitRow | Event) -> dt.datetime:
        return row.when if isinstance(row, Event) else row.info.when

    def item_author_name(self, row: CommitRow | Event) -> str:
        return _xml_text(row.who if isinstance(row, Event) else row.info.actor)

    def item_author_email(self, row: CommitRow | Event) -> str | None:
        return None if isinstance(row, Event) else _xml_text(row.info.email)

    def item_categories(self, row: CommitRow | Event) -> list[str]:
        if isinstance(row, Event):
            return ["agent" if row.by_agent else "user", f"proposal:{row.what}"]
        return [_xml_text(t) for t in (row.actor.kind, *(f"tool:{t}" for t in row.info.tools))]

    def item_description(self, row: CommitRow | Event) -> str:
        if isinstance(row, Event):
            return _xml_text("\n".join(x for x in (row.reason, f"{row.kind} {row.path}") if x))
        info = row.info
        lines = [info.body] if info.body else []
        lines += [f"{fc.status} {fc.path}" for fc in info.files]
        return _xml_text("\n".join(lines) or info.subject)


def _plain(message: str, status: int) -> HttpResponse:
    resp = HttpResponse(message + "\n", status=status, content_type="text/plain; charset=utf-8")
    if status == 401:
        resp["WWW-Authenticate"] = 'Bearer realm="memoryui"'
    return resp


@require_GET
@web_errors
def activity_atom(request: HttpRequest) -> HttpResponse:
    """The Atom feed: for a signed-in viewer, or a feed reader holding an API token."""
    raw = bearer(request) or (request.GET.get("token") or "").strip()
    if not raw:
        if not request.user.is_authenticated:
            # A feed reader cannot follow a redirect to the sign-in form: it is told to
            # authenticate, with the scheme it can use.
            return _plain("this feed needs an API token: send 'Authorization: Bearer "
                          "<token>' or add ?token=<token> to the feed's URL", 401)
        return _session_atom(request)
    try:
        token = token_for(raw[:200], request)
    except Throttled as exc:
        resp = _plain(str(exc), 429)
        resp["Retry-After"] = str(exc.retry_after)
        return resp
    if token is None:
        return _plain("invalid or revoked token", 401)
    scope = (request.GET.get("scope") or "").strip()
    if not token.is_admin and scope and scope != token.scope:
        return _plain(f"this token reads only scope '{token.scope}', not '{scope}'", 403)
    resp = _atom(request, token)
    resp["Cache-Control"] = "private, no-store"
    return resp


@require_role(VIEWER)
def _session_atom(request: HttpRequest) -> HttpResponse:
    return _atom(request, None)


def _atom(request: HttpRequest, token: Token | None) -> HttpResponse:
    f, shown, _has_more, _kinds = activity_page(request, ACTIVITY_PAGE, token)
    if f.errors:
        return HttpResponse("; ".join(f.errors), status=400,
                            content_type="text/plain; charset=utf-8")
    return ActivityFeed()(request, page=_Page(f, _with_proposals(f, shown, token)))


def _with_proposals(f: ActivityFilters, shown: list[CommitRow], token: Token | None
                    ) -> list[CommitRow | Event]:
    """The first page's commits and the proposals of the same filters, newest first (a
    scope token's: its own scope's only)."""
    if f.offset:
        return list(shown)
    scope = token.scope if token is not None and not token.is_admin else f.scope
    found = feed_events(ACTIVITY_PAGE, scope=scope or None, kind=f.kind or None,
                        actor=f.actor.split(":", 1)[-1] or None, who=f.who or None,
                        since=day_of(f.since), until=day_of(f.until))
    if shown and len(shown) >= ACTIVITY_PAGE:  # only the time the commits cover
        oldest = shown[-1].info.when
        found = [e for e in found if e.when >= oldest]
    merged: list[CommitRow | Event] = [*shown, *found]
    merged.sort(key=lambda r: r.when if isinstance(r, Event) else r.info.when, reverse=True)
    return merged[:ACTIVITY_PAGE]

