"""The UI's read model of the workspace: files grouped by scope and kind, as pages show them.

Plain value types, no Django and no I/O except `Item.budget`, which counts a file's lines
(cached per size and mtime) the first time a page shows its meter.
"""

from __future__ import annotations

import datetime as dt
import functools
from dataclasses import dataclass, field

from memoryui.store import Kind, Store
from memoryui.store.budgets import Budget, count_lines
from memoryui.store.layout import KIND_LABELS, Address, Layout


class Stamped:
    """A commit's id and time as pages show them: the short id, the aware datetime."""

    sha: str
    time: int

    @property
    def short(self) -> str:
        return self.sha[:8]

    @property
    def when(self) -> dt.datetime:
        return dt.datetime.fromtimestamp(self.time, tz=dt.UTC)


@dataclass(frozen=True)
class Change(Stamped):
    """The last commit that touched a file, as the UI shows it."""

    sha: str
    author: str
    actor: str  # "agent:ops-bot" | "user:alice" | "git:Name"
    time: int
    subject: str

    @property
    def actor_kind(self) -> str:
        return self.actor.split(":", 1)[0]

    @property
    def actor_name(self) -> str:
        return self.actor.split(":", 1)[-1]

    @classmethod
    def from_dict(cls, d: dict | None) -> Change | None:
        if not d:
            return None
        return cls(d.get("sha", ""), d.get("author", ""), d.get("actor", ""),
                   int(d.get("time", 0) or 0), d.get("subject", ""))


@dataclass(frozen=True)
class BudgetView:
    """A file's size against its framework's budget: what a `<meter>` and its label need."""

    state: str  # ok | warn | over
    ratio: float
    text: str  # "3.4 KB / 10 KB", "212 / 200 lines"
    label: str  # the rule, e.g. "Duragent: MEMORY.md 2-10 KB"

    @property
    def meter(self) -> str:
        """The `<meter value>`; clamped to 1 (the colour says "over")."""
        return f"{min(self.ratio, 1.0):.3f}"

    @property
    def percent(self) -> int:
        return round(self.ratio * 100)


def budget_view(budget: Budget, size: int, lines: int) -> BudgetView:
    parts = []
    if budget.max_lines:
        parts.append(f"{lines} / {budget.max_lines} lines")
    if budget.max_bytes:
        binary = budget.max_bytes % 1024 == 0
        parts.append(f"{fmt_bytes(size, binary=binary)} / "
                     f"{fmt_bytes(budget.max_bytes, binary=binary)}")
    return BudgetView(budget.state(size, lines), budget.ratio(size, lines), " · ".join(parts),
                      budget.label)


def fmt_bytes(n: int, *, binary: bool = False) -> str:
    """3.4 KB (decimal, Duragent's budgets) or 33.1 KiB (binary, zerostack's)."""
    unit, names = (1024, ("B", "KiB", "MiB")) if binary else (1000, ("B", "KB", "MB"))
    if n < unit:
        return f"{n} B"
    value = float(n)
    for name in names[1:]:
        value /= unit
        if value < unit or name == names[-1]:
            text = f"{value:.1f}".rstrip("0").rstrip(".") if value < 100 else f"{value:.0f}"
            return f"{text} {name}"
    return f"{n} B"  # pragma: no cover


_lines_cache: dict[tuple[str, str, int, float], int] = {}


def _cached_lines(store: Store, item: Item) -> int:
    key = (str(store.root), item.path, item.size, item.mtime)
    n = _lines_cache.get(key)
    if n is None:
        text = store.read(item.path) or ""
        n = _lines_cache[key] = count_lines(text)
        if len(_lines_cache) > 20_000:
            _lines_cache.clear()
    return n


_UNSET = object()


