"""Full-text search over every file of the workspace (SQLite FTS5; Postgres when configured).

Why an index at all: ripgrep needs 110-150 ms to scan a 20k-file workspace, and it can neither
rank nor say which heading matched. The index is a cache of the files (the files stay the truth):
`rebuild()` recreates it in one transaction, `update(paths)` is a Store listener that keeps it
current on every memoryui write, restore and pending commit/discard, and `catch_up()` notices
files changed outside memoryui by comparing each file's size and mtime with what was indexed
(throttled, so searches stay fast).

Ranking: BM25 with field weights (file name 10, headings 5, body 1, folder path 0.5). Scores
within about 6 % of each other count as equal and the more recent file wins (recency is a
tie-breaker, not a boost). Rows are numbered in order of change, so "more recent" is the rowid
and ranking never reads a stored column. Scope, kind and date filters are tokens in a hidden
`tags` column joined into the MATCH, so a filtered search costs no more than an open one.
Query syntax (a small, safe layer over FTS5): words (all must match), "exact phrases",
prefix*, `OR`, `NOT` / -word, parentheses, and `name:`, `title:`, `body:` or `path:` before a
term.
Snippets come back as text with \\x02 / \\x03 around matches, so HTML escaping happens once,
after the text is final (`Hit.snippet_html`).
"""

from __future__ import annotations

import atexit
import datetime as dt
import html
import logging
import os
import re
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from .entries import parse_daily
from .errors import StoreError
from .layout import Kind

if TYPE_CHECKING:
    from .workspace import Store

log = logging.getLogger("memoryui.search")

MARK_START, MARK_END = "\x02", "\x03"
SCHEMA_VERSION = "2"
MAX_INDEXED_BYTES = 1024 * 1024  # text beyond this is not indexed (the store caps files at 4 MB)
WEIGHTS = (10.0, 5.0, 1.0, 0.5, 0.0)  # name, title (headings), body, path, tags
SHARED_KINDS = (Kind.WORLD.value, Kind.GLOBAL.value, Kind.SKILL.value)
TIE_BUCKETS_PER_DECADE = 40  # scores within 10**(1/40) ~ 6 % are ties -> newer first
SNIPPET_TOKENS = 24
COLUMNS = ("name", "title", "body", "path", "tags")

_HEADING_RE = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t#]*$", re.M)
_TIME_ONLY_RE = re.compile(r"^\d{1,2}:\d{2}$")
_TIME_PREFIX_RE = re.compile(r"^\d{1,2}:\d{2}\s*[\u2014-]\s*")
_QUERY_TOKEN_RE = re.compile(
    r'\s*(?:(?P<col>name|title|body|path):)?'
    r'(?:(?P<phrase>"[^"]*")(?P<pstar>\*?)|(?P<open>\()|(?P<close>\))|(?P<word>[^\s()"]+))'
)
_SEARCHABLE_RE = re.compile(r"[^\W_]")  # a letter or digit: what tokenizers keep
_OPERATORS = {"OR", "AND", "NOT"}


class QueryError(StoreError):
    """A search the user typed that cannot be understood (400, never a 500)."""

    code = "invalid_arguments"
    status = 400


class SearchUnavailable(StoreError):
    """The index could not be read (locked for too long, damaged): retry or reindex."""

    code = "unavailable"
    status = 503


# -- queries -------------------------------------------------------------------------------
# One parser for both backends: what a person types becomes a small tree (terms joined by
# AND / OR / NOT), every malformed input is refused here with a message, and each backend
# renders the tree fully parenthesized, so neither FTS5 nor Postgres ever sees raw syntax.

@dataclass(frozen=True)
class Term:
    text: str  # the words as typed; the backend's tokenizer splits them
    prefix: bool = False
    column: str | None = None  # name | title | body | path


@dataclass(frozen=True)
class Op:
    op: str  # AND | OR | NOT ("a NOT b": a without b)
    left: Term | Op
    right: Term | Op


@dataclass(frozen=True)
class _Tok:
    kind: str  # term | op | open | close
    value: str = ""
    column: str | None = None
    prefix: bool = False
    minus: bool = False


def _tokens(text: str) -> list[_Tok]:
    toks: list[_Tok] = []
    pos = 0
    while pos < len(text):
        m = _QUERY_TOKEN_RE.match(text, pos)
        if m is None or m.end() == pos:
            break
        pos = m.end()
        col = m["col"]
        if m["open"]:
            toks.append(_Tok("open", column=col))
        elif m["close"]:
            if col:
                raise QueryError(f"Nothing to search for after {col}:.")
            toks.append(_Tok("close"))
        elif m["phrase"] is not None:
            inner = " ".join(m["phrase"][1:-1].split())
            if _SEARCHABLE_RE.search(inner):
                toks.append(_Tok("term", inner, col, bool(m["pstar"])))
            elif col:
                raise QueryError(f"Nothing to search for after {col}:.")
        else:
            word = m["word"]
            if word.endswith(":") and word[:-1] in COLUMNS[:4]:
                raise QueryError(f"Nothing to search for after {word}")
            if not col and word in _OPERATORS:
                toks.append(_Tok("op", word))
                continue
            minus = word.startswith("-") and len(word) > 1 and not col
            word = word[1:] if minus else word
            prefix = word.endswith("*")
            word = word.rstrip("*").replace("*", " ")
            if not _SEARCHABLE_RE.search(word):
                if col:
                    raise QueryError(f"Nothing to search for after {col}:.")
                continue
            if minus:
                toks.append(_Tok("op", "NOT", minus=True))
            toks.append(_Tok("term", word, col, prefix))
    return toks


