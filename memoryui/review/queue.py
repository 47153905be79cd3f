"""The review queue: undecided (or decided) entries in a date range, newest first, paged.

Also the entries behind keys a lead posts (`resolve`) and an entry's neighbours in its log.
Decisions come from the `Ledger`; everything else from the files. Plain Python: no Django.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from memoryui.store import Kind, NotFound, Store

from .entries import Item, entries_of, items_of, parse_key
from .errors import ReviewError
from .ledger import Ledger
from .similar import already_known, group_ids, threshold
from .sources import daily_files

PAGE_SIZE = 50
DEFAULT_DAYS = 7
MAX_ENTRIES = 200  # entries in one promotion or dismissal
STATUSES = {"todo": "To review", "promoted": "Promoted", "dismissed": "Dismissed",
            "all": "All"}


@dataclass
class Filters:
    """What the lead asked to see (validated by the caller, e.g. a form)."""

    since: dt.date
    until: dt.date
    scope: str = ""
    q: str = ""
    status: str = "todo"
    page: int = 1

    @classmethod
    def default(cls, today: dt.date) -> Filters:
        """The last DEFAULT_DAYS days up to today, undecided entries, all scopes."""
        return cls(today - dt.timedelta(days=DEFAULT_DAYS - 1), today)

    def as_query(self, **over: object) -> dict[str, str]:
        """The filters as GET parameters (for links that keep them)."""
        values = {"from": self.since.isoformat(), "to": self.until.isoformat(),
                  "scope": self.scope, "q": self.q, "status": self.status,
                  "page": str(self.page)}
        values.update({k: str(v) for k, v in over.items()})
        if values.get("page") == "1":
            values.pop("page")
        return {k: v for k, v in values.items() if v}


@dataclass
class Queue:
    filters: Filters
    items: list[Item]  # this page, newest first
    total: int
    counts: list[tuple[str, int]]  # scope -> matching entries (ignoring the scope filter)
    scopes: list[str]
    has_daily: bool = True
    cards: int = 0  # entries shown as cards (a group of near-duplicates is one card)
    day_counts: dict[str, int] | None = None  # date -> matching entries (all pages)
    grouped: int = 0  # entries folded into a group card

    @property
    def pages(self) -> int:
        return max(1, -(-(self.cards or self.total) // PAGE_SIZE))

    @property
    def days(self) -> list[tuple[str, list[Item]]]:
        out: list[tuple[str, list[Item]]] = []
        for it in self.items:
            if not out or out[-1][0] != it.date:
                out.append((it.date, []))
            out[-1][1].append(it)
        return out

    @property
    def days_counted(self) -> list[tuple[str, int, list[Item]]]:
        """(date, matching entries that day on every page, this page's cards that day)."""
        counts = self.day_counts or {}
        return [(day, counts.get(day, len(items)), items) for day, items in self.days]

    @property
    def counted(self) -> int:
        return sum(n for _s, n in self.counts)


def _status_ok(item: Item, status: str) -> bool:
    return status == "all" or item.status == status


def _cards(store: Store, files: list, every: list[Item], shown: list[Item], cut: int
           ) -> list[Item]:
    """The shown (undecided) entries as cards: near-duplicates under their newest one.

    Groups are found among every entry of the range (cached while no log changes), so
    a decision only takes entries out of their group; at most MAX_ENTRIES per card.
    """
    every.sort(key=lambda it: it.sort_key, reverse=True)
    token = (str(store.root), tuple((f[0], f[3]) for f in files))
    ids = group_ids(token, every, lambda it: it.entry.text, cut)
    gid = {it.ref: g for it, g in zip(every, ids, strict=True)}
    groups: dict[int, list[Item]] = {}
    cards: list[Item] = []
    for it in shown:
        members = groups.setdefault(gid[it.ref], [])
        if len(members) >= MAX_ENTRIES:  # a card is acted on at once: start another
            members = groups[gid[it.ref]] = []
        if not members:
            cards.append(it)
        members.append(it)
        if len(members) > 1:
            members[0].group = members
    return cards


def build_queue(store: Store, ledger: Ledger, filters: Filters, *,
                details: bool = True) -> Queue:
    """The filtered queue, newest first, one page of it, with counts per scope and day.

    Undecided near-duplicates are one card (`item.group`: the newest entry first, see
    `similar`), and a shown undecided entry whose fact memory already holds has
    `item.known`; `details=False` skips both (only the counts are wanted). Clamps
    `filters.page` to the last page. Each shown item's `next_dom` is the item after it on
    the page (the "skip" link).
    """
    files = daily_files(store, filters.since, filters.until)
    states = ledger.decisions_between(filters.since.isoformat(), filters.until.isoformat())
    terms = filters.q.lower().split()
    counts: Counter[str] = Counter()
    items: list[Item] = []
    every: list[Item] = []  # every entry of the range: near-duplicates are found among them
    for path, scope, date, stamp in files:
        for it in items_of(store, path, scope, date, stamp):
            every.append(it)
            it.state = states.get(it.ref)
            if not _status_ok(it, filters.status):
                continue
            if terms:
                hay = it.entry.text.lower()
                if not all(t in hay for t in terms):
                    continue
            counts[scope] += 1
            if not filters.scope or scope == filters.scope:
                items.append(it)
    items.sort(key=lambda it: it.sort_key, reverse=True)
    total = len(items)
    day_counts = Counter(it.date for it in items)
    cut = threshold() if details and filters.status == "todo" else 0
    if cut:
        items = _cards(store, files, every, items, cut)
    filters.page = min(max(1, filters.page), max(1, -(-len(items) // PAGE_SIZE)))
    start = (filters.page - 1) * PAGE_SIZE
    page = items[start:start + PAGE_SIZE]
    for it, nxt in zip(page, page[1:], strict=False):
        it.next_dom = nxt.dom_id
    if cut:
        todo = [it for it in page if it.status == "todo"]
        for it, known in zip(todo, already_known(
                store, [(it.scope, it.entry.text) for it in todo], cut), strict=True):
            it.known = known
    return Queue(filters, page, total, sorted(counts.items()), store.scopes(),
                 store.layout.supports(Kind.DAILY), cards=len(items),
                 day_counts=dict(day_counts), grouped=total - len(items))


def undecided_counts(store: Store, ledger: Ledger, since: dt.date, until: dt.date
                     ) -> dict[str, int]:
    """Undecided entries per scope in since..until: the default queue's counts (what the
    overview shows), without building its items, groups or pages."""
    states = ledger.decisions_between(since.isoformat(), until.isoformat())
    counts: Counter[str] = Counter()
    for path, scope, _date, stamp in daily_files(store, since, until):
        for e in entries_of(store, path, stamp):
            state = states.get((path, e.id))
            if state is None or state.status == "todo":
                counts[scope] += 1
    return dict(counts)


def attach_states(ledger: Ledger, items: list[Item]) -> None:
    """Fill in each item's decision (one query)."""
    if not items:
        return
    found = ledger.decisions_of(it.ref for it in items)
    for it in items:
        it.state = found.get(it.ref)


def resolve(store: Store, ledger: Ledger, keys: Iterable[str], *,
            missing_ok: bool = False) -> list[Item]:
    """The entries behind keys, oldest first, with their decisions.

    An entry no longer in its log is a NotFound (the agent rewrote the log), unless
    `missing_ok`. At most MAX_ENTRIES keys.
    """
    keys = list(dict.fromkeys(k for k in keys if k))
    if len(keys) > MAX_ENTRIES:
        raise ReviewError(f"at most {MAX_ENTRIES} entries at once")
    items = []
    for key in keys:
        path, entry_id, scope, date = parse_key(store, key)
        found = next((it for it in items_of(store, path, scope, date)
                      if it.entry.id == entry_id), None)
        if found is None:
            if missing_ok:
                continue
            raise NotFound(f"entry {entry_id} is no longer in {path} (the log changed); "
                           "reload the queue")
        items.append(found)
    attach_states(ledger, items)
    items.sort(key=lambda it: it.sort_key)
    return items


def neighbours(store: Store, ledger: Ledger, key: str, n: int = 2
               ) -> tuple[list[Item], Item, list[Item]]:
    """Up to n entries before and after one entry in its daily log (context for a lead)."""
    path, entry_id, scope, date = parse_key(store, key)
    all_items = items_of(store, path, scope, date)
    idx = next((i for i, it in enumerate(all_items) if it.entry.id == entry_id), None)
    if idx is None:
        raise NotFound(f"entry {entry_id} is no longer in {path}")
    before = all_items[max(0, idx - n):idx]
    after = all_items[idx + 1:idx + n + 1]
    attach_states(ledger, [*before, all_items[idx], *after])
    return before, all_items[idx], after
