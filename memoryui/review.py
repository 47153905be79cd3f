"""Review and promotion: the queue of daily entries, and what a lead decides about each.

The files stay the source of truth. A promotion is one commit on the target carrying a
`Promoted-From: <path>#<entry-id>` trailer per entry, so review state in the database
(ReviewState, Promotion) can be rebuilt from history (`rebuild`); only dismissals are
database-only. Undo is a new commit with a `Reverts: <sha>` trailer, never a rewrite.

Views stay thin: they translate HTTP into these calls. Text rules (where an entry goes,
heading demotion, SKILL.md front matter) live in `memoryui.store`; an undo after later
edits is a three-way revert with the editor's own merge (`git merge-file`).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import stat
import threading
from collections import Counter, OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import NamedTuple
from urllib.parse import quote

from django.db import IntegrityError, transaction
from django.utils import timezone

from memoryui.models import Promotion, ReviewState
from memoryui.rendering import render_markdown
from memoryui.store import (
    ABSENT,
    DELETE,
    Actor,
    Budget,
    Entry,
    InvalidName,
    Kind,
    NotFound,
    Store,
    StoreError,
    names,
    parse_daily,
    promote,
    skills,
)
from memoryui.store.layout import KIND_LABELS
from memoryui.store.merge import merge3
from memoryui.web.hierarchy import count_lines

PAGE_SIZE = 50
DEFAULT_DAYS = 7
MAX_ENTRIES = 200  # entries in one promotion or dismissal
ENUMERATE_DAYS = 62  # up to this range, stat candidate names instead of listing folders
STATUSES = {"todo": "To review", "promoted": "Promoted", "dismissed": "Dismissed",
            "all": "All"}
TARGET_KINDS = (Kind.MEMORY, Kind.GLOBAL, Kind.WORLD, Kind.SKILL)


class ReviewError(StoreError):
    """Bad review input: a clear 400 with a message for the lead."""


class AlreadyReviewed(ReviewError):
    code = "conflict"
    status = 409


class OverBudget(ReviewError):
    """The promotion would push the target past its framework budget, unconfirmed."""

    code = "over_budget"


class UndoConflict(ReviewError):
    code = "conflict"
    status = 409


def today() -> dt.date:
    return timezone.localdate()


def entry_key(path: str, entry_id: str) -> str:
    return f"{path}#{entry_id}"


def dom_id(key: str) -> str:
    """A short, stable, HTML-safe id for an entry (its key holds '/', '#' and '.')."""
    return "entry-" + hashlib.sha1(key.encode()).hexdigest()[:12]


@lru_cache(maxsize=8192)
def _rendered(text: str) -> str:
    return render_markdown(text)


# -- parsed daily logs, cached by file identity ------------------------------------------------

_parsed: OrderedDict[tuple[str, str], tuple[int, int, list[Entry]]] = OrderedDict()
_parsed_lock = threading.Lock()
_PARSED_MAX = 8192


def entries_of(store: Store, path: str, st: os.stat_result | None = None) -> list[Entry]:
    """The entries of a daily log; re-parsed only when its mtime or size changes.

    `st` is the file's lstat when the caller already has it (the queue's listing).
    """
    if st is None:
        try:
            st = os.stat(store.abspath(path), follow_symlinks=False)
        except (FileNotFoundError, NotADirectoryError):
            return []
    if not stat.S_ISREG(st.st_mode):
        return []
    key = (str(store.root), path)
    with _parsed_lock:
        hit = _parsed.get(key)
        if hit and hit[0] == st.st_mtime_ns and hit[1] == st.st_size:
            _parsed.move_to_end(key)
            return hit[2]
    entries = parse_daily(store.read(path) or "")
    with _parsed_lock:
        _parsed[key] = (st.st_mtime_ns, st.st_size, entries)
        _parsed.move_to_end(key)
        while len(_parsed) > _PARSED_MAX:
            _parsed.popitem(last=False)
    return entries


# -- queue ----------------------------------------------------------------------------------------

@dataclass
class Item:
    """One daily entry in the queue, with its review state (None: not reviewed)."""

    path: str
    scope: str
    date: str
    entry: Entry
    index: int  # position in its file
    time_key: str  # its time, or the last time above it in the file
    state: ReviewState | None = None
    next_dom: str = ""  # the entry after it on the page ("skip" jumps there)

    @property
    def key(self) -> str:
        return entry_key(self.path, self.entry.id)

    @cached_property
    def dom_id(self) -> str:
        return dom_id(self.key)

    @cached_property
    def q(self) -> str:
        """The key as a query value (templates build many links from it)."""
        return quote(self.key, safe="")

    @property
    def time(self) -> str | None:
        return self.entry.time

    @property
    def status(self) -> str:
        return self.state.status if self.state else "todo"

    @property
    def promotion(self) -> Promotion | None:
        return self.state.promotion if self.state else None

    @cached_property
    def html(self) -> str:
        return _rendered(self.entry.text)

    @property
    def sort_key(self) -> tuple:
        return (self.date, self.time_key, self.scope, self.index)


@dataclass
class Filters:
    since: dt.date
    until: dt.date
    scope: str = ""
    q: str = ""
    status: str = "todo"
    page: int = 1

    @classmethod
    def parse(cls, query: Mapping[str, str], now: dt.date | None = None) -> Filters:
        """Filters from a GET query; bad values raise ReviewError (400) naming the field."""
        now = now or today()
        until = _date(query.get("to"), "to") or now
        since = _date(query.get("from"), "from") or until - dt.timedelta(days=DEFAULT_DAYS - 1)
        if since > until:
            raise ReviewError(f"'from' ({since}) must not be after 'to' ({until})")
        scope = (query.get("scope") or "").strip()
        if scope:
            try:
                names.validate_scope(scope)
            except InvalidName as exc:
                raise ReviewError(f"scope: {exc}") from None
        status = (query.get("status") or "todo").strip()
        if status not in STATUSES:
            raise ReviewError(f"status must be one of {', '.join(STATUSES)}")
        q = (query.get("q") or "").strip()[:200]
        try:
            page = max(1, int(query.get("page") or 1))
        except ValueError:
            raise ReviewError("page must be a number") from None
        return cls(since, until, scope, q, status, page)

    def as_query(self, **over: object) -> dict[str, str]:
        """The filters as GET parameters (for links that keep them)."""
        values = {"from": self.since.isoformat(), "to": self.until.isoformat(),
                  "scope": self.scope, "q": self.q, "status": self.status,
                  "page": str(self.page)}
        values.update({k: str(v) for k, v in over.items()})
        if values.get("page") == "1":
            values.pop("page")
        return {k: v for k, v in values.items() if v}


def _date(value: str | None, what: str) -> dt.date | None:
    if not value:
        return None
    try:
        return dt.date.fromisoformat(value.strip())
    except ValueError:
        raise ReviewError(f"'{what}' must be a date like 2026-02-12, not {value!r}") from None


@dataclass
class Queue:
    filters: Filters
    items: list[Item]  # this page, newest first
    total: int
    counts: list[tuple[str, int]]  # scope -> matching entries (ignoring the scope filter)
    scopes: list[str]
    has_daily: bool = True

    @property
    def pages(self) -> int:
        return max(1, -(-self.total // PAGE_SIZE))

    @property
    def days(self) -> list[tuple[str, list[Item]]]:
        out: list[tuple[str, list[Item]]] = []
        for it in self.items:
            if not out or out[-1][0] != it.date:
                out.append((it.date, []))
            out[-1][1].append(it)
        return out

    @property
    def counted(self) -> int:
        return sum(n for _s, n in self.counts)


class DailyFile(NamedTuple):
    path: str
    scope: str
    date: str
    stat: os.stat_result


def daily_files(store: Store, since: dt.date, until: dt.date) -> list[DailyFile]:
    """Every daily log in the date range, with its lstat, found per scope folder.

    Not `store.tree()`: the tree stats all ~20k files of a large workspace (about 290 ms
    after any write). A short range stats just the candidate names (50 scopes x 7 days =
    350 calls); a long one lists each scope's daily folder once.
    """
    if not store.layout.supports(Kind.DAILY):
        return []
    days = (until - since).days + 1
    out = []
    for scope in store.scopes():
        sample = store.path_for(Kind.DAILY, scope, "2000-01-01")
        folder, _sep, leaf = sample.rpartition("/")
        prefix, suffix = leaf.split("2000-01-01", 1)
        try:
            base = os.fspath(store.abspath(folder))
        except InvalidName:
            continue
        if days <= ENUMERATE_DAYS:
            for i in range(days):
                date = (since + dt.timedelta(days=i)).isoformat()
                name = f"{prefix}{date}{suffix}"
                try:
                    st = os.stat(os.path.join(base, name), follow_symlinks=False)
                except OSError:
                    continue
                if stat.S_ISREG(st.st_mode):
                    out.append(DailyFile(f"{folder}/{name}", scope, date, st))
            continue
        lo, hi = since.isoformat(), until.isoformat()
        try:
            it = os.scandir(base)
        except OSError:
            continue
        with it:
            for e in it:
                name = e.name
                if not (name.startswith(prefix) and name.endswith(suffix)):
                    continue
                date = name[len(prefix):len(name) - len(suffix)]
                if lo <= date <= hi and names.DATE_RE.match(date) and \
                        e.is_file(follow_symlinks=False):
                    out.append(DailyFile(f"{folder}/{name}", scope, date,
                                         e.stat(follow_symlinks=False)))
    return out


def _items_of(store: Store, path: str, scope: str, date: str,
              st: os.stat_result | None = None) -> list[Item]:
    out = []
    last = ""
    for i, e in enumerate(entries_of(store, path, st)):
        last = e.time or last
        out.append(Item(path, scope, date, e, i, last))
    return out


def _status_ok(state: ReviewState | None, status: str) -> bool:
    if status == "all":
        return True
    if state is None:
        return status == "todo"
    return state.status == status


def build_queue(store: Store, filters: Filters) -> Queue:
    """The filtered queue, newest first, one page of it, with counts per scope."""
    files = daily_files(store, filters.since, filters.until)
    states = {
        (r.path, r.entry_id): r
        for r in ReviewState.objects.filter(
            date__gte=filters.since.isoformat(), date__lte=filters.until.isoformat()
        ).select_related("promotion")
    }
    terms = filters.q.lower().split()
    counts: Counter[str] = Counter()
    items: list[Item] = []
    for path, scope, date, st in files:
        for it in _items_of(store, path, scope, date, st):
            it.state = states.get((path, it.entry.id))
            if not _status_ok(it.state, filters.status):
                continue
            if terms:
                hay = it.entry.text.lower()
                if not all(t in hay for t in terms):
                    continue
            counts[scope] += 1
            if not filters.scope or scope == filters.scope:
                items.append(it)
    items.sort(key=lambda it: it.sort_key, reverse=True)
    filters.page = min(filters.page, max(1, -(-len(items) // PAGE_SIZE)))
    start = (filters.page - 1) * PAGE_SIZE
    return Queue(filters, items[start:start + PAGE_SIZE], len(items), sorted(counts.items()),
                 store.scopes(), store.layout.supports(Kind.DAILY))


# -- entries by key ---------------------------------------------------------------------------

def parse_key(store: Store, key: str) -> tuple[str, str, str, str]:
    """(path, entry id, scope, date) of an entry key; only daily logs are reviewable."""
    path, sep, entry_id = (key or "").strip().rpartition("#")
    if not sep or not path or not entry_id or len(entry_id) > 64:
        raise ReviewError(f"not an entry reference: {key[:120]!r} (expected path#entry-id)")
    try:
        names.validate_relpath(path)
    except InvalidName as exc:
        raise ReviewError(str(exc)) from None
    addr = store.address_of(path)
    if addr is None or addr.kind != Kind.DAILY or not addr.scope or not addr.name:
        raise ReviewError(f"{path} is not a daily log")
    return path, entry_id, addr.scope, addr.name


def resolve(store: Store, keys: Iterable[str], *, missing_ok: bool = False) -> list[Item]:
    """The entries behind keys, oldest first, with their review state."""
    keys = list(dict.fromkeys(k for k in keys if k))
    if len(keys) > MAX_ENTRIES:
        raise ReviewError(f"at most {MAX_ENTRIES} entries at once")
    items = []
    for key in keys:
        path, entry_id, scope, date = parse_key(store, key)
        found = next((it for it in _items_of(store, path, scope, date)
                      if it.entry.id == entry_id), None)
        if found is None:
            if missing_ok:
                continue
            raise NotFound(f"entry {entry_id} is no longer in {path} (the log changed); "
                           "reload the queue")
        items.append(found)
    _attach_states(items)
    items.sort(key=lambda it: it.sort_key)
    return items


def _attach_states(items: list[Item]) -> None:
    if not items:
        return
    rows = ReviewState.objects.filter(
        path__in={it.path for it in items}, entry_id__in={it.entry.id for it in items}
    ).select_related("promotion")
    by_key = {(r.path, r.entry_id): r for r in rows}
    for it in items:
        it.state = by_key.get((it.path, it.entry.id))


def neighbours(store: Store, key: str, n: int = 2) -> tuple[list[Item], Item, list[Item]]:
    """Up to n entries before and after one entry in its daily log (context for a lead)."""
    path, entry_id, scope, date = parse_key(store, key)
    all_items = _items_of(store, path, scope, date)
    idx = next((i for i, it in enumerate(all_items) if it.entry.id == entry_id), None)
    if idx is None:
        raise NotFound(f"entry {entry_id} is no longer in {path}")
    window = all_items[max(0, idx - n):idx + n + 1]
    _attach_states(window)
    cur = all_items[idx]
    return all_items[max(0, idx - n):idx], cur, all_items[idx + 1:idx + n + 1]


# -- targets ----------------------------------------------------------------------------------

@dataclass
class Target:
    kind: Kind
    path: str
    scope: str | None
    name: str | None
    text: str | None
    version: str | None

    @property
    def exists(self) -> bool:
        return self.text is not None

    @property
    def base(self) -> str:
        return self.version or ABSENT

    @property
    def label(self) -> str:
        if self.kind == Kind.MEMORY:
            return f"{self.scope}'s MEMORY.md"
        if self.kind == Kind.GLOBAL:
            return "global memory"
        return f"{KIND_LABELS[self.kind].lower()} {self.name}"


def target_kinds(store: Store) -> list[Kind]:
    return [k for k in TARGET_KINDS if store.layout.supports(k)]


def make_target(store: Store, kind: str, scope: str | None = None,
                name: str | None = None) -> Target:
    """Resolve a promotion target; names are checked by the layout's rules."""
    try:
        k = Kind(kind)
    except ValueError:
        raise ReviewError(f"unknown target {kind!r}; choose memory, global, world or skill"
                          ) from None
    if k not in TARGET_KINDS:
        raise ReviewError(f"entries cannot be promoted into a {k.value}")
    if not store.layout.supports(k):
        raise ReviewError(f"the {store.layout.title} layout has no {KIND_LABELS[k].lower()}")
    scope = (scope or "").strip() or None
    name = (name or "").strip() or None
    if k == Kind.MEMORY:
        if not scope:
            raise ReviewError("choose the scope whose MEMORY.md receives the entries")
        path = store.path_for(k, scope)
        name = None
    elif k == Kind.GLOBAL:
        path, scope, name = store.path_for(k), None, None
    elif k == Kind.WORLD:
        if not name:
            raise ReviewError("name the world topic (an existing one or a new one)")
        name = names.sanitize_world_topic(name)
        path, scope = store.path_for(k, name=name), None
    else:
        if not name:
            raise ReviewError("name the skill (an existing one or a new one)")
        bad = skills.name_problems(name)
        if bad:
            raise ReviewError("; ".join(bad))
        path, scope = store.path_for(k, name=name), None
    text, version = store.read_versioned(path)
    return Target(k, path, scope, name, text, version)


