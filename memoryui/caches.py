"""Every memo a worker keeps between requests, named in one place.

Each cache is a `cachetools` cache (its bound is here) behind a `Shelf`, which adds the lock
cachetools leaves to its users: workers answer requests on several threads. The module holds
no rule about what a cached value means: each user checks what its key cannot say (the HEAD
a value was computed at, a file's stamp) and puts a fresh value when that moved on.

Plain Python, no Django: the domain packages use it too.

Pure memos (the value is a function of the arguments alone, nothing ever invalidates them)
stay on `functools` beside their function, because their C implementation is the cheaper
call in hot loops:

- `review.similar.normalise`, `_wordset`, `_idents`: an entry's words and identifiers.
- `web.links._pattern`, `area_root`: a URL name's reversed pattern (the URLconf is fixed).
- `api.openapi_params`: the character classes of the OpenAPI name patterns.

Caches kept elsewhere: `store.layout` (`_name_ok`, a pure memo), `store.gitrepo` (the log
bytes a commit tick appends to), `store.dated` (commit dates by HEAD), `review.targets` (a
kind's files, kept by `store.kept`), `review.sources` (daily log paths), `review.entries`
(parsed daily logs by file stamp, rendered entries), `web.history.rowhtml` (commit row
pieces) and `web.hierarchy.model` (a budget meter's line count by file stamp).
"""

from __future__ import annotations

import threading
from collections.abc import Hashable
from typing import Any, Generic, TypeVar

from cachetools import Cache, LRUCache, TTLCache

V = TypeVar("V")


class Shelf(Generic[V]):
    """A cachetools cache used under one lock (its operations are not thread-safe)."""

    def __init__(self, cache: Cache[Hashable, V]) -> None:
        self._cache = cache
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> V | None:
        with self._lock:
            return self._cache.get(key)

    def put(self, key: Hashable, value: V) -> None:
        with self._lock:
            try:
                self._cache[key] = value
            except ValueError:  # one value larger than the whole bound: not kept
                pass

    def pop(self, key: Hashable) -> None:
        with self._lock:
            self._cache.pop(key, None)

    def clear(self) -> None:
        with self._lock:
            self._cache.clear()

    def __len__(self) -> int:
        return len(self._cache)


def _text_and_html(value: tuple[str, str]) -> int:
    return len(value[0]) + len(value[1])


# Rendered markdown: source text -> (text, sanitized HTML), 16 M characters of both, least
# recently used first out. Rendering is a pure function of the text, so nothing invalidates
# it; a text over RENDERED_MAX_TEXT is not kept (rendering.render_markdown).
RENDERED: Shelf[tuple[str, str]] = Shelf(LRUCache(maxsize=16 << 20, getsizeof=_text_and_html))
RENDERED_MAX_TEXT = 512 << 10

# Files changed outside memoryui, per workspace: root -> (HEAD, count) for 10 s; a moved HEAD
# makes it stale (web.browse.views.pending_count).
PENDING_COUNTS: Shelf[tuple[str | None, int]] = Shelf(TTLCache(maxsize=64, ttl=10.0))

# Undecided review entries per scope, per workspace: root -> (HEAD, {scope: count}) for 10 s;
# a moved HEAD makes it stale (web.browse.overview.review_counts).
REVIEW_COUNTS: Shelf[tuple[str | None, dict[str, int]]] = Shelf(TTLCache(maxsize=64, ttl=10.0))

# Verified API tokens: token hash -> (Token, monotonic time verified, generation), 10,000 of
# them. MEMORYUI_TOKEN_CACHE (read per request) is their age limit; a token saved or deleted
# clears it and bumps the generation file, which other workers compare (api.auth).
TOKENS: Shelf[tuple[Any, float, int]] = Shelf(LRUCache(maxsize=10_000))
# whether a policy other than `write` applies to a token's agent (memoryui.policies.limited):
# token id -> (limited, tokens' generation, monotonic time), kept as the tokens are
POLICY_LIMITS: Shelf[tuple[bool, int, float]] = Shelf(LRUCache(maxsize=10_000))

# Commits as pages and the API show them (store.reading.Store.commit): (root, full id) ->
# CommitDetail with its diffs, 64 of them. A commit never changes, so nothing invalidates
# them; its readers never modify one.
COMMITS: Shelf[Any] = Shelf(LRUCache(maxsize=64))

# The overview's scope table rows: (node identity, review count, kinds, review URL, age text)
# -> (node, row HTML), 512 rows. A hierarchy node never changes once built, so a row is
# only valid for the very node it was rendered from (web.templatetags.memoryui_browse).
SCOPE_ROWS: Shelf[tuple[object, str]] = Shelf(LRUCache(maxsize=512))