def parse_tree(query: str) -> Term | Op:
    """Parse a search; precedence NOT > AND > OR (as in FTS5); words side by side are ANDed."""
    text = (query or "").strip()
    if not text:
        raise QueryError("Type a word to search for.")
    if len(text) > 500:
        raise QueryError("The search is too long (500 characters at most).")
    if text.count('"') % 2:
        raise QueryError('Unbalanced quote: close the "exact phrase" with a second ".')
    toks = _tokens(text)
    if not any(t.kind == "term" for t in toks):
        raise QueryError(f"Nothing to search for in {text!r}: use letters or digits.")
    pos = 0

    def peek() -> _Tok | None:
        return toks[pos] if pos < len(toks) else None

    def take() -> _Tok:
        nonlocal pos
        pos += 1
        return toks[pos - 1]

    def primary(col: str | None) -> Term | Op:
        t = peek()
        if t is None:
            raise QueryError("The search ends where a word was expected.")
        if t.kind == "term":
            take()
            return Term(t.value, t.prefix, t.column or col)
        if t.kind == "open":
            take()
            node = or_expr(t.column or col)
            if (c := peek()) is None or c.kind != "close":
                raise QueryError("A parenthesis is not closed: add a ).")
            take()
            return node
        if t.kind == "close":
            raise QueryError("A closing parenthesis ) has nothing before it to close.")
        if t.minus:
            raise QueryError("An exclusion (-word) needs something before it to exclude "
                             "from, e.g. deploy -staging.")
        raise QueryError(f"{t.value} needs a word on both sides, e.g. redis {t.value} "
                         "memcached.")

    def not_expr(col: str | None) -> Term | Op:
        node = primary(col)
        while (t := peek()) is not None and t.kind == "op" and t.value == "NOT":
            take()
            node = Op("NOT", node, primary(col))
        return node

    def and_expr(col: str | None) -> Term | Op:
        node = not_expr(col)
        while (t := peek()) is not None and t.kind != "close" and not (
                t.kind == "op" and t.value == "OR"):
            if t.kind == "op" and t.value == "AND":
                take()
            node = Op("AND", node, not_expr(col))
        return node

    def or_expr(col: str | None) -> Term | Op:
        node = and_expr(col)
        while (t := peek()) is not None and t.kind == "op" and t.value == "OR":
            take()
            node = Op("OR", node, and_expr(col))
        return node

    tree = or_expr(None)
    if peek() is not None:
        raise QueryError("A closing parenthesis ) has nothing before it to close.")
    return tree


def to_fts5(node: Term | Op) -> str:
    if isinstance(node, Term):
        quoted = '"' + node.text.replace('"', '""') + '"' + ("*" if node.prefix else "")
        return f"{node.column} : {quoted}" if node.column else quoted
    return f"({to_fts5(node.left)} {node.op} {to_fts5(node.right)})"


def parse_query(query: str) -> str:
    """What a person types, as a safe FTS5 expression (every word a quoted string)."""
    return to_fts5(parse_tree(query))


def _friendly(exc: sqlite3.Error, query: str) -> StoreError:
    msg = str(exc)
    if isinstance(exc, sqlite3.OperationalError) and (
            msg.startswith("fts5") or "syntax error" in msg or "unterminated" in msg
            or "no such column" in msg or "malformed MATCH" in msg):
        detail = msg.removeprefix("fts5: ")
        return QueryError(f"Could not understand the search {query.strip()!r} ({detail}). "
                          'Use words, "exact phrases", prefix*, OR, NOT and parentheses.')
    return SearchUnavailable(f"The search index is not available right now ({msg}); "
                             "try again, or run `python manage.py reindex`.")


# -- results ---------------------------------------------------------------------------------

def _marked_html(text: str) -> str:
    """Escape first, then turn the markers into <mark>: file text can never become markup."""
    return (html.escape(text).replace(MARK_START, "<mark>").replace(MARK_END, "</mark>"))


def _plain(text: str) -> str:
    return text.replace(MARK_START, "").replace(MARK_END, "")


@dataclass
class Hit:
    path: str
    scope: str
    kind: str
    date: str
    score: float  # higher is better (negated BM25)
    recency: float  # unix time of the last change
    name: str = ""
    title: str = ""  # name and headings, with match markers
    snippet: str = ""  # body excerpt with match markers
    path_marked: str = ""
    entry_id: str | None = None  # the daily entry the snippet falls in

    @property
    def snippet_text(self) -> str:
        return _plain(self.snippet)

    @property
    def snippet_html(self) -> str:
        return _marked_html(self.snippet)

    @property
    def title_html(self) -> str:
        return _marked_html(self.title)

    @property
    def path_html(self) -> str:
        return _marked_html(self.path_marked or self.path)

    @property
    def highlights(self) -> list[tuple[int, int]]:
        """(start, end) offsets of the matches inside `snippet_text`."""
        spans, plain_len, start = [], 0, None
        for ch in self.snippet:
            if ch == MARK_START:
                start = plain_len
            elif ch == MARK_END:
                if start is not None:
                    spans.append((start, plain_len))
                start = None
            else:
                plain_len += 1
        return spans

    @property
    def changed(self) -> dt.datetime:
        return dt.datetime.fromtimestamp(self.recency, dt.UTC)


@dataclass
class SearchResults:
    query: str
    hits: list[Hit] = field(default_factory=list)
    total: int = 0
    offset: int = 0
    limit: int = 20
    seconds: float = 0.0


class ProgressFn(Protocol):
    def __call__(self, done: int, total: int) -> None: ...


# -- documents -------------------------------------------------------------------------------

@dataclass
class _Doc:
    path: str
    name: str
    title: str
    body: str
    scope: str
    kind: str
    date: str
    recency: float
    size: int
    mtime_ns: int

    @property
    def tags(self) -> str:
        out = [_scope_tag(self.scope), _kind_tag(self.kind)]
        if not self.scope and self.kind in SHARED_KINDS:
            out.append(SHARED_TAG)
        d = self.date.replace("-", "")
        if len(d) == 8 and d.isdigit():
            out += [f"m{d[:6]}", f"d{d}"]
        return " ".join(out)


SHARED_TAG = "shared0"


def _scope_tag(scope: str) -> str:
    # Hex keeps any scope name one token whatever the tokenizer does with '-' or '_'; the
    # trailing digit keeps any future stemmer off it.
    return f"s{scope.encode().hex()}0"


def _kind_tag(kind: str) -> str:
    return f"k{kind or 'other'}0"


