"""The workspace as one hierarchy (world, global, scopes, skills, directives) for the UI.

Built in one pass over the store's cached `tree()` (sizes and last commits of every file,
no git command per file) and cached for as long as the store hands back the same tree
object, so the overview, scope pages and every page's sidebar share one build.
Also home to the "where would an agent's view be cut" rule the file page and editor show.
"""

from __future__ import annotations

import datetime as dt
import functools
import logging
import os
import stat
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from memoryui.store import Kind, Store, StoreError
from memoryui.store.layout import KIND_LABELS, Budget, Layout
from memoryui.store.workspace import TREE_TTL

log = logging.getLogger("memoryui.web")

__all__ = [
    "BudgetView", "Change", "Cut", "Hierarchy", "Item", "Month", "ScopeNode", "agent_cut",
    "budget_view", "build", "count_lines", "fmt_bytes", "item_for", "sidebar",
]

# -- small value types ----------------------------------------------------------------


@dataclass(frozen=True)
class Change:
    """The last commit that touched a file, as the UI shows it."""

    sha: str
    author: str
    actor: str  # "agent:ops-bot" | "user:alice" | "git:Name"
    time: int
    subject: str

    @property
    def short(self) -> str:
        return self.sha[:8]

    @property
    def when(self) -> dt.datetime:
        return dt.datetime.fromtimestamp(self.time, tz=dt.UTC)

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


@dataclass
class Item:
    """One file in the hierarchy."""

    path: str
    kind: Kind | None
    scope: str | None
    name: str | None
    size: int
    mtime: float
    last_raw: dict | None = None  # FileInfo.last; turned into a Change when shown
    store: Store | None = field(default=None, repr=False)  # set when the kind has a budget
    _last: Change | None = field(default=None, repr=False)

    @functools.cached_property
    def budget(self) -> BudgetView | None:
        """Size against the layout's budget (computed when a page shows it)."""
        return _budget_for(self.store, self) if self.store is not None else None

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


@dataclass
class Hierarchy:
    layout: Layout
    world: list[Item] = field(default_factory=list)
    global_memory: Item | None = None
    scopes: dict[str, ScopeNode] = field(default_factory=dict)
    skills: list[Item] = field(default_factory=list)
    directives: list[Item] = field(default_factory=list)  # workspace-wide directives
    other: list[Item] = field(default_factory=list)  # files outside the layout and any scope
    by_path: dict[str, Item] = field(default_factory=dict)
    last_raw: dict | None = None
    size: int = 0
    built_at: float = 0.0  # Unix time of the build (the overview says when it is old)
    scope_names: list[str] = field(default_factory=list)

    @property
    def last(self) -> Change | None:
        return Change.from_dict(self.last_raw)

    @property
    def files(self) -> int:
        return len(self.by_path)

    @property
    def scope_term(self) -> str:
        return self.layout.scope_term

    @property
    def scope_term_plural(self) -> str:
        return self.layout.scope_term + "s"

    def scope_list(self) -> list[ScopeNode]:
        return list(self.scopes.values())

    @property
    def kinds(self) -> set[str]:
        """Kind values this layout has (templates test `"world" in h.kinds`)."""
        return {k.value for k in self.layout.kinds()}


# -- building ---------------------------------------------------------------------------

_lines_cache: dict[tuple[str, str, int, float], int] = {}

# Workspaces with more files than this are regrouped in the background (the overview's
# grouping of 20,000 files costs about 100 ms, a full walk more): a page is served from the
# last build while a thread rebuilds it after a new commit, or TREE_TTL seconds after the
# last build (when the store re-walks for changes made outside memoryui). Smaller workspaces
# rebuild at once, so what they show is exact.
BACKGROUND_ABOVE = 2_000  # files
MAX_STALE = 2 * TREE_TTL + 30  # seconds; older than this, a request rebuilds and waits


@dataclass
class _Built:
    tree: object
    h: Hierarchy
    head: str | None
    at: float  # time.monotonic() of the build
    refreshing: bool = False


_built: dict[str, _Built] = {}
_built_lock = threading.Lock()


def build(store: Store) -> Hierarchy:
    """The whole hierarchy from the store's cached tree (rebuilt only when the tree is).

    For the overview, which needs every scope's counts; pages about one scope or file use
    `scope_node` and `shared`, which list only their own folders. On a large workspace a
    change is picked up by a background rebuild (see BACKGROUND_ABOVE).
    """
    key = str(store.root)
    prev = _built.get(key)
    now = time.monotonic()
    if prev is not None and prev.h.layout is store.layout:
        if prev.h.files > BACKGROUND_ABOVE and now - prev.at < MAX_STALE:
            if store.head() != prev.head or now - prev.at > TREE_TTL:
                _refresh_in_background(store, prev)
            return prev.h
        if store.tree() is prev.tree:
            return prev.h
    return _rebuild(store)


