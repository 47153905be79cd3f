"""Daily entries as the queue sees them: keys, parsing (cached), and one `Item` per entry.

An entry is named by its key `<daily log path>#<entry id>` (the id is the store's stable
hash of the entry, see `memoryui.store.entries`). Logs are read through the store's walker
(`walk.read_nofollow`), so a symbolic link is never followed. Plain Python: no Django.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from urllib.parse import quote

from memoryui.rendering import render_markdown
from memoryui.store import Entry, InvalidName, Kind, Store, names, parse_daily, walk

from .decisions import Decision, PromotionRecord
from .errors import ReviewError

Stamp = tuple[float, int]  # (mtime, size) of a daily log: re-parse when it changes


def entry_key(path: str, entry_id: str) -> str:
    return f"{path}#{entry_id}"


def dom_id(key: str) -> str:
    """A short, stable, HTML-safe id for an entry (its key holds '/', '#' and '.')."""
    return "entry-" + hashlib.sha1(key.encode()).hexdigest()[:12]


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


# -- parsed daily logs, cached by file identity ------------------------------------------------

_parsed: OrderedDict[tuple[str, str], tuple[Stamp, list[Entry]]] = OrderedDict()
_parsed_lock = threading.Lock()
_PARSED_MAX = 8192


@lru_cache(maxsize=8192)
def _rendered(text: str) -> str:
    return render_markdown(text)


def clear_caches() -> None:
    """Forget parsed logs and rendered entries (benchmarks measure a cold start)."""
    with _parsed_lock:
        _parsed.clear()
    _rendered.cache_clear()


def stamp_of(store: Store, path: str) -> Stamp | None:
    """The (mtime, size) of a regular file with one name, reached without any symbolic
    link; else None."""
    try:
        if walk.link_in_path(store.root, path) is not None:
            return None
        st = os.lstat(store.root / path)
    except OSError:
        return None
    return (st.st_mtime, st.st_size) if walk.single(st) else None


def entries_of(store: Store, path: str, stamp: Stamp | None = None) -> list[Entry]:
    """The entries of a daily log; re-parsed only when its mtime or size changes.

    `stamp` is the file's (mtime, size) when the caller already has it (the queue's
    listing). A log that is (or goes through) a symbolic link has no entries.
    """
    if stamp is None:
        stamp = stamp_of(store, path)
        if stamp is None:
            return []
    key = (str(store.root), path)
    with _parsed_lock:
        hit = _parsed.get(key)
        if hit and hit[0] == stamp:
            _parsed.move_to_end(key)
            return hit[1]
    try:
        data = walk.read_nofollow(store.root, path)
    except (InvalidName, OSError):
        return []
    if data is None:
        return []
    entries = parse_daily(data.decode("utf-8", "replace"))
    with _parsed_lock:
        _parsed[key] = (stamp, entries)
        _parsed.move_to_end(key)
        while len(_parsed) > _PARSED_MAX:
            _parsed.popitem(last=False)
    return entries


@dataclass
class Item:
    """One daily entry in the queue, with the lead's decision about it (None: undecided)."""

    path: str
    scope: str
    date: str
    entry: Entry
    index: int  # position in its file
    time_key: str  # its time, or the last time above it in the file
    state: Decision | None = None
    next_dom: str = ""  # the entry after it on the page ("skip" jumps there)
    group: list[Item] | None = None  # its near-duplicates, newest (this one) first
    known: object = None  # similar.Known: where memory already states this fact
    paraphrase: object = None  # meaning.Match: a passage stating it in other words
    conflicts: list = field(default_factory=list)  # meaning.Match: passages it may contradict

    @property
    def key(self) -> str:
        return entry_key(self.path, self.entry.id)

    @property
    def ref(self) -> tuple[str, str]:
        return (self.path, self.entry.id)

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
    def promotion(self) -> PromotionRecord | None:
        return self.state.promotion if self.state else None

    @cached_property
    def html(self) -> str:
        return _rendered(self.entry.text)

    @property
    def sort_key(self) -> tuple:
        return (self.date, self.time_key, self.scope, self.index)


def items_of(store: Store, path: str, scope: str, date: str,
             stamp: Stamp | None = None) -> list[Item]:
    """Every entry of one daily log as an undecided Item, in file order."""
    out = []
    last = ""
    for i, e in enumerate(entries_of(store, path, stamp)):
        last = e.time or last
        out.append(Item(path, scope, date, e, i, last))
    return out