def _date_terms(first: dt.date, last: dt.date) -> list[str]:
    """Tokens covering [first, last]: whole months as month tokens, the rest as days."""
    terms: list[str] = []
    day = first
    while day <= last:
        month_end = (day.replace(day=28) + dt.timedelta(days=4)).replace(day=1) - \
            dt.timedelta(days=1)
        if day.day == 1 and month_end <= last:
            terms.append(f"m{day:%Y%m}")
            day = month_end + dt.timedelta(days=1)
        else:
            terms.append(f"d{day:%Y%m%d}")
            day += dt.timedelta(days=1)
    return terms


def _title_of(body: str) -> str:
    parts: list[str] = []
    for m in _HEADING_RE.finditer(body):
        h = m.group(1).strip()
        if _TIME_ONLY_RE.match(h):
            continue  # Duragent's "## HH:MM" entry headers are timestamps, not headings
        h = _TIME_PREFIX_RE.sub("", h)
        if h and h not in parts:
            parts.append(h)
    return " \u00b7 ".join(parts)


def _read_doc(store: Store, path: str, recency: float | None) -> _Doc | None:
    """Stat, then read: a change racing the read leaves a newer mtime for catch_up to see."""
    try:
        full = store.abspath(path)
        st = full.stat()
        if not full.is_file():
            return None
        with open(full, "rb") as fh:
            data = fh.read(MAX_INDEXED_BYTES)
    except (OSError, StoreError):
        return None
    body = "" if b"\x00" in data[:8192] else data.decode("utf-8", "replace")
    body = body.replace(MARK_START, " ").replace(MARK_END, " ")
    addr = store.address_of(path)
    kind = addr.kind.value if addr else ""
    scope = (addr.scope if addr else store.layout.scope_of(path)) or ""
    base = path.rsplit("/", 1)[-1]
    name = (addr.name if addr and addr.name else base.rsplit(".", 1)[0])
    when = recency if recency is not None else st.st_mtime
    date = name if kind == Kind.DAILY.value else \
        dt.datetime.fromtimestamp(when, dt.UTC).strftime("%Y-%m-%d")
    return _Doc(path, name, _title_of(body), body, scope, kind, date, float(when), st.st_size,
                st.st_mtime_ns)


def _walk_stats(root: Path) -> dict[str, tuple[int, int]]:
    """path -> (size, mtime_ns) of every visible file (the store's tree rule: no dot-names)."""
    out: dict[str, tuple[int, int]] = {}
    cut = len(str(root)) + 1
    stack = [str(root)]
    while stack:
        d = stack.pop()
        try:
            it = os.scandir(d)
        except OSError:
            continue
        with it:
            for e in it:
                if e.name.startswith("."):
                    continue
                try:
                    if e.is_dir(follow_symlinks=False):
                        stack.append(e.path)
                    elif e.is_file(follow_symlinks=False):
                        st = e.stat(follow_symlinks=False)
                        out[e.path[cut:].replace(os.sep, "/")] = (st.st_size, st.st_mtime_ns)
                except OSError:
                    continue
    return out


# -- what both backends share ----------------------------------------------------------------

Row = tuple  # (path, scope, kind, name, date, recency, score, snippet, title, path_marked, body)