def _rebuild(store: Store) -> Hierarchy:
    started = time.monotonic()
    head = store.head()
    tree = store.tree()
    h = Hierarchy(store.layout, built_at=time.time())
    scopes = {name: ScopeNode(name) for name in store.scopes()}  # empty folders show too
    for path, info in tree.items():
        _place(store, h, scopes, _new_item(store, path, info.address, info.size, info.mtime,
                                           info.last))
    _finish(h, scopes)
    with _built_lock:
        _built[str(store.root)] = _Built(tree, h, head, started)
    return h


def _refresh_in_background(store: Store, prev: _Built) -> None:
    with _built_lock:
        if prev.refreshing:
            return
        prev.refreshing = True

    def work() -> None:
        try:
            _rebuild(store)
        except Exception:  # noqa: BLE001 - the next request rebuilds at once instead
            log.exception("background hierarchy rebuild failed")
            with _built_lock:
                _built.pop(str(store.root), None)

    threading.Thread(target=work, name="memoryui-hierarchy", daemon=True).start()


def _new_item(store: Store, path: str, addr: object, size: int, mtime: float,
              last: dict | None) -> Item:
    item = Item(path, addr.kind if addr else None, addr.scope if addr else None,
                addr.name if addr else None, size, mtime, last)
    if item.kind in store.layout.budgets:
        item.store = store
    return item


def _place(store: Store, h: Hierarchy, scopes: dict[str, ScopeNode], item: Item) -> None:
    """File one item under its scope and kind (the one grouping rule of the UI)."""
    h.by_path[item.path] = item
    h.size += item.size
    last = item.last_raw
    if last and (h.last_raw is None or last["time"] > h.last_raw["time"]):
        h.last_raw = last
    scope = item.scope if item.kind else store.layout.scope_of(item.path)
    if scope:
        node = scopes.get(scope)
        if node is None:
            node = scopes[scope] = ScopeNode(scope)
        _add_to_scope(node, item)
        return
    kind = item.kind
    if kind == Kind.WORLD:
        h.world.append(item)
    elif kind == Kind.GLOBAL:
        h.global_memory = item
    elif kind == Kind.SKILL:
        h.skills.append(item)
    elif kind == Kind.DIRECTIVE:
        h.directives.append(item)
    else:
        h.other.append(item)


def _add_to_scope(node: ScopeNode, item: Item) -> None:
    node.files += 1
    node.size += item.size
    last = item.last_raw
    if last and (node.last_raw is None or last["time"] > node.last_raw["time"]):
        node.last_raw = last
    kind = item.kind
    if kind == Kind.MEMORY:
        node.memory = item
    elif kind == Kind.SCRATCHPAD:
        node.scratchpad = item
    elif kind == Kind.DAILY:
        node.daily.append(item)
    elif kind == Kind.NOTE:
        node.notes.append(item)
    elif kind == Kind.DIRECTIVE:
        node.directives.append(item)
    else:
        node.other.append(item)


def _finish(h: Hierarchy, scopes: dict[str, ScopeNode]) -> None:
    for node in scopes.values():
        node.daily.sort(key=lambda i: i.name or "", reverse=True)
    h.scopes = dict(sorted(scopes.items()))
    h.scope_names = list(h.scopes)


def _listing(store: Store, prefix: str) -> list[tuple[str, int, float]]:
    """(path, size, mtime) of the files below one folder: a walk of that folder only.

    Same rules as the store's own walk: hidden names and symbolic links are skipped.
    """
    out: list[tuple[str, int, float]] = []
    folder = prefix.strip("/")
    try:
        base = store.abspath(folder) if folder else store.root
    except StoreError:
        return out
    _scan(str(base), folder + "/" if folder else "", out)
    out.sort()
    return out


def _scan(base: str, rel: str, out: list[tuple[str, int, float]]) -> None:
    try:
        it = os.scandir(base)
    except OSError:
        return
    with it:
        for e in it:
            if e.name.startswith("."):
                continue
            if e.is_dir(follow_symlinks=False):
                _scan(e.path, rel + e.name + "/", out)
            elif e.is_file(follow_symlinks=False):
                try:
                    st = e.stat(follow_symlinks=False)
                except OSError:
                    continue
                out.append((rel + e.name, st.st_size, st.st_mtime))


_addresses: dict[tuple[str, str], object] = {}


def _address(store: Store, path: str) -> object:
    """`store.address_of`, remembered: a path's address never changes within a layout."""
    key = (store.layout.key, path)
    try:
        return _addresses[key]
    except KeyError:
        pass
    if len(_addresses) > 100_000:
        _addresses.clear()
    addr = _addresses[key] = store.address_of(path)
    return addr