@dataclass(slots=True, eq=False)
class Item:
    """One file in the hierarchy (slots: a 200k-file workspace has 200k of them)."""

    path: str
    kind: Kind | None
    scope: str | None
    name: str | None
    size: int
    mtime: float
    last_raw: dict | None = None  # the catalogue's last commit; a Change when shown
    store: Store | None = field(default=None, repr=False)  # set when the kind has a budget
    _last: Change | None = field(default=None, repr=False)
    _budget: object = field(default=_UNSET, repr=False)

    @property
    def budget(self) -> BudgetView | None:
        """Size against the layout's budget (computed when a page first shows it)."""
        if self._budget is _UNSET:
            self._budget = self._compute_budget()
        return self._budget  # type: ignore[return-value]

    def _compute_budget(self) -> BudgetView | None:
        if self.store is None or self.kind is None:
            return None
        budget = self.store.layout.budgets.get(self.kind)
        if budget is None:
            return None
        lines = _cached_lines(self.store, self) if budget.max_lines else 0
        return budget_view(budget, self.size, lines)

    @property
    def last(self) -> Change | None:
        if self._last is None and self.last_raw:
            self._last = Change.from_dict(self.last_raw)
        return self._last

    @property
    def label(self) -> str:
        if self.kind in (Kind.MEMORY, Kind.GLOBAL):
            return "MEMORY.md"
        if self.kind == Kind.SCRATCHPAD:
            return "Scratchpad"
        return self.name or self.path

    @property
    def tail(self) -> str:
        """The file name (other files are listed by it)."""
        return self.path.rsplit("/", 1)[-1]

    @property
    def kind_label(self) -> str:
        return KIND_LABELS.get(self.kind, "Other file") if self.kind else "Other file"

    @property
    def kind_key(self) -> str:
        return self.kind.value if self.kind else "other"

    @property
    def size_text(self) -> str:
        return fmt_bytes(self.size)


@dataclass
class Month:
    key: str  # "2026-01"
    label: str  # "January 2026"
    days: list[Item]


def _month_label(key: str) -> str:
    try:
        return dt.date.fromisoformat(key + "-01").strftime("%B %Y")
    except ValueError:
        return key or "Undated"


@dataclass
class ScopeNode:
    """A scope (agent, DAG, project or workspace) with its files grouped by kind."""

    name: str
    memory: Item | None = None
    scratchpad: Item | None = None
    daily: list[Item] = field(default_factory=list)  # newest first
    notes: list[Item] = field(default_factory=list)
    directives: list[Item] = field(default_factory=list)
    other: list[Item] = field(default_factory=list)
    last_raw: dict | None = None
    files: int = 0
    size: int = 0

    @property
    def last(self) -> Change | None:
        return Change.from_dict(self.last_raw)

    @functools.cached_property
    def months(self) -> list[Month]:
        out: list[Month] = []
        for item in self.daily:
            key = (item.name or "")[:7]
            if not out or out[-1].key != key:
                out.append(Month(key, _month_label(key), []))
            out[-1].days.append(item)
        return out

    @property
    def size_text(self) -> str:
        return fmt_bytes(self.size)

    # What the overview's row shows (a `ScopeSummary` has the same three).
    @property
    def newest_daily(self) -> Item | None:
        return self.daily[0] if self.daily else None

    @property
    def daily_count(self) -> int:
        return len(self.daily)

    @property
    def note_count(self) -> int:
        return len(self.notes)

    def add(self, item: Item) -> None:
        """File one of this scope's items under its kind."""
        self.files += 1
        self.size += item.size
        last = item.last_raw
        if newer(last, self.last_raw):
            self.last_raw = last
        kind = item.kind
        if kind == Kind.MEMORY:
            self.memory = item
        elif kind == Kind.SCRATCHPAD:
            self.scratchpad = item
        elif kind == Kind.DAILY:
            self.daily.append(item)
        elif kind == Kind.NOTE:
            self.notes.append(item)
        elif kind == Kind.DIRECTIVE:
            self.directives.append(item)
        else:
            self.other.append(item)