class _IndexBase:
    """Keeping an index current and turning matches into hits; storage is the subclass's.

    `catch_up_interval` throttles the scan for outside changes (shared by all processes
    through the stored `checked_at`); `background=True` runs that scan in a thread so no
    search waits for it (the very first scan, which builds the index, runs inline).
    """

    backend = ""

    def __init__(self, *, catch_up_interval: float = 5.0, background: bool = True) -> None:
        self.catch_up_interval = catch_up_interval
        self.background = background
        self.store: Store | None = None
        self._catching_up = threading.Lock()
        self._queue: dict[str, float] = {}  # path -> when it changed
        self._queue_lock = threading.Lock()
        self._drain_lock = threading.Lock()
        self._drainer: threading.Thread | None = None
        self._drain_at_exit = False
        self._last_check = 0.0

    # -- storage primitives (subclasses) -------------------------------------------------
    def _write(self, docs: Iterable[_Doc], removed: Iterable[str], meta: dict[str, str],
               clear: bool = False) -> None:
        raise NotImplementedError

    def _meta(self, key: str) -> str | None:
        raise NotImplementedError

    def _reset(self, identity: str) -> None:
        raise NotImplementedError

    def _after_rebuild(self) -> None:
        pass

    def count(self) -> int:
        raise NotImplementedError

    def indexed_paths(self) -> dict[str, tuple[int, int]]:
        """path -> (size, mtime_ns) as indexed."""
        raise NotImplementedError

    def _query(self, tree: Term | Op, query: str, filters: dict, limit: int, offset: int,
               with_total: bool) -> tuple[list[Row], int]:
        raise NotImplementedError

    def paths_matching(self, query: str, **filters: object) -> set[str]:
        """Every file that matches, unranked (recall checks, bulk tooling)."""
        raise NotImplementedError

    def close(self) -> None:
        pass

    # -- wiring to a store ---------------------------------------------------------------
    def attach(self, store: Store) -> None:
        """Follow a store: its writes update the index; a different workspace starts afresh."""
        self.store = store
        if self.enqueue not in store.listeners:
            store.listeners.append(self.enqueue)
        identity = self._identity(store)
        if self._meta("identity") != identity:
            self._reset(identity)

    def _identity(self, store: Store) -> str:
        """What the stored index belongs to; anything else starts it afresh."""
        return f"{store.root}|{store.layout.key}"

    def _store(self, store: Store | None) -> Store:
        store = store or self.store
        if store is None:
            raise RuntimeError("the search index is not attached to a store")
        return store

    # -- keeping current -------------------------------------------------------------------
    def enqueue(self, paths: Sequence[str]) -> None:
        """The Store listener: note changed paths; a thread indexes them within ~0.3 s.

        Indexing in the write path cost a third of an agent's `remember` (about 1.2 ms);
        queued, it is batched, and every search in this process drains the queue first,
        so a process always finds what it just wrote.
        """
        now = time.time()
        with self._queue_lock:
            for p in paths:
                self._queue.pop(p, None)
                self._queue[p] = now
            if not self._drain_at_exit:
                self._drain_at_exit = True
                atexit.register(self._drain_quietly)
            if self._drainer is None or not self._drainer.is_alive():
                self._drainer = threading.Thread(target=self._drain_loop, daemon=True,
                                                 name="memoryui-search-indexer")
                self._drainer.start()

    def drain(self) -> int:
        """Index every queued path now.

        One drain at a time: the exit hook must wait for a drain the background thread has
        begun, or paths it took from the queue would die with it at interpreter exit.
        """
        with self._drain_lock:
            with self._queue_lock:
                changed, self._queue = self._queue, {}
            return self._index_at(changed) if changed else 0

    def _drain_quietly(self) -> None:
        try:
            self.drain()
        except Exception:  # noqa: BLE001 - exiting; the next catch-up scan repairs it
            log.exception("search index update at exit failed")

    def _drain_loop(self) -> None:
        while True:
            time.sleep(0.3)
            with self._queue_lock:
                if not self._queue:
                    self._drainer = None
                    return
            try:
                self.drain()
            except Exception:  # noqa: BLE001 - the next catch-up scan repairs the index
                log.exception("search index update failed")

    def update(self, paths: Sequence[str], store: Store | None = None,
               recency: float | None = None) -> int:
        """Re-read these files (a Store listener: called with the paths each write changed)."""
        when = time.time() if recency is None else recency
        return self._index_at({p: when for p in paths}, store)

    def _index_at(self, changed: dict[str, float], store: Store | None = None) -> int:
        """Re-read files, each with the time it changed (recency breaks ranking ties)."""
        store = self._store(store)
        docs, removed = [], []
        for p, when in changed.items():
            doc = _read_doc(store, p, when)
            if doc is None:
                removed.append(p)
            else:
                docs.append(doc)
        self._write(docs, removed, {})
        return len(docs) + len(removed)

    def rebuild(self, store: Store | None = None, progress: ProgressFn | None = None) -> dict:
        """Index every file from scratch in one transaction.

        Readers keep seeing the old index until it commits, so nobody ever searches an
        empty index. Files go in oldest first: row order is recency order.
        """
        store = self._store(store)
        started = time.perf_counter()
        tree = store.tree()

        def when(p: str) -> float:
            last = tree[p].last
            return float(last["time"]) if last and last.get("time") else tree[p].mtime

        # Commit times have one-second resolution: the file's mtime orders ties.
        paths = sorted(tree, key=lambda p: (when(p), tree[p].mtime, p))
        total = len(paths)

        def docs() -> Iterable[_Doc]:
            for i, p in enumerate(paths, 1):
                doc = _read_doc(store, p, when(p))
                if doc is not None:
                    yield doc
                if progress is not None and (i % 250 == 0 or i == total):
                    progress(i, total)

        if progress is not None and total == 0:
            progress(0, 0)
        now = str(time.time())
        self._write(docs(), [], {"identity": self._identity(store),
                                 "built_at": now, "checked_at": now}, clear=True)
        self._after_rebuild()
        self._last_check = time.monotonic()
        return {"files": self.count(), "seconds": time.perf_counter() - started}

    def catch_up(self, store: Store | None = None) -> list[str]:
        """Index what changed on disk without memoryui (agents writing natively, editors)."""
        store = self._store(store)
        with self._catching_up:
            self._last_check = time.monotonic()
            on_disk = _walk_stats(store.root)
            indexed = self.indexed_paths()
            changed = sorted((p for p, st in on_disk.items() if indexed.get(p) != st),
                             key=lambda p: (on_disk[p][1], p))
            gone = [p for p in indexed if p not in on_disk]
            docs = [d for p in changed if (d := _read_doc(store, p, None)) is not None]
            self._write(docs, gone, {"checked_at": str(time.time())})
            if changed or gone:
                log.info("search index caught up with %d outside changes",
                         len(changed) + len(gone))
            return sorted(changed + gone)

    def maybe_catch_up(self) -> None:
        """Throttled catch_up before a search: at most once per interval across processes."""
        if self.store is None:
            return
        now = time.monotonic()
        if now - self._last_check < self.catch_up_interval:
            return
        self._last_check = now
        try:
            checked = float(self._meta("checked_at") or 0)
        except ValueError:
            checked = 0.0
        if checked and time.time() - checked < self.catch_up_interval:
            return
        if self.background and checked:
            if self._catching_up.locked():
                return
            threading.Thread(target=self._catch_up_quietly, name="memoryui-search-catch-up",
                             daemon=True).start()
        else:
            self._catch_up_quietly()  # first use: build before answering

    def _catch_up_quietly(self) -> None:
        try:
            self.catch_up()
        except Exception:  # noqa: BLE001 - a failed scan must not fail a search
            log.exception("search index catch-up failed")

    # -- searching -------------------------------------------------------------------------
    def search(self, query: str, *, scope: str | Sequence[str] | None = None,
               kind: str | Sequence[str] | None = None, date_from: str | None = None,
               date_to: str | None = None, visible_to: str | None = None, limit: int = 20,
               offset: int = 0, with_total: bool = True, catch_up: bool = True
               ) -> SearchResults:
        """Ranked hits with snippets.

        `visible_to` restricts results to one scope's files plus the shared kinds (world,
        global, skills): what a scope-bound agent token may read.
        """
        started = time.perf_counter()
        tree = parse_tree(query)
        filters = _check_filters(scope=scope, kind=kind, date_from=date_from,
                                 date_to=date_to, visible_to=visible_to)
        self.drain()
        if catch_up:
            self.maybe_catch_up()
        limit = max(1, min(int(limit), 200))
        offset = max(0, int(offset))
        rows, total = self._query(tree, query, filters, limit, offset, with_total)
        hits = []
        for path, sc, kd, name, date, recency, score, snip, title, path_m, body in rows:
            hit = Hit(path, sc or "", kd or "", date or "", float(score), float(recency),
                      name=name or "", title=title or "", snippet=snip or "",
                      path_marked=path_m or "")
            if kd == Kind.DAILY.value and body:
                hit.entry_id = entry_for_snippet(body, hit.snippet)
            hits.append(hit)
        return SearchResults(query, hits, total, offset, limit, time.perf_counter() - started)

    def stats(self) -> dict:
        self.drain()
        return {"backend": self.backend, "files": self.count(),
                "built_at": self._meta("built_at")}


