"""The activity feed (every commit, filtered by actor, scope, kind and dates); its Atom is
`feed.py`.

One `git log` per page. Filters are read by `ActivityForm`; their messages are shown next
to each field on the page and in the results area (the part htmx swaps).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import urlencode

from django.contrib.auth import get_user_model
from django.http import HttpRequest, HttpResponse
from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe
from django.views.decorators.http import require_GET

from memoryui.api.files import visible
from memoryui.models import Token
from memoryui.roles import VIEWER, require_role
from memoryui.store import Store
from memoryui.web import hierarchy
from memoryui.web.common import fragment_or_page, web_errors
from memoryui.workspace import get_store

from .forms import WHO_ACTOR, ActivityForm
from .rows import CommitRow, by_day, rows

ACTIVITY_PAGE = 50


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


def activity_page(request: HttpRequest, limit: int, token: Token | None = None
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
    f, shown, has_more, kinds = activity_page(request, ACTIVITY_PAGE)
    ctx = {
        "filters": f, "form": f.form, "rows": shown, "groups": by_day(shown), "kinds": kinds,
        # an offset cursor, not Django's Paginator: that needs the count of every commit
        # (a walk of the whole log); a page reads one commit past its end instead
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
