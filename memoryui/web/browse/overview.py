"""The overview's two long tables (scopes, world topics): filter by name, sort, page.

Hundreds of agents fit one page only when they can be narrowed. Everything comes from the
hierarchy read model (name, size, last change) plus one review count for the whole
workspace, never a file read per row; sorting 500 rows in Python costs well under a
millisecond. Query strings are read by `OverviewQuery` (bad values fall back to defaults).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, TypeVar
from urllib.parse import urlencode

from django.core.paginator import Page, Paginator
from django.utils import timezone

from memoryui import review
from memoryui.caches import REVIEW_COUNTS
from memoryui.review.state import LEDGER
from memoryui.store import Kind, Store

if TYPE_CHECKING:
    from memoryui.web.hierarchy.model import Item, ScopeSummary

PER_PAGE = 50
SCOPE_SORTS = ("name", "last", "size", "review")
WORLD_SORTS = ("name", "last", "size")
# Which way a column sorts when first clicked: names A-Z, numbers and times biggest first.
FIRST_DIRECTION = {"name": "", "last": "-", "size": "-", "review": "-"}


class _Named(Protocol):
    @property
    def name(self) -> str | None: ...


R = TypeVar("R", bound=_Named)  # a table's row: a scope's summary or a world topic


def _last_time(row: object) -> float:
    return float((getattr(row, "last_raw", None) or {}).get("time", 0) or 0)


@dataclass
class Listing:
    """One table's page: its rows and everything its links and pager need."""

    prefix: str  # "" for scopes, "w" for world topics: the query parameters' prefix
    shown: Page  # this page of the rows matching the filter
    rows: list  # its rows, as the table draws them
    count_all: int  # rows before filtering
    q: str
    sort: str  # "size" ascending, "-size" descending
    default_sort: str
    query: dict[str, str] = field(default_factory=dict)  # both tables' current parameters

    @property
    def key(self) -> str:
        return self.sort.lstrip("-")

    @property
    def total(self) -> int:
        return self.shown.paginator.count

    @property
    def page(self) -> int:
        return self.shown.number

    @property
    def pages(self) -> int:
        return self.shown.paginator.num_pages

    @property
    def first(self) -> int:
        return self.shown.start_index()

    @property
    def last(self) -> int:
        return self.shown.end_index()

    def link(self, **over: object) -> str:
        """A query string with this table's parameters changed (defaults left out)."""
        data = dict(self.query)
        for name, value in over.items():
            data[self.prefix + name] = str(value)
        defaults = {"page": "1", "wpage": "1", "q": "", "wq": "",
                    "sort": SCOPE_DEFAULT, "wsort": WORLD_DEFAULT}
        kept = {k: v for k, v in data.items() if v and defaults.get(k) != v}
        return "?" + urlencode(kept) if kept else "?"

    @property
    def clear_link(self) -> str:
        return self.link(q="", page=1)

    @property
    def prev_link(self) -> str | None:
        return self.link(page=self.shown.previous_page_number()) \
            if self.shown.has_previous() else None

    @property
    def next_link(self) -> str | None:
        return self.link(page=self.shown.next_page_number()) if self.shown.has_next() else None

    def header(self, key: str) -> dict[str, str]:
        """A column header's sort link, arrow and aria-sort value."""
        if self.key == key:
            flipped = key if self.sort.startswith("-") else "-" + key
            state = "descending" if self.sort.startswith("-") else "ascending"
            arrow = "↓" if self.sort.startswith("-") else "↑"
        else:
            flipped, state, arrow = FIRST_DIRECTION[key] + key, "none", ""
        return {"href": self.link(sort=flipped, page=1), "aria": state, "arrow": arrow}

    @property
    def headers(self) -> dict[str, dict[str, str]]:
        keys = SCOPE_SORTS if self.prefix == "" else WORLD_SORTS
        return {k: self.header(k) for k in keys}


SCOPE_DEFAULT = "name"
WORLD_DEFAULT = "-last"


def listing(rows: Sequence[R], *, prefix: str, q: str, sort: str, page: int, default_sort: str,
            keys: dict[str, Callable[[R], str | float]], query: dict[str, str]) -> Listing:
    """Filter `rows` by a case-insensitive substring of their name, sort, cut one page."""
    needle = q.casefold()
    found = [r for r in rows if needle in (r.name or "").casefold()] if needle else list(rows)
    key = keys[sort.lstrip("-")]
    found.sort(key=lambda r: (r.name or "").casefold())  # ties keep name order
    found.sort(key=key, reverse=sort.startswith("-"))
    paginator = Paginator(found, PER_PAGE)  # a page out of range shows the nearest one
    shown = paginator.page(min(max(1, page), paginator.num_pages))
    return Listing(prefix, shown, list(shown), len(rows), q, sort, default_sort, query)


def review_counts(store: Store) -> dict[str, int]:
    """Undecided daily-log entries per scope over the review queue's default window.

    The default queue's counts (`review.undecided_counts`), kept 10 s while HEAD does not move (`caches.REVIEW_COUNTS`):
    the overview is opened often and the queue reads the week's logs (parsed ones are
    cached by mtime).
    """
    if not store.layout.supports(Kind.DAILY):
        return {}
    key, head = str(store.root), store.head()
    cached = REVIEW_COUNTS.get(key)
    if cached and cached[0] == head:
        return cached[1]
    filters = review.Filters.default(timezone.localdate())
    counts = review.undecided_counts(store, LEDGER, filters.since, filters.until)
    REVIEW_COUNTS.put(key, (head, counts))
    return counts


def scope_listing(scopes: Sequence[ScopeSummary], counts: dict[str, int], *, q: str,
                  sort: str, page: int, query: dict[str, str]) -> Listing:
    keys: dict[str, Callable[[ScopeSummary], str | float]] = {
        "name": lambda s: (s.name or "").casefold(), "last": _last_time,
        "size": lambda s: s.size or 0,  # (None: a first look)
        "review": lambda s: counts.get(s.name, 0)}
    lst = listing(scopes, prefix="", q=q, sort=sort, page=page, default_sort=SCOPE_DEFAULT,
                  keys=keys, query=query)
    lst.rows = [ScopeRow(s, counts.get(s.name, 0)) for s in lst.rows]
    return lst


@dataclass
class ScopeRow:
    """A scope's row: the hierarchy's node (shared, never changed) and its review count."""

    node: ScopeSummary
    review: int


def world_listing(items: Sequence[Item], *, q: str, sort: str, page: int,
                  query: dict[str, str]) -> Listing:
    keys: dict[str, Callable[[Item], str | float]] = {
        "name": lambda it: (it.name or "").casefold(), "last": _last_time,
        "size": lambda it: it.size}
    return listing(items, prefix="w", q=q, sort=sort, page=page, default_sort=WORLD_DEFAULT,
                   keys=keys, query=query)