def scope_node(store: Store, scope: str) -> ScopeNode | None:
    """One scope's files, sizes and last changes, listing only its own folder.

    None when the scope has no folder. Always current: nothing here is cached.
    """
    prefix = store.layout.scope_prefix(scope)
    if not store.is_dir(prefix.rstrip("/")):
        return None
    last = store.last_changes()
    node = ScopeNode(scope)
    for path, size, mtime in _listing(store, prefix):
        _add_to_scope(node, _new_item(store, path, _address(store, path), size, mtime,
                                      last.get(path)))
    node.daily.sort(key=lambda i: i.name or "", reverse=True)
    return node


def shared(store: Store) -> Hierarchy:
    """World topics, global memory, skills and directives outside any scope, plus the scope
    names: what every page's sidebar shows, from the few folders that hold them."""
    h = Hierarchy(store.layout)
    lay = store.layout
    last = store.last_changes()
    scopes: dict[str, ScopeNode] = {}
    seen: set[str] = set()
    for pat in lay.patterns:
        if pat.scoped:
            continue
        static = pat.template.split("{", 1)[0]
        if "{" not in pat.template:  # one fixed file, e.g. memory/MEMORY.md
            entries = []
            try:
                st = os.stat(store.abspath(pat.template), follow_symlinks=False)
                if stat.S_ISREG(st.st_mode):
                    entries = [(pat.template, st.st_size, st.st_mtime)]
            except (OSError, StoreError):
                pass
        else:
            folder = static.rstrip("/")
            entries = _listing(store, folder) if folder else []
        for path, size, mtime in entries:
            if path in seen:
                continue
            addr = _address(store, path)
            if addr is None or addr.kind != pat.kind or addr.scope is not None:
                continue
            seen.add(path)
            _place(store, h, scopes, _new_item(store, path, addr, size, mtime, last.get(path)))
    h.scope_names = store.scopes()
    return h


def item_for(store: Store, path: str, size: int, last: dict | None = None) -> Item:
    """An Item for one file (the file page: its budget is computed from the text read)."""
    addr = store.address_of(path)
    return Item(path, addr.kind if addr else None, addr.scope if addr else None,
                addr.name if addr else None, size, 0.0, last)


def _budget_for(store: Store, item: Item) -> BudgetView | None:
    if item.kind is None:
        return None
    budget = store.layout.budgets.get(item.kind)
    if budget is None:
        return None
    lines = 0
    if budget.max_lines:
        lines = _cached_lines(store, item)
    return budget_view(budget, item.size, lines)


def _cached_lines(store: Store, item: Item) -> int:
    key = (str(store.root), item.path, item.size, item.mtime)
    n = _lines_cache.get(key)
    if n is None:
        text = store.read(item.path) or ""
        n = _lines_cache[key] = count_lines(text)
        if len(_lines_cache) > 20_000:
            _lines_cache.clear()
    return n


def count_lines(text: str) -> int:
    """Lines as an editor counts them (a final newline does not start a new line)."""
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def budget_view(budget: Budget, size: int, lines: int) -> BudgetView:
    parts = []
    if budget.max_lines:
        parts.append(f"{lines} / {budget.max_lines} lines")
    if budget.max_bytes:
        parts.append(f"{fmt_bytes(size, binary=_binary(budget.max_bytes))} / "
                     f"{fmt_bytes(budget.max_bytes, binary=_binary(budget.max_bytes))}")
    return BudgetView(budget.state(size, lines), budget.ratio(size, lines), " · ".join(parts),
                      budget.label)


def _binary(limit: int) -> bool:
    return limit % 1024 == 0


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


def _month_label(key: str) -> str:
    try:
        return dt.date.fromisoformat(key + "-01").strftime("%B %Y")
    except ValueError:
        return key or "Undated"


# -- where an agent's view of a file is cut --------------------------------------------------

DAGU_MAX_LINES = 200  # Dagu truncateToMaxLines: strings.Split(content, "\n"), > 200 elements
ZEROSTACK_MAX_BYTES = 32 * 1024  # zerostack MAX_INJECT_BYTES (memory_read, injection, search)
ZEROSTACK_SKIP_BYTES = 128 * 1024  # zerostack skips injecting a MEMORY.md above this size
INDEX_MAX_LINES, INDEX_MAX_BYTES = 200, 25_000  # Claude-style index budget (jutul: advisory)