def _as_list(value: str | Sequence[str] | None) -> list[str]:
    if not value:
        return []
    return [value] if isinstance(value, str) else [v for v in value if v]


def _check_filters(**f: object) -> dict:
    out = {"scope": _as_list(f["scope"]), "kind": _as_list(f["kind"]),  # type: ignore[arg-type]
           "date_from": _parse_date(f["date_from"]) if f["date_from"] else None,  # type: ignore[arg-type]
           "date_to": _parse_date(f["date_to"]) if f["date_to"] else None,  # type: ignore[arg-type]
           "visible_to": f["visible_to"]}
    return out


# -- the SQLite index ------------------------------------------------------------------------

_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(
    name, title, body, path, tags,
    tokenize = 'unicode61 remove_diacritics 2', prefix = '2 3');
CREATE TABLE IF NOT EXISTS files(
    id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, scope TEXT NOT NULL,
    kind TEXT NOT NULL, name TEXT NOT NULL, date TEXT NOT NULL, recency REAL NOT NULL,
    size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS files_date ON files(date);
INSERT OR IGNORE INTO meta(key, value) VALUES ('schema', '{SCHEMA_VERSION}')
"""


class SearchIndex(_IndexBase):
    """The SQLite FTS5 index in one file; safe for several processes (WAL, busy timeout)."""

    backend = "sqlite"

    def __init__(self, path: str | os.PathLike[str], *, catch_up_interval: float = 5.0,
                 background: bool = True) -> None:
        super().__init__(catch_up_interval=catch_up_interval, background=background)
        self.path = Path(path)
        self._local = threading.local()
        self.path.parent.mkdir(parents=True, exist_ok=True)

        def create(conn: sqlite3.Connection) -> None:
            version = None
            if conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'meta'").fetchone():
                row = conn.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
                version = row[0] if row else None
            if version not in (None, SCHEMA_VERSION):
                for table in ("fts", "files", "meta"):
                    conn.execute(f"DROP TABLE IF EXISTS {table}")
            for stmt in _SCHEMA.strip().split(";\n"):
                conn.execute(stmt)

        self._transaction(create)

    # -- connections ---------------------------------------------------------------------
    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None or getattr(self._local, "pid", None) != os.getpid():
            conn = sqlite3.connect(self.path, timeout=15.0, isolation_level=None,
                                   check_same_thread=False)
            conn.execute("PRAGMA busy_timeout=15000")
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA cache_size=-32000")
            self._local.conn, self._local.pid = conn, os.getpid()
        return conn

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    def _transaction(self, fn: Callable[[sqlite3.Connection], object]) -> object:
        conn = self._conn()
        conn.execute("BEGIN IMMEDIATE")
        try:
            out = fn(conn)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        return out

    def _meta(self, key: str) -> str | None:
        row = self._conn().execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def _reset(self, identity: str) -> None:
        def reset(conn: sqlite3.Connection) -> None:
            conn.execute("DELETE FROM fts")
            conn.execute("DELETE FROM files")
            conn.execute("DELETE FROM meta WHERE key <> 'schema'")
            conn.execute("INSERT OR REPLACE INTO meta VALUES ('identity', ?)", (identity,))
        self._transaction(reset)

    # -- writing ---------------------------------------------------------------------------
    def _write(self, docs: Iterable[_Doc], removed: Iterable[str], meta: dict[str, str],
               clear: bool = False) -> None:
        """Replace the rows of `docs` (renumbered as the newest) and drop `removed`."""
        def apply(conn: sqlite3.Connection) -> None:
            if clear:
                conn.execute("DELETE FROM fts")
                conn.execute("DELETE FROM files")
            next_id = (conn.execute("SELECT max(id) FROM files").fetchone()[0] or 0) + 1
            stale: list[tuple[int]] = []
            fts_rows, file_rows = [], []
            for d in docs:
                if not clear:
                    row = conn.execute("SELECT id FROM files WHERE path = ?",
                                       (d.path,)).fetchone()
                    if row:
                        stale.append((row[0],))
                fts_rows.append((next_id, d.name, d.title, d.body, d.path, d.tags))
                file_rows.append((next_id, d.path, d.scope, d.kind, d.name, d.date, d.recency,
                                  d.size, d.mtime_ns))
                next_id += 1
            for p in removed:
                row = conn.execute("SELECT id FROM files WHERE path = ?", (p,)).fetchone()
                if row:
                    stale.append((row[0],))
            if stale:
                conn.executemany("DELETE FROM fts WHERE rowid = ?", stale)
                conn.executemany("DELETE FROM files WHERE id = ?", stale)
            conn.executemany("INSERT INTO fts(rowid, name, title, body, path, tags) "
                             "VALUES (?, ?, ?, ?, ?, ?)", fts_rows)
            conn.executemany("INSERT INTO files(id, path, scope, kind, name, date, recency, "
                             "size, mtime_ns) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", file_rows)
            conn.executemany("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
                             list(meta.items()))
        self._transaction(apply)

    def _after_rebuild(self) -> None:
        # Merge the b-tree segments: fewer segments to read per query.
        self._transaction(lambda c: c.execute("INSERT INTO fts(fts) VALUES ('optimize')"))

    # -- reading ---------------------------------------------------------------------------
    def count(self) -> int:
        self.drain()
        return self._conn().execute("SELECT count(*) FROM files").fetchone()[0]

    def indexed_paths(self) -> dict[str, tuple[int, int]]:
        self.drain()
        return {p: (s, m) for p, s, m in
                self._conn().execute("SELECT path, size, mtime_ns FROM files")}

    def _match(self, tree: Term | Op, filters: dict) -> str:
        """The FTS5 MATCH expression: the query, AND the filters as tokens of `tags`."""
        parts = []
        if filters["scope"]:
            parts.append(" OR ".join(f'"{_scope_tag(s)}"' for s in filters["scope"]))
        if filters["kind"]:
            parts.append(" OR ".join(f'"{_kind_tag(k)}"' for k in filters["kind"]))
        if filters["visible_to"] is not None:
            parts.append(f'"{_scope_tag(filters["visible_to"])}" OR "{SHARED_TAG}"')
        first, last = filters["date_from"], filters["date_to"]
        if first or last:
            if first is None or last is None:
                lo, hi = self._conn().execute(
                    "SELECT min(date), max(date) FROM files").fetchone()
                first = first or (_parse_date(lo) if lo else dt.date.today())
                last = last or (_parse_date(hi) if hi else dt.date.today())
            terms = _date_terms(first, last)
            parts.append(" OR ".join(f'"{t}"' for t in terms) if terms else '"__none__"')
        # The words never reach the hidden tags column.
        expr = f"{{name title body path}} : ({to_fts5(tree)})"
        return " AND ".join([expr, *(f"tags : ({p})" for p in parts)])

    def paths_matching(self, query: str, **filters: object) -> set[str]:
        self.drain()
        match = self._match(parse_tree(query), _check_filters(
            **{k: filters.get(k) for k in ("scope", "kind", "date_from", "date_to",
                                           "visible_to")}))
        try:
            return {r[0] for r in self._conn().execute(
                "SELECT f.path FROM fts JOIN files f ON f.id = fts.rowid WHERE fts MATCH ?",
                (match,))}
        except sqlite3.Error as exc:
            raise _friendly(exc, query) from None

    def _query(self, tree: Term | Op, query: str, filters: dict, limit: int, offset: int,
               with_total: bool) -> tuple[list[Row], int]:
        full = self._match(tree, filters)
        expr = to_fts5(tree)
        w = ", ".join(str(x) for x in WEIGHTS)
        conn = self._conn()
        try:
            # Ranking reads no stored column: BM25, then the row number (= recency).
            ranked = conn.execute(
                f"SELECT rowid, bm25(fts, {w}) AS s FROM fts WHERE fts MATCH ? "
                f"ORDER BY round(log(max(-s, 1e-12)) * {TIE_BUCKETS_PER_DECADE}) DESC, "
                f"rowid DESC LIMIT ? OFFSET ?", (full, limit, offset)).fetchall()
            total = len(ranked) + offset
            if with_total and (len(ranked) == limit or offset):
                total = conn.execute("SELECT count(*) FROM fts WHERE fts MATCH ?",
                                     (full,)).fetchone()[0]
            if not ranked:
                return [], total
            ids = [r[0] for r in ranked]
            qmarks = ", ".join("?" * len(ids))
            meta = {r[0]: r[1:] for r in conn.execute(
                f"SELECT id, path, scope, kind, name, date, recency FROM files "
                f"WHERE id IN ({qmarks})", ids)}
            marks = {r[0]: r[1:] for r in conn.execute(
                f"SELECT rowid, snippet(fts, 2, char(2), char(3), '\u2026', {SNIPPET_TOKENS}), "
                f"highlight(fts, 1, char(2), char(3)), highlight(fts, 3, char(2), char(3)), "
                f"body FROM fts WHERE fts MATCH ? AND rowid IN ({qmarks})", [expr, *ids])}
        except sqlite3.Error as exc:
            raise _friendly(exc, query) from None
        rows = []
        for rid, score in ranked:
            if rid in meta:  # else deleted between the reads
                snip, title, path_m, body = marks.get(rid, ("", "", "", None))
                rows.append((*meta[rid], -float(score), snip, title, path_m, body))
        return rows, total

    def stats(self) -> dict:
        self.drain()
        try:
            size = self.path.stat().st_size
        except FileNotFoundError:
            size = 0
        return {**super().stats(), "bytes": size}


def _term_patterns(node: Term | Op, out: list[str], negated: bool = False) -> list[str]:
    """Regex pieces for the words a tree looks for (not those it excludes)."""
    if isinstance(node, Term):
        if not negated:
            words = [re.escape(w) for w in _LEXEME_RE.findall(node.text)]
            if node.prefix and words:
                words[-1] += r"[^\W_]*"
            out += words
        return out
    _term_patterns(node.left, out, negated)
    _term_patterns(node.right, out, negated or node.op == "NOT")
    return out


def highlight_text(text: str, tree: Term | Op, window: int | None = None) -> str:
    """Mark the query's words in `text`; with `window`, only the best run of that many words.

    Used where the database's own highlighter would lose text (Postgres's ts_headline
    drops anything that looks like an HTML tag).
    """
    pats = _term_patterns(tree, [])
    if not pats:
        return text if window is None else text[:200]
    rx = re.compile(r"(?<![^\W_])(?:" + "|".join(pats) + r")(?![^\W_])", re.I)
    words = list(_LEXEME_RE.finditer(text))
    hits = [bool(rx.fullmatch(w.group(0))) for w in words]
    if window is not None and len(words) > window:
        best, best_at, run = -1, 0, 0
        for i, h in enumerate(hits):
            run += h
            if i >= window:
                run -= hits[i - window]
            if i >= window - 1 and run > best:
                best, best_at = run, i - window + 1
        lo = words[best_at].start()
        hi = words[min(best_at + window, len(words)) - 1].end()
        span = range(best_at, min(best_at + window, len(words)))
        lead = "\u2026" if best_at > 0 else text[:lo]
        tail = "\u2026" if span.stop < len(words) else text[hi:]
    else:
        lo, hi, span, lead, tail = 0, len(text), range(len(words)), "", ""
    out, pos = [lead], lo
    for i in span:
        if hits[i]:
            w = words[i]
            out += [text[pos:w.start()], MARK_START, w.group(0), MARK_END]
            pos = w.end()
    out += [text[pos:hi], tail]
    return "".join(out)


# -- the Postgres index ----------------------------------------------------------------------

_PG_SCHEMA = """
CREATE TABLE IF NOT EXISTS memoryui_fts_meta(key text PRIMARY KEY, value text NOT NULL);
CREATE SEQUENCE IF NOT EXISTS memoryui_fts_seq;
CREATE TABLE IF NOT EXISTS memoryui_fts_files(
    id bigint PRIMARY KEY, path text NOT NULL UNIQUE, scope text NOT NULL, kind text NOT NULL,
    name text NOT NULL, date text NOT NULL, recency double precision NOT NULL,
    size bigint NOT NULL, mtime_ns bigint NOT NULL, title text NOT NULL, body text NOT NULL,
    tsv tsvector NOT NULL);