# Rows of file tables (the overview's world topics, a scope page's daily logs and notes):
# (item identity, numeric size cell, age text) -> (item, row HTML), 2,048 rows; valid only
# for the very item it was rendered from, as SCOPE_ROWS (web.templatetags.memoryui_browse).
FILE_ROWS: Shelf[tuple[object, str]] = Shelf(LRUCache(maxsize=2048))

# The tools a layout offers: layout -> (registry size, {name: tool}), 16 layouts; a registry
# that grew since makes it stale (tools.registry). Every agent call looks its tool up.
TOOLS_BY_LAYOUT: Shelf[tuple[int, dict[str, Any]]] = Shelf(LRUCache(maxsize=16))

# The configured workspace's real path: MEMORYUI_WORKSPACE -> resolved path, 16 of them;
# never invalidated (memoryui.workspace: resolving it was a dozen system calls a request).
WORKSPACE_PATHS: Shelf[Any] = Shelf(LRUCache(maxsize=16))

# Similar-entry indexes (review.similar), all cleared by `similar.clear_caches`:
# one file's paragraphs: (root, path) -> (stamp, index); a changed stamp makes it stale.
SIMILAR_FILES: Shelf[tuple[tuple[float, int], Any]] = Shelf(LRUCache(maxsize=4096))
# a set of files' combined index: (root, ((path, stamp), ...)) -> index; keyed by stamps.
SIMILAR_INDEXES: Shelf[tuple[Any, list[tuple[str, int]]]] = Shelf(LRUCache(maxsize=64))
# the groups of a range of entries: (root, entry keys and stamps, threshold) -> group ids.
SIMILAR_GROUPS: Shelf[list[int]] = Shelf(LRUCache(maxsize=16))

# What pages read of the file catalogue (web.hierarchy), each kept with the catalogue's
# generations it was read at (search.catalogue: a transaction that changes a row draws new
# ones for its scopes and the whole catalogue) and the store it was read through; a value
# whose generations moved on is read again, so none is older than the catalogue's rows.
# the overview's hierarchy: (root, layout) -> ((store, whole generation, scope names), h)
OVERVIEWS: Shelf[tuple[Any, Any]] = Shelf(LRUCache(maxsize=4))
# the overview's shared files (world, global, skills, directives, other): (root, layout) ->
# ((store, generation of the shared files), [items]); an agent's write to its own scope
# rebuilds the overview from them without reading them again
OVERVIEW_SHARED: Shelf[tuple[Any, Any]] = Shelf(LRUCache(maxsize=4))
# the shared files and scope names every sidebar shows: (root, layout) -> ((store,
# generation of the shared files, scope names), hierarchy)
SHARED_FILES: Shelf[tuple[Any, Any]] = Shelf(LRUCache(maxsize=4))


def _files_in(value: tuple[Any, Any]) -> int:
    return int(getattr(value[1], "files", 0)) + 1


# one scope's files: (root, layout, scope) -> ((store, the scope's generation), node), 20k
# files in all, a few MB (the scopes most recently open; a scope of a huge team has ~400)
SCOPE_NODES: Shelf[tuple[Any, Any]] = Shelf(LRUCache(maxsize=20_000, getsizeof=_files_in))


def _html_of(value: tuple[Any, Any, str]) -> int:
    return len(value[2])


# the sidebar's markup: (shared listing's id, open scope's id, the open file, scope, kind
# and month, the page's URL name) -> (listing, scope node, HTML), 8 M characters. Valid only
# for the very listing and node it was rendered from, which are kept by generation above.
SIDEBARS: Shelf[tuple[Any, Any, str]] = Shelf(LRUCache(maxsize=8 << 20, getsizeof=_html_of))


def _vectors_size(value: tuple[Any, Any]) -> int:
    """Bytes a value of MEANING_FILES holds: its vectors, plus its texts roughly."""
    items, matrix = value[1]
    return int(matrix.nbytes) + 256 * len(items) + 64


# Passages (or a daily log's entries) compared by meaning, and their vectors (review.meaning,
# review.contradictions; cleared by `meaning.clear_caches`): (root, path[, "entries"]) ->
# (stamp, (passages, vectors)); a changed stamp makes it stale. 64 MB of vectors and texts,
# least recently used first out (the huge preset's 2,000 world topics take about 40 MB).
MEANING_FILES: Shelf[tuple[tuple[float, int], Any]] = Shelf(
    LRUCache(maxsize=64 << 20, getsizeof=_vectors_size))