def existing_names(store: Store, kind: Kind) -> list[str]:
    """Names of the world topics or skills that exist (for the target choosers).

    One folder listing: `memory/world/*.md` files, or `skills/*/` folders with a SKILL.md.
    """
    if not store.layout.supports(kind):
        return []
    before, _x, after = store.path_for(kind, name="x").rpartition("x")
    folder, _sep, prefix = before.rpartition("/")
    try:
        base = store.abspath(folder) if folder else store.root
        entries = list(os.scandir(base))
    except (OSError, InvalidName):
        return []
    out = []
    for e in entries:
        if not e.name.startswith(prefix) or e.name.startswith("."):
            continue
        if "/" in after:  # the name is a folder: skills/<name>/SKILL.md
            if e.is_dir(follow_symlinks=False) and os.path.isfile(
                    os.path.join(e.path, after.lstrip("/"))):
                candidate = e.name[len(prefix):]
            else:
                continue
        elif e.name.endswith(after) and e.is_file(follow_symlinks=False):
            candidate = e.name[len(prefix):len(e.name) - len(after)]
        else:
            continue
        rel = f"{folder}/{prefix}{candidate}{after}" if folder else f"{prefix}{candidate}{after}"
        addr = store.address_of(rel)
        if addr is not None and addr.kind == kind and addr.name == candidate:
            out.append(candidate)
    return sorted(out)