CREATE INDEX IF NOT EXISTS memoryui_fts_files_tsv ON memoryui_fts_files USING gin(tsv);
CREATE INDEX IF NOT EXISTS memoryui_fts_files_scope ON memoryui_fts_files(scope, kind);
CREATE INDEX IF NOT EXISTS memoryui_fts_files_date ON memoryui_fts_files(date)
"""
# Weights by tsvector label: D body 1, C path 0.5, B headings 5, A name 10 (as in SQLite).
_PG_WEIGHTS = "'{0.1, 0.05, 0.5, 1.0}'"
_PG_TSV = ("setweight(to_tsvector('simple', %s), 'A') || setweight(to_tsvector('simple', %s), "
           "'B') || setweight(to_tsvector('simple', %s), 'C') || "
           "setweight(to_tsvector('simple', %s), 'D')")
_PG_LABEL = {"name": "A", "title": "B", "path": "C", "body": "D"}
_LEXEME_RE = re.compile(r"[^\W_]+")


def _pg_words(text: str) -> str:
    """A path or name as words for the 'simple' parser (it would keep a path as one token)."""
    return " ".join(_LEXEME_RE.findall(text))


def to_tsquery_sql(node: Term | Op, params: list[str]) -> str:
    """The tree as SQL building a tsquery; every user text goes in as a bound parameter."""
    if isinstance(node, Term):
        if not node.prefix and not node.column:
            params.append(node.text)
            return "phraseto_tsquery('simple', %s)"
        words = [w.lower() for w in _LEXEME_RE.findall(node.text)]
        label = _PG_LABEL[node.column] if node.column else ""
        parts = [f"'{w}':{label}" if label else f"'{w}'" for w in words]
        if node.prefix:
            parts[-1] = f"'{words[-1]}':*{label}"
        params.append(" <-> ".join(parts))
        return "to_tsquery('simple', %s)"
    left = to_tsquery_sql(node.left, params)
    right = to_tsquery_sql(node.right, params)
    if node.op == "NOT":
        return f"({left} && !!{right})"
    return f"({left} {'&&' if node.op == 'AND' else '||'} {right})"


class PostgresSearchIndex(_IndexBase):
    """Postgres full-text search (tsvector + GIN index, ts_rank) in the app database.

    Same behaviour as the SQLite index: field weights, recency by row number, the same query
    language, filters and snippets. Used when DATABASE_URL points at Postgres, so several
    instances share one index.
    """

    backend = "postgres"

    def __init__(self, dsn: str, *, catch_up_interval: float = 5.0,
                 background: bool = True) -> None:
        super().__init__(catch_up_interval=catch_up_interval, background=background)
        import psycopg  # optional dependency: pip install 'memoryui[postgres]'

        self._psycopg = psycopg
        self.dsn = dsn
        self.path = None
        self._local = threading.local()
        with self._conn().transaction():
            cur = self._conn().cursor()
            cur.execute("SELECT pg_advisory_xact_lock(8246155)")  # one creator at a time
            for stmt in _PG_SCHEMA.strip().split(";\n"):
                cur.execute(stmt)
            cur.execute("INSERT INTO memoryui_fts_meta VALUES ('schema', %s) "
                        "ON CONFLICT (key) DO NOTHING", (SCHEMA_VERSION,))

    def _identity(self, store: Store) -> str:
        # Several instances share one Postgres, each with its own clone of the workspace
        # (wherever it lives on disk): the layout is what must match.
        return f"layout:{store.layout.key}"

    def _conn(self):  # noqa: ANN202 - psycopg is optional
        conn = getattr(self._local, "conn", None)
        if conn is None or conn.closed or getattr(self._local, "pid", None) != os.getpid():
            conn = self._psycopg.connect(self.dsn, autocommit=True)
            self._local.conn, self._local.pid = conn, os.getpid()
        return conn

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    def _meta(self, key: str) -> str | None:
        row = self._conn().execute("SELECT value FROM memoryui_fts_meta WHERE key = %s",
                                   (key,)).fetchone()
        return row[0] if row else None

    def _reset(self, identity: str) -> None:
        conn = self._conn()
        with conn.transaction():
            conn.execute("DELETE FROM memoryui_fts_files")
            conn.execute("DELETE FROM memoryui_fts_meta WHERE key <> 'schema'")
            conn.execute("INSERT INTO memoryui_fts_meta VALUES ('identity', %s) "
                         "ON CONFLICT (key) DO UPDATE SET value = excluded.value", (identity,))

    def _write(self, docs: Iterable[_Doc], removed: Iterable[str], meta: dict[str, str],
               clear: bool = False) -> None:
        conn = self._conn()
        with conn.transaction():
            cur = conn.cursor()
            if clear:
                cur.execute("DELETE FROM memoryui_fts_files")
            gone = list(removed)
            if gone:
                cur.execute("DELETE FROM memoryui_fts_files WHERE path = ANY(%s)", (gone,))
            rows = ((d.path, d.scope, d.kind, d.name, d.date, d.recency, d.size, d.mtime_ns,
                     d.title, d.body, _pg_words(d.name), d.title, _pg_words(d.path), d.body)
                    for d in docs)
            cur.executemany(
                "INSERT INTO memoryui_fts_files(id, path, scope, kind, name, date, recency, "
                "size, mtime_ns, title, body, tsv) VALUES (nextval('memoryui_fts_seq'), %s, "
                f"%s, %s, %s, %s, %s, %s, %s, %s, %s, {_PG_TSV}) ON CONFLICT (path) DO UPDATE "
                "SET id = nextval('memoryui_fts_seq'), scope = excluded.scope, kind = "
                "excluded.kind, name = excluded.name, date = excluded.date, recency = "
                "excluded.recency, size = excluded.size, mtime_ns = excluded.mtime_ns, "
                "title = excluded.title, body = excluded.body, tsv = excluded.tsv", rows)
            for key, value in meta.items():
                cur.execute("INSERT INTO memoryui_fts_meta VALUES (%s, %s) ON CONFLICT (key) "
                            "DO UPDATE SET value = excluded.value", (key, value))

    def _after_rebuild(self) -> None:
        self._conn().execute("ANALYZE memoryui_fts_files")

    def count(self) -> int:
        self.drain()
        return self._conn().execute("SELECT count(*) FROM memoryui_fts_files").fetchone()[0]

    def indexed_paths(self) -> dict[str, tuple[int, int]]:
        self.drain()
        return {p: (s, m) for p, s, m in self._conn().execute(
            "SELECT path, size, mtime_ns FROM memoryui_fts_files")}

    @staticmethod
    def _where(filters: dict, params: list) -> str:
        where = ["tsv @@ q.query"]
        if filters["scope"]:
            where.append("scope = ANY(%s)")
            params.append(filters["scope"])
        if filters["kind"]:
            where.append("kind = ANY(%s)")
            params.append(filters["kind"])
        if filters["visible_to"] is not None:
            where.append("(scope = %s OR (scope = '' AND kind = ANY(%s)))")
            params += [filters["visible_to"], list(SHARED_KINDS)]
        if filters["date_from"]:
            where.append("date >= %s")
            params.append(filters["date_from"].isoformat())
        if filters["date_to"]:
            where.append("date <= %s")
            params.append(filters["date_to"].isoformat())
        return " AND ".join(where)

    def paths_matching(self, query: str, **filters: object) -> set[str]:
        self.drain()
        params: list = []
        tsq = to_tsquery_sql(parse_tree(query), params)
        where = self._where(_check_filters(
            **{k: filters.get(k) for k in ("scope", "kind", "date_from", "date_to",
                                           "visible_to")}), params)
        return {r[0] for r in self._run(
            f"SELECT path FROM memoryui_fts_files, (SELECT {tsq} AS query) q WHERE {where}",
            params, query)}

    def _run(self, sql: str, params: list, query: str) -> list:
        try:
            return self._conn().execute(sql, params).fetchall()
        except self._psycopg.errors.SyntaxError as exc:  # tsquery syntax (cannot happen)
            raise QueryError(f"Could not understand the search {query!r}: {exc}") from None
        except self._psycopg.Error as exc:
            raise SearchUnavailable(f"The search index is not available right now ({exc}); "
                                    "try again, or run `python manage.py reindex`.") from None

    def _query(self, tree: Term | Op, query: str, filters: dict, limit: int, offset: int,
               with_total: bool) -> tuple[list[Row], int]:
        params: list = []
        tsq = to_tsquery_sql(tree, params)
        where = self._where(filters, params)
        bucket = f"round(log(greatest(score, 1e-12)::numeric) * {TIE_BUCKETS_PER_DECADE}) DESC"
        rows = self._run(
            f"WITH q AS (SELECT {tsq} AS query), hits AS ("
            f"SELECT * FROM (SELECT id, path, scope, kind, name, date, recency, title, body, "
            f"ts_rank({_PG_WEIGHTS}::float4[], tsv, q.query) AS score "
            f"FROM memoryui_fts_files, q WHERE {where}) ranked "
            f"ORDER BY {bucket}, id DESC LIMIT %s OFFSET %s) "
            "SELECT path, scope, kind, name, date, recency, score, title, body "
            f"FROM hits ORDER BY {bucket}, id DESC", [*params, limit, offset], query)
        rows = [(path, sc, kd, name, date, recency, score,
                 highlight_text(body, tree, SNIPPET_TOKENS), highlight_text(title, tree), path,
                 body if kd == Kind.DAILY.value else None)
                for path, sc, kd, name, date, recency, score, title, body in rows]
        total = len(rows) + offset
        if with_total and (len(rows) == limit or offset):
            count_params: list = []
            count_tsq = to_tsquery_sql(tree, count_params)
            count_where = self._where(filters, count_params)
            total = self._run(f"SELECT count(*) FROM memoryui_fts_files, "
                              f"(SELECT {count_tsq} AS query) q WHERE {count_where}",
                              count_params, query)[0][0]
        return rows, total


def _parse_date(value: str) -> dt.date:
    try:
        return dt.date.fromisoformat(value)
    except (TypeError, ValueError):
        raise QueryError(f"{value!r} is not a date: use YYYY-MM-DD.") from None


def entry_for_snippet(text: str, snippet: str) -> str | None:
    """The id of the daily entry a snippet was cut from (for `#e-<id>` links)."""
    plain = _plain(snippet).strip().strip("\u2026").strip()
    if not plain:
        return None
    at = text.find(plain)
    if at < 0:
        first = plain.split("\n", 1)[0].strip()
        at = text.find(first) if first else -1
    if at < 0:
        return None
    # The line of the first match inside the snippet, not of the snippet's start.
    mark = snippet.find(MARK_START)
    lead = _plain(snippet[:mark]).lstrip().lstrip("\u2026").lstrip() if mark >= 0 else ""
    line = text.count("\n", 0, at + len(lead)) + 1
    for entry in parse_daily(text):
        if entry.start_line <= line <= entry.end_line:
            return entry.id
    return None


def open_index(path: str | os.PathLike[str], *, database_url: str | None = None,
               **kwargs: object) -> SearchIndex:
    """The index for a deployment: SQLite FTS5 in `path`, or Postgres full-text when
    `database_url` points at Postgres."""
    if database_url and database_url.split(":", 1)[0] in ("postgres", "postgresql", "pgsql"):
        return PostgresSearchIndex(database_url, **kwargs)  # type: ignore[arg-type]
    return SearchIndex(path, **kwargs)  # type: ignore[arg-type]