@dataclass(slots=True)
class ScopeSummary:
    """A scope's overview row without its file lists (counted by the catalogue), read by
    the same template tag as a `ScopeNode`."""

    name: str
    memory: Item | None
    scratchpad: Item | None
    newest_daily: Item | None
    daily_count: int | None  # None: not counted yet (the catalogue's first fill runs)
    note_count: int | None
    files: int | None
    size: int | None
    last_raw: dict | None

    @property
    def last(self) -> Change | None:
        return Change.from_dict(self.last_raw)

    @property
    def size_text(self) -> str:
        return fmt_bytes(self.size or 0)


@dataclass
class Hierarchy:
    layout: Layout
    world: list[Item] = field(default_factory=list)
    global_memory: Item | None = None
    scopes: dict[str, ScopeSummary] = field(default_factory=dict)  # the overview's rows
    skills: list[Item] = field(default_factory=list)
    directives: list[Item] = field(default_factory=list)  # workspace-wide directives
    other: list[Item] = field(default_factory=list)  # files outside the layout and any scope
    file_count: int = 0
    last_raw: dict | None = None
    size: int = 0
    built_at: float = 0.0  # Unix time of the build
    scope_names: list[str] = field(default_factory=list)
    indexing: bool = False  # the catalogue's first fill runs: scopes by name, not counted

    @property
    def notice(self) -> str:
        """What a page must say while part of what it shows is not known yet."""
        if self.indexing:
            return ("memoryui is indexing this workspace for the first time: its "
                    f"{self.scope_term_plural} are listed, and what each holds appears here "
                    "in a few seconds.")
        return ""

    @property
    def last(self) -> Change | None:
        return Change.from_dict(self.last_raw)

    @property
    def files(self) -> int:
        return self.file_count

    @property
    def scope_term(self) -> str:
        return self.layout.scope_term

    @property
    def scope_term_plural(self) -> str:
        return self.layout.scope_term + "s"

    def scope_list(self) -> list[ScopeSummary]:
        return list(self.scopes.values())

    @property
    def kinds(self) -> frozenset[str]:
        """Kind values this layout has (templates test `"world" in h.kinds`, per row)."""
        return _kind_values(self.layout)

    def place(self, store: Store, scopes: dict[str, ScopeNode], item: Item) -> None:
        """File one item under its scope and kind (the one grouping rule of the UI)."""
        self.file_count += 1
        self.size += item.size
        last = item.last_raw
        if newer(last, self.last_raw):
            self.last_raw = last
        scope = item.scope if item.kind else store.layout.scope_of(item.path)
        if scope:
            node = scopes.get(scope)
            if node is None:
                node = scopes[scope] = ScopeNode(scope)
            node.add(item)
            return
        kind = item.kind
        if kind == Kind.WORLD:
            self.world.append(item)
        elif kind == Kind.GLOBAL:
            self.global_memory = item
        elif kind == Kind.SKILL:
            self.skills.append(item)
        elif kind == Kind.DIRECTIVE:
            self.directives.append(item)
        else:
            self.other.append(item)


@functools.lru_cache(maxsize=16)
def _kind_values(layout: Layout) -> frozenset[str]:
    return frozenset(k.value for k in layout.kinds())


def newer(a: dict | None, b: dict | None) -> bool:
    """Is change `a` newer than `b`? Commits in the same second are told apart by sha, so
    the answer never depends on the order files are looked at."""
    if not a:
        return False
    if not b:
        return True
    if a["time"] != b["time"]:
        return a["time"] > b["time"]
    return a["sha"] > b["sha"]


def new_item(store: Store, path: str, addr: Address | None, size: int, mtime: float,
             last: dict | None) -> Item:
    item = Item(path, addr.kind if addr else None, addr.scope if addr else None,
                addr.name if addr else None, size, mtime, last)
    if item.kind in store.layout.budgets:
        item.store = store
    return item


def item_for(store: Store, path: str, size: int, last: dict | None = None) -> Item:
    """An Item for one file (the file page: its budget is computed from the text read)."""
    addr = store.address_of(path)
    return Item(path, addr.kind if addr else None, addr.scope if addr else None,
                addr.name if addr else None, size, 0.0, last)