# -- drafts and budgets -----------------------------------------------------------------------

@dataclass
class BudgetInfo:
    budget: Budget | None
    size: int
    lines: int
    old_size: int | None
    old_lines: int | None

    @property
    def ratio(self) -> float:
        return self.budget.ratio(self.size, self.lines) if self.budget else 0.0

    @property
    def state(self) -> str:
        return self.budget.state(self.size, self.lines) if self.budget else "ok"

    @property
    def old_ratio(self) -> float:
        if not self.budget or self.old_size is None:
            return 0.0
        return self.budget.ratio(self.old_size, self.old_lines or 0)

    @property
    def percent(self) -> int:
        return round(self.ratio * 100)

    @property
    def crosses(self) -> bool:
        """Over the budget after the promotion, and bigger than before: ask first."""
        return self.state == "over" and self.ratio > self.old_ratio

    @property
    def limits(self) -> str:
        if not self.budget:
            return ""
        parts = []
        if self.budget.max_bytes:
            parts.append(f"{self.size:,} / {self.budget.max_bytes:,} bytes")
        if self.budget.max_lines:
            parts.append(f"{self.lines:,} / {self.budget.max_lines:,} lines")
        return " · ".join(parts)


def budget_info(store: Store, kind: Kind, text: str, old_text: str | None) -> BudgetInfo:
    return BudgetInfo(store.layout.budget(kind), len(text.encode()), count_lines(text),
                      None if old_text is None else len(old_text.encode()),
                      None if old_text is None else count_lines(old_text))