@dataclass(frozen=True)
class Cut:
    """Where an agent's view of a file ends.

    `offset` is the character index of the cut in the text; `hard` is False for an
    advisory budget line (the framework still loads everything).
    """

    offset: int
    kept_lines: int  # complete lines before the cut
    hidden_lines: int  # lines (or the part of one) below it
    hidden_bytes: int
    partial: bool  # the cut falls inside a line
    hard: bool
    rule: str
    notice: str = ""  # what the framework appends where it cuts
    skipped: bool = False  # the framework drops the whole file

    @property
    def line(self) -> int:
        """The line after which the marker is drawn (1-based)."""
        return self.kept_lines + (1 if self.partial else 0)


def agent_cut(layout: Layout | str, kind: Kind | str | None, text: str) -> Cut | None:
    """The cut an agent's framework applies to this file in this layout, if any."""
    key = layout if isinstance(layout, str) else layout.key
    if kind is None:
        return None
    kind = Kind(kind)
    if key == "dagu" and kind in (Kind.GLOBAL, Kind.MEMORY):
        parts = text.split("\n")
        if len(parts) <= DAGU_MAX_LINES:
            return None
        offset = len("\n".join(parts[:DAGU_MAX_LINES]))
        return _make_cut(text, offset, hard=True,
                         rule="Dagu injects and reads the first 200 lines of MEMORY.md",
                         notice="[... truncated at 200 lines. Use read tool for full file: …]")
    if key == "zerostack" and kind in (Kind.GLOBAL, Kind.DAILY, Kind.NOTE, Kind.SCRATCHPAD):
        data = text.encode()
        if len(data) <= ZEROSTACK_MAX_BYTES:
            return None
        offset = len(data[:ZEROSTACK_MAX_BYTES].decode("utf-8", "ignore"))
        cut = _make_cut(text, offset, hard=True,
                        rule="zerostack reads and injects the first 32 KiB",
                        notice="…[memory truncated]")
        if kind == Kind.GLOBAL and len(data) > ZEROSTACK_SKIP_BYTES:
            cut = Cut(**{**cut.__dict__, "skipped": True,
                         "rule": "zerostack does not inject a MEMORY.md over 128 KiB at all; "
                                 "memory_read returns its first 32 KiB"})
        return cut
    if key == "jutul" and kind == Kind.MEMORY:
        parts = text.split("\n")
        offset = None
        if count_lines(text) > INDEX_MAX_LINES:
            offset = len("\n".join(parts[:INDEX_MAX_LINES]))
        data = text.encode()
        if len(data) > INDEX_MAX_BYTES:
            by_bytes = len(data[:INDEX_MAX_BYTES].decode("utf-8", "ignore"))
            offset = by_bytes if offset is None else min(offset, by_bytes)
        if offset is None:
            return None
        return _make_cut(text, offset, hard=False,
                         rule="jutul loads the whole index, but an index should stay within "
                              "200 lines / 25 KB (Claude Code cuts its MEMORY.md there)")
    return None


def _make_cut(text: str, offset: int, *, hard: bool, rule: str, notice: str = "") -> Cut:
    kept, hidden = text[:offset], text[offset:]
    at_line_start = not kept or kept.endswith("\n")
    partial = not at_line_start and bool(hidden) and not hidden.startswith("\n")
    kept_lines = kept.count("\n") + (0 if at_line_start or partial else 1)
    # A cut just before a newline leaves that newline as the end of the last kept line.
    rest = hidden[1:] if not at_line_start and hidden.startswith("\n") else hidden
    hidden_lines = count_lines(rest)
    return Cut(offset, kept_lines, hidden_lines, len(hidden.encode()), partial, hard, rule,
               notice)


# -- the sidebar ----------------------------------------------------------------------


def sidebar(store: Store, current_path: str | None = None, scope: str | None = None,
            node: ScopeNode | None = None) -> dict[str, Any]:
    """Context for `{% include "web/_sidebar.html" %}`; any page can add it.

    `current_path` marks the open file (and expands its scope); `scope` expands a scope
    without a file (scope pages, scope history); pass `node` when the page already has it.
    Lists only the shared folders and the current scope's folder, never the whole tree.
    """
    h = shared(store)
    current_scope = scope
    current_kind = None
    current_month = None
    if current_path:
        try:
            addr = store.address_of(current_path)
        except StoreError:
            addr = None
        current_kind = addr.kind.value if addr else None
        current_scope = current_scope or (addr.scope if addr else None) or \
            store.layout.scope_of(current_path)
        if addr and addr.kind == Kind.DAILY:
            current_month = (addr.name or "")[:7]
    if current_scope and (node is None or node.name != current_scope):
        try:
            node = scope_node(store, current_scope)
        except StoreError:
            node = None
    if node is not None and current_month is None and node.daily:
        current_month = (node.daily[0].name or "")[:7]
    return {"sidebar": {
        "h": h,
        "current_path": current_path or "",
        "current_scope": current_scope or "",
        "current_kind": current_kind or "",
        "current_month": current_month or "",
        "scope": node,
    }}
