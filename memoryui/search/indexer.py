"""The indexing half of keeping an index current: files read into documents and written,
the catch-up scan that finds changes made outside memoryui, and the full rebuild. The
backends (`sqlite.py`, `postgres.py`) provide the storage primitives; `updater.Updater` adds
the write queue and when each pass runs.

- `catch_up()` notices files changed outside memoryui by comparing each file's size and stamp
  in the file catalogue (`catalogue.py`, which scans for them first)
  (walked by the store's one walker) with what was indexed. On an empty index it builds the
  whole index, oldest change first.
- `rebuild()` recreates the index in one transaction: readers see the old one until it commits.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Protocol, TypeVar

from memoryui.store.threadnames import named

from .documents import Doc, DocReader, read_docs

if TYPE_CHECKING:
    from memoryui.store import Store

    from .catalogue import Catalogue

log = logging.getLogger("memoryui.search")

READ_AHEAD = 8  # batches of READ_BATCH files a rebuild reads ahead of the index writer
READ_BATCH = 256
T = TypeVar("T")


class ProgressFn(Protocol):
    def __call__(self, done: int, total: int) -> None: ...


class Indexer:
    """Reading files into the index; subclasses provide the storage primitives."""

    catalogue: Catalogue  # the file catalogue in the same database (the backends make it)

    def __init__(self) -> None:
        self.store: Store | None = None
        self._catching_up = threading.Lock()
        self._last_check = 0.0

    # -- storage primitives (backends) ------------------------------------------------------
    def _write(self, docs: Iterable[Doc], removed: Iterable[str], meta: dict[str, str],
               clear: bool = False) -> None:
        raise NotImplementedError

    def _meta(self, key: str) -> str | None:
        raise NotImplementedError

    def _reset(self, identity: str) -> None:
        raise NotImplementedError

    def _after_rebuild(self) -> None:
        pass

    def _catch_up_vectors(self, store: Store) -> None:
        """Embed every file again when the stored vectors are another model's (search by
        meaning adds it)."""

    def count(self) -> int:
        raise NotImplementedError

    def indexed_rows(self) -> Iterable[tuple[str, int, int]]:
        """(path, size, stamp) of every indexed file, read as they are iterated."""
        raise NotImplementedError

    def indexed_paths(self) -> dict[str, tuple[int, int]]:
        """path -> (size, stamp) as indexed."""
        return {p: (s, m) for p, s, m in self.indexed_rows()}

    def _stamps(self, paths: Sequence[str]) -> dict[str, tuple[int, int]]:
        """path -> (size, stamp) as indexed, for these paths only (those indexed)."""
        raise NotImplementedError

    # -- the store indexed --------------------------------------------------------------------
    def _identity(self, store: Store) -> str:
        """What the stored index belongs to; anything else starts it afresh."""
        return f"{store.root}|{store.layout.key}"

    def _store(self, store: Store | None) -> Store:
        store = store or self.store
        if store is None:
            raise RuntimeError("the search index is not attached to a store")
        return store

    # -- files indexed now ----------------------------------------------------------------------
    def update(self, paths: Sequence[str], store: Store | None = None,
               recency: float | None = None) -> int:
        """Re-read these files now (`recency`: when they changed, if git does not know)."""
        when = time.time() if recency is None else recency
        return self._index_at({p: when for p in paths}, store)

    def _index_at(self, changed: Mapping[str, float | None], store: Store | None = None,
                  exact: set[str] | frozenset[str] = frozenset(), fresh: bool = False,
                  sizes: dict[str, int] | None = None) -> int:
        """Index these files as they are now. `fresh`: skip a file whose size and stamp the
        index already holds: every worker of a server drains the writes it served, and
        when several wrote one daily log, the first to drain it has indexed them all (the
        others re-tokenized the whole file, and FTS5 the old row to delete it, for nothing).
        `sizes` gets the size of every file read."""
        docs, removed = read_docs(self._store(store), changed, exact)
        if sizes is not None:
            sizes.update((d.path, d.size) for d in docs)
        if fresh and docs:
            held = self._stamps([d.path for d in docs])
            docs = [d for d in docs if held.get(d.path) != (d.size, d.mtime_ns)]
        self._write(docs, removed, {})
        return len(docs) + len(removed)

    # -- whole-workspace passes ---------------------------------------------------------------
    def rebuild(self, store: Store | None = None, progress: ProgressFn | None = None) -> dict:
        """Index every file from scratch in one transaction (readers keep the old index)."""
        store = self._store(store)
        started = time.perf_counter()
        now = str(time.time())
        self._build(store, progress, clear=True,
                    meta={"identity": self._identity(store), "built_at": now, "checked_at": now})
        self._after_rebuild()
        self._last_check = time.monotonic()
        return {"files": self.count(), "seconds": time.perf_counter() - started}

    def _build(self, store: Store, progress: ProgressFn | None, *, clear: bool,
               meta: dict[str, str]) -> list[str]:
        """Write every file, oldest change first: row order is recency order."""
        paths = self.catalogue.by_change()
        total = len(paths)
        reader = DocReader(store, bulk=True)

        def docs() -> Iterable[Doc]:
            for i, p in enumerate(paths, 1):
                doc = reader.read(p)
                if doc is not None:
                    yield doc
                if progress is not None and (i % 250 == 0 or i == total):
                    progress(i, total)

        if progress is not None and total == 0:
            progress(0, 0)
        self._write(read_ahead(docs()), [], meta, clear=clear)
        return paths

    def catch_up(self, store: Store | None = None) -> list[str]:
        """Index what changed on disk without memoryui (agents writing natively, editors):
        what the file catalogue holds (it scans for such changes first) against what the
        index holds, streamed."""
        store = self._store(store)
        with self._catching_up:
            self._last_check = time.monotonic()
            if not self.count():  # the first use: build it all, in order of change, streamed
                # as a rebuild is (held whole, 200k files take a worker to 740 MB)
                built = self._build(store, None, clear=True,
                                    meta={"built_at": str(time.time()),
                                          "checked_at": str(time.time())})
                self._after_rebuild()
                return sorted(built)
            self._catch_up_vectors(store)
            changed, gone = self.catalogue.compare(self.indexed_rows())
            docs, refused = read_docs(store, dict.fromkeys(changed))
            self._write(docs, gone + refused, {"checked_at": str(time.time())})
            if changed or gone:
                log.info("search index caught up with %d outside changes",
                         len(changed) + len(gone))
            return sorted(changed + gone)


def read_ahead(items: Iterable[T], batch: int = READ_BATCH, depth: int = READ_AHEAD
               ) -> Iterator[T]:
    """`items`, produced by a thread while the caller consumes them: a rebuild reads and
    parses the next files while the index tokenizes the last ones (SQLite lets go of the
    interpreter meanwhile). An error in the producer is raised here; a consumer that stops
    early stops the producer."""
    q: queue.Queue = queue.Queue(depth)
    stop = threading.Event()
    done = object()

    def put(value: object) -> bool:
        while not stop.is_set():
            try:
                q.put(value, timeout=0.5)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        try:
            chunk: list = []
            for item in items:
                chunk.append(item)
                if len(chunk) >= batch:
                    if not put(chunk):
                        return
                    chunk = []
            if chunk and not put(chunk):
                return
            put(done)
        except BaseException as exc:  # noqa: BLE001 - handed to the consumer
            put(exc)

    thread = threading.Thread(target=named(produce), name="memoryui-search-reader", daemon=True)
    thread.start()
    try:
        while True:
            got = q.get()
            if got is done:
                return
            if isinstance(got, BaseException):
                raise got
            yield from got
    finally:
        stop.set()
        thread.join()