@dataclass
class Draft:
    target: Target
    items: list[Item]
    text: str
    place: int | None
    headings: list[promote.Heading] = field(default_factory=list)
    description: str = ""


def _title(name: str) -> str:
    words = name.replace("_", " ").replace("-", " ").split()
    return " ".join(words)[:1].upper() + " ".join(words)[1:] if words else name


def make_draft(target: Target, items: list[Item], place: int | None = None,
               description: str = "") -> Draft:
    """The target's current text with the entries inserted where the lead chose."""
    texts = [it.entry.text for it in items]
    if target.text is None:
        if target.kind == Kind.SKILL:
            body = f"# {_title(target.name or '')}\n\n{promote.format_entries(texts, 1)}\n"
            text = skills.build(target.name or "", description.strip(), body)
        elif target.kind == Kind.WORLD:
            text = f"# {_title(target.name or '')}\n\n{promote.format_entries(texts, 1)}\n"
        else:
            text = promote.format_entries(texts, 0) + "\n"
        return Draft(target, items, text, None, [], description)
    found = promote.headings(target.text)
    if place is not None and not 0 <= place < len(found):
        place = None
    block = promote.format_entries(texts, promote.level_at(target.text, place))
    return Draft(target, items, promote.insert(target.text, block, place), place, found,
                 description)


