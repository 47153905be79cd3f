"""The activity feed (every commit, filtered by actor, scope, kind and dates) and its Atom.

One `git log` per page. Filters are read by `ActivityForm`; their messages are shown next
to each field on the page and in the results area (the part htmx swaps).
"""

from __future__ import annotations

import datetime as dt
import uuid
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from urllib.parse import urlencode

from django.contrib.auth import get_user_model
from django.http import HttpRequest, HttpResponse
from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe
from django.views.decorators.http import require_GET

from memoryui.api.auth import bearer, token_for
from memoryui.api.files import visible
from memoryui.models import Token
from memoryui.roles import VIEWER, require_role
from memoryui.store import Store
from memoryui.throttle import Throttled
from memoryui.web import hierarchy
from memoryui.web.common import fragment_or_page, web_errors
from memoryui.workspace import get_store

from .forms import WHO_ACTOR, ActivityForm
from .rows import CommitRow, by_day, rows

ACTIVITY_PAGE = 50
ATOM_NS = "http://www.w3.org/2005/Atom"
XML_INVALID_CHARS = dict.fromkeys([*range(0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0xFFFE,
                                   0xFFFF], "\ufffd")


@dataclass
class ActivityFilters:
    """The filters as the page shows them (raw text kept) and as `git log` needs them."""

    form: ActivityForm
    actor: str = ""
    scope: str = ""
    kind: str = ""
    since: str = ""
    until: str = ""
    who: str = ""  # agents / people: only their writes (an exact actor wins)
    offset: int = 0
    errors: list[str] = field(default_factory=list)

    @classmethod
    def of(cls, form: ActivityForm) -> ActivityFilters:
        valid = form.is_valid()
        d = form.cleaned_data
        f = cls(form, errors=[str(e) for errs in form.errors.values() for e in errs])
        for key in ("actor", "scope", "kind", "since", "until", "who"):
            # a bad date is left out of links; other bad values stay visible to be fixed
            raw = (form.data.get(key) or "").strip()
            setattr(f, key, d.get(key, "" if key in ("since", "until", "who") else raw))
        f.offset = d.get("offset", 0) if valid or "offset" in d else 0
        return f

    def query(self, **extra: object) -> str:
        """The filters as a query string (links keep them; empty ones are left out)."""
        data = {k: getattr(self, k) for k in ("actor", "scope", "kind", "since", "until", "who")}
        data.update({k: str(v) for k, v in extra.items()})
        return urlencode({k: v for k, v in data.items() if v not in ("", None, "0")})

    def log_args(self) -> dict:
        actor = self.actor.removeprefix("git:") or WHO_ACTOR.get(self.who, "")
        return {"actor": actor or None, "scope": self.scope or None, "kind": self.kind or None,
                "since": self.since or None, "until": self.until or None}


def _activity(request: HttpRequest, limit: int, token: Token | None = None
              ) -> tuple[ActivityFilters, list[CommitRow], bool, list[str]]:
    """The filtered page of commits; a scope `token` sees only its scope's readable ones."""
    store = get_store()
    kinds = [k.value for k in store.layout.kinds()]
    f = ActivityFilters.of(ActivityForm(request.GET, kinds=kinds))
    if f.errors:
        return f, [], False, kinds
    args = f.log_args()
    if token is not None and not token.is_admin:
        # as the API's history: a scope token's feed is its own scope's commits, each
        # shown only when the token may read every file it touches (Layout.readable_by)
        args["scope"] = token.scope
        infos = store.log(limit=limit + 1, offset=f.offset, with_files=True,
                          all_files=True, **args)
        return (f, rows([i for i in infos[:limit] if visible(token, store, i)]),
                len(infos) > limit, kinds)
    infos = store.log(limit=limit + 1, offset=f.offset, with_files=True, **args)
    return f, rows(infos[:limit]), len(infos) > limit, kinds


def _actor_options(store: Store) -> SafeString:
    """Suggestions for the actor filter: every scope's agent (500 on a large team, their
    markup made once per sidebar listing: `hierarchy.per_scope`), then every person."""
    h = hierarchy.shared(store)
    agents = hierarchy.per_scope(h, "_activity_agents",
                                 lambda n: format_html('<option value="agent:{}"></option>', n))
    people = get_user_model().objects.filter(is_active=True).order_by("username")
    users = [format_html('<option value="user:{}"></option>', u)
             for u in people.values_list("username", flat=True)[:500]]
    return mark_safe("".join(agents + users))


@require_GET
@require_role(VIEWER)
@web_errors
def activity(request: HttpRequest) -> HttpResponse:
    f, shown, has_more, kinds = _activity(request, ACTIVITY_PAGE)
    ctx = {
        "filters": f, "form": f.form, "rows": shown, "groups": by_day(shown), "kinds": kinds,
        "older": "?" + f.query(offset=f.offset + ACTIVITY_PAGE) if has_more else None,
        "newer": ("?" + f.query(offset=max(0, f.offset - ACTIVITY_PAGE))
                  if f.offset > 0 else None),
        "atom_query": f.query(), "filtered": bool(f.query()),
        "feed_url": request.build_absolute_uri(
            reverse("activity_atom") + (f"?{f.query()}" if f.query() else "")),
        "scope_term": get_store().layout.scope_term,
    }
    if not request.htmx or request.htmx.history_restore_request:
        ctx["actor_options"] = _actor_options(get_store())
    # htmx does not swap 4xx responses, and the errors belong in the results area.
    return fragment_or_page(request, "web/history/activity.html",
                            "web/history/_activity_rows.html", ctx,
                            status=400 if f.errors else 200, fragment_status=200,
                            sidebar=True)


def _xml_text(value: str) -> str:
    return value.translate(XML_INVALID_CHARS)


def _plain(message: str, status: int) -> HttpResponse:
    resp = HttpResponse(message + "\n", status=status, content_type="text/plain; charset=utf-8")
    if status == 401:
        resp["WWW-Authenticate"] = 'Bearer realm="memoryui"'
    return resp


@require_GET
@web_errors
def activity_atom(request: HttpRequest) -> HttpResponse:
    """The Atom feed: for a signed-in viewer, or a feed reader holding an API token.

    Readers cannot sign in and most cannot send headers, so the token is taken from
    `Authorization: Bearer` or from `?token=` (that URL is then a secret: README).
    """
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
    f, shown, _has_more, _kinds = _activity(request, ACTIVITY_PAGE, token)
    if f.errors:
        return HttpResponse("; ".join(f.errors), status=400,
                            content_type="text/plain; charset=utf-8")
    ET.register_namespace("", ATOM_NS)

    def el(parent: ET.Element, tag: str, text: str | None = None, **attrs: str) -> ET.Element:
        node = ET.SubElement(parent, f"{{{ATOM_NS}}}{tag}", attrs)
        if text is not None:
            node.text = _xml_text(text)
        return node

    query = f.query()
    page_url = request.build_absolute_uri(reverse("activity") + (f"?{query}" if query else ""))
    self_url = request.build_absolute_uri(reverse("activity_atom")
                                          + (f"?{query}" if query else ""))
    feed = ET.Element(f"{{{ATOM_NS}}}feed")
    el(feed, "id", page_url)
    title = "memoryui activity" + (f" ({query.replace('&', ', ')})" if query else "")
    el(feed, "title", title)
    newest = shown[0].when if shown else dt.datetime(2000, 1, 1, tzinfo=dt.UTC)
    el(feed, "updated", newest.isoformat())
    el(feed, "link", rel="self", type="application/atom+xml", href=self_url)
    el(feed, "link", rel="alternate", type="text/html", href=page_url)
    el(feed, "generator", "memoryui")
    for row in shown:
        info = row.info
        entry = el(feed, "entry")
        el(entry, "id", f"urn:uuid:{uuid.uuid5(uuid.NAMESPACE_OID, 'memoryui:' + info.sha)}")
        el(entry, "title", info.subject)
        el(entry, "updated", info.when.isoformat())
        author = el(entry, "author")
        el(author, "name", info.actor)
        el(author, "email", info.email)
        el(entry, "link", rel="alternate", type="text/html",
           href=request.build_absolute_uri(reverse("commit", args=[info.sha])))
        el(entry, "category", term=row.actor.kind)
        for tool in info.tools:
            el(entry, "category", term=f"tool:{tool}")
        lines = [info.body] if info.body else []
        lines += [f"{fc.status} {fc.path}" for fc in info.files]
        el(entry, "summary", "\n".join(lines) or info.subject, type="text")
    body = ET.tostring(feed, encoding="utf-8", xml_declaration=True)
    return HttpResponse(body, content_type="application/atom+xml; charset=utf-8")