# -- actions ----------------------------------------------------------------------------------

def describe(state: ReviewState) -> str:
    where = ""
    if state.status == ReviewState.PROMOTED and state.promotion is not None:
        p = state.promotion
        where = f" to {p.target_path} (commit {p.commit_sha[:8]})"
    when = timezone.localtime(state.reviewed_at).strftime("%Y-%m-%d %H:%M")
    return (f"the {state.date} entry {state.entry_id} of {state.scope} was already "
            f"{state.status}{where} by {state.reviewed_by} on {when}")


def _reserve(items: list[Item], user: str) -> list[tuple[ReviewState, tuple | None]]:
    """Mark entries promoted before writing, so two leads cannot promote one entry twice."""
    now = timezone.now()
    done: list[tuple[ReviewState, tuple | None]] = []
    try:
        with transaction.atomic():
            rows = {(r.path, r.entry_id): r for r in ReviewState.objects.select_for_update()
                    .filter(path__in={it.path for it in items},
                            entry_id__in={it.entry.id for it in items})
                    .select_related("promotion")}
            for it in items:
                row = rows.get((it.path, it.entry.id))
                if row is not None and row.status == ReviewState.PROMOTED:
                    raise AlreadyReviewed(describe(row) + "; undo that promotion first")
            for it in items:
                row = rows.get((it.path, it.entry.id))
                if row is None:
                    row = ReviewState.objects.create(
                        path=it.path, entry_id=it.entry.id, scope=it.scope, date=it.date,
                        status=ReviewState.PROMOTED, reviewed_by=user, reviewed_at=now)
                    done.append((row, None))
                else:  # a dismissed entry can still be promoted
                    prior = (row.status, row.reviewed_by, row.reviewed_at)
                    row.status, row.reviewed_by, row.reviewed_at = \
                        ReviewState.PROMOTED, user, now
                    row.save(update_fields=["status", "reviewed_by", "reviewed_at"])
                    done.append((row, prior))
    except IntegrityError:
        raise AlreadyReviewed("someone else is reviewing these entries right now; reload "
                              "the queue") from None
    return done


def _release(reserved: list[tuple[ReviewState, tuple | None]]) -> None:
    with transaction.atomic():
        for row, prior in reserved:
            if prior is None:
                row.delete()
            else:
                row.status, row.reviewed_by, row.reviewed_at = prior
                row.save(update_fields=["status", "reviewed_by", "reviewed_at"])


def _commit_of(store: Store, path: str, sha: str | None, trailer: tuple[str, str]) -> str:
    """The commit of a write: known at once, or found after a flush (deferred commits)."""
    if sha:
        return sha
    store.flush()
    for c in store.log(path, limit=20, with_files=False):
        if trailer[1] in c.trailers.get(trailer[0], []):
            return c.sha
    return ""


def default_message(target: Target, items: list[Item]) -> str:
    scopes = sorted({it.scope for it in items})
    n = len(items)
    what = "1 entry" if n == 1 else f"{n} entries"
    return f"Promote {what} from {', '.join(scopes)} into {target.path}"


def promote_entries(store: Store, *, user: str, keys: Iterable[str], target: Target,
                    text: str, base: str, message: str = "",
                    over_budget_ok: bool = False) -> Promotion:
    """Write the edited target in one commit with a Promoted-From trailer per entry."""
    items = resolve(store, keys)
    if not items:
        raise ReviewError("choose at least one entry to promote")
    if not base:
        raise ReviewError("the editor's base version is missing; reopen the editor")
    text = text.replace("\r\n", "\n")
    if not text.strip():
        raise ReviewError("the new text of the target is empty")
    if target.kind == Kind.SKILL:
        skills.validate(text, target.name)
    info = budget_info(store, target.kind, text, target.text)
    if info.crosses and not over_budget_ok:
        raise OverBudget(f"{target.path} would be {info.limits}, over its budget "
                         f"({info.budget.label if info.budget else ''}); confirm to save "
                         "anyway, or shorten it")
    reserved = _reserve(items, user)
    trailers = [promote.promoted_from(it.path, it.entry.id) for it in items]
    try:
        res = store.write(target.path, text, actor=Actor.user(user), tool="promote",
                          message=message.strip() or default_message(target, items),
                          expect=base, trailers=trailers)
        if not res.changed:
            raise ReviewError(f"{target.path} already has exactly this text; change it to "
                              "include the entries")
        sha = _commit_of(store, target.path, res.commit, trailers[0])
    except BaseException:
        _release(reserved)
        raise
    with transaction.atomic():
        promo = Promotion.objects.create(target_path=target.path, target_kind=target.kind.value,
                                         commit_sha=sha, created_by=user)
        ReviewState.objects.filter(pk__in=[row.pk for row, _p in reserved]).update(
            promotion=promo)
    return promo


def dismiss(store: Store, keys: Iterable[str], user: str) -> list[Item]:
    """Dismiss entries (database only); promoted ones must be undone first."""
    items = resolve(store, keys)
    if not items:
        raise ReviewError("choose at least one entry to dismiss")
    promoted = [it for it in items if it.status == ReviewState.PROMOTED]
    if promoted:
        raise AlreadyReviewed(describe(promoted[0].state) + "; undo the promotion first")
    now = timezone.now()
    try:
        with transaction.atomic():
            for it in items:
                if it.state is None:
                    it.state = ReviewState.objects.create(
                        path=it.path, entry_id=it.entry.id, scope=it.scope, date=it.date,
                        status=ReviewState.DISMISSED, reviewed_by=user, reviewed_at=now)
    except IntegrityError:
        raise AlreadyReviewed("someone else reviewed these entries just now; reload the "
                              "queue") from None
    return items


def reopen(store: Store, keys: Iterable[str]) -> list[Item]:
    """Put dismissed entries back into the queue."""
    items = resolve(store, keys)
    promoted = [it for it in items if it.status == ReviewState.PROMOTED]
    if promoted:
        raise AlreadyReviewed(describe(promoted[0].state) + "; undo the promotion instead")
    ReviewState.objects.filter(
        pk__in=[it.state.pk for it in items if it.state is not None]).delete()
    for it in items:
        it.state = None
    return items


def _revert(store: Store, before: str, after: str, current: str) -> str | None:
    """Take a change (before -> after) back out of `current` (git merge-file, as the
    editor's conflict view does); None when later edits touch the same lines."""
    if current == after:
        return before
    result = merge3(after, current, before, store.git.state_dir)
    if result is None or result.conflicts:
        return None
    return result.text


def undo(store: Store, promotion_id: int, user: str) -> Promotion:
    """Revert a promotion with a new commit; its entries become unreviewed again."""
    promo = Promotion.objects.filter(pk=promotion_id).first()
    if promo is None:
        raise NotFound(f"no promotion {promotion_id}")
    if promo.undone_at is not None:
        when = timezone.localtime(promo.undone_at).strftime("%Y-%m-%d %H:%M")
        raise AlreadyReviewed(f"this promotion was already undone by {promo.undone_by} on "
                              f"{when}")
    path, sha = promo.target_path, promo.commit_sha
    current, version = store.read_versioned(path)
    undo_sha = ""
    if current is not None:
        after = store.file_at(path, sha) if store.resolve(sha) else None
        if after is None:
            raise UndoConflict(f"commit {sha[:8]} of this promotion is not in the history")
        parent = store.resolve(f"{sha}^")
        before = store.file_at(path, parent) if parent else None
        new = _revert(store, before or "", after, current)
        if new is None:
            raise UndoConflict(
                f"{path} was changed since the promotion on the same lines, so it cannot be "
                f"reverted automatically; edit it by hand (promotion commit {sha[:8]})")
        trailers = [(promote.REVERTS, sha)]
        message = f"Undo promotion into {path}\n\nThis reverts the promotion commit {sha}."
        fn = (lambda _old: DELETE) if before is None and not new.strip() else (lambda _o: new)
        res = store.update(path, fn, actor=Actor.user(user), tool="promote-undo",
                           message=message, expect=version, trailers=trailers)
        if res.changed:
            undo_sha = _commit_of(store, path, res.commit, trailers[0])
    with transaction.atomic():
        ReviewState.objects.filter(promotion=promo).delete()
        promo.undo_commit_sha = undo_sha
        promo.undone_by = user
        promo.undone_at = timezone.now()
        promo.save(update_fields=["undo_commit_sha", "undone_by", "undone_at"])
    return promo


# -- rebuild from history ------------------------------------------------------------------------

@dataclass
class RebuildStats:
    promotions: int = 0
    undone: int = 0
    entries: int = 0
    dismissals_kept: int = 0
    skipped: list[str] = field(default_factory=list)


def rebuild(store: Store, *, dry_run: bool = False) -> RebuildStats:
    """Recreate promotions and promoted entries from `Promoted-From` trailers.

    History is read newest first, so an undo commit (`Reverts: <sha>`) is seen before the
    promotion it reverts; reverted promotions are kept as undone and leave their entries
    unreviewed. Dismissals live only in the database and are kept as they are.
    """
    commits = store.log(limit=10**9, with_files=True)
    reverts: dict[str, object] = {}
    found = []
    for c in commits:
        tr = c.trailers
        for value in tr.get(promote.REVERTS, []):
            full = value if len(value) == 40 else (store.resolve(value) or value)
            reverts.setdefault(full, c)
        sources = tr.get(promote.PROMOTED_FROM)
        if sources:
            found.append((c, sources, reverts.get(c.sha)))
    stats = RebuildStats()
    with transaction.atomic():
        if not dry_run:
            ReviewState.objects.filter(status=ReviewState.PROMOTED).delete()
            Promotion.objects.all().delete()
        seen: set[tuple[str, str]] = set()
        for c, sources, reverted in found:
            target = next((f.path for f in c.files if f.status != "D"), None)
            if target is None:
                stats.skipped.append(f"{c.short}: no target file")
                continue
            addr = store.address_of(target)
            who = c.actor.split(":", 1)[-1]
            promo = None
            if not dry_run:
                promo = Promotion.objects.create(
                    target_path=target, target_kind=addr.kind.value if addr else "",
                    commit_sha=c.sha, created_by=who, created_at=c.when)
            stats.promotions += 1
            if reverted is not None:
                stats.undone += 1
                if promo is not None:
                    promo.undo_commit_sha = reverted.sha
                    promo.undone_by = reverted.actor.split(":", 1)[-1]
                    promo.undone_at = reverted.when
                    promo.save(update_fields=["undo_commit_sha", "undone_by", "undone_at"])
                continue
            for value in sources:
                ref = promote.parse_promoted_from(value)
                src = store.address_of(ref[0]) if ref else None
                if ref is None or src is None or src.kind != Kind.DAILY:
                    stats.skipped.append(f"{c.short}: {value!r} is not a daily entry")
                    continue
                if ref in seen:
                    continue
                seen.add(ref)
                stats.entries += 1
                if not dry_run:
                    ReviewState.objects.filter(path=ref[0], entry_id=ref[1]).delete()
                    ReviewState.objects.create(
                        path=ref[0], entry_id=ref[1], scope=src.scope or "",
                        date=src.name or "", status=ReviewState.PROMOTED, promotion=promo,
                        reviewed_by=who, reviewed_at=c.when)
        stats.dismissals_kept = ReviewState.objects.filter(
            status=ReviewState.DISMISSED).count()
    return stats
