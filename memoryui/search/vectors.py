"""Search by meaning: every passage (a file's sections, a daily log's entries) as a vector,
stored beside the keyword index and asked for the passages nearest a text.

Writing (`VectorWriter`) happens inside the keyword index's own write transaction, so both
indexes always hold the same files; it runs wherever the keyword index is fed (the committer's
drain, a worker standing in, catch-up, rebuild), never in a write's request. A passage whose
text hash the file already had keeps its vector (only its lines are updated): an edit embeds
only what changed.

Reading (`VectorSearch.nearest`): each row also holds the vector's sign bits (32 bytes for 256
dimensions). A process keeps only those bits, the row ids and small scope and kind numbers
(about 46 bytes a passage, so a million passages take ~46 MB per worker, not the 1 GB their
float32 vectors would), refreshed by generation: new rows are read as they come, removed
ones found by their ids (`signbits.Bits`). A query ranks every passage by Hamming distance
(numpy's bitwise_count), the nearest few thousand by its vector dotted with their signs, then
reads the float32 vectors of the best few hundred from the database and ranks those by exact
cosine. Storage is the backend's (`vectors_db.py`).
"""

from __future__ import annotations

import logging
import os
import threading
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from memoryui.store import Kind

from .documents import DocReader
from .embeddings import DIM, Embedder, embedder
from .embedworker import HELPER_AFTER, IN_FLIGHT, Answer, Helper, embed_texts
from .passages import DailyMemo, Section, sections
from .signbits import Bits, closest, refine, sign_code

if TYPE_CHECKING:
    import numpy as np
else:
    from .lazy import numpy as np  # imported at the first vector read or written

if TYPE_CHECKING:
    from memoryui.store import Store

    from .documents import Doc
    from .vectors_db import VectorStorage

log = logging.getLogger("memoryui.search")

WRITE_BATCH = 256  # documents embedded at once while indexing
RERANK = 256  # passages re-ranked by exact cosine after the bit-level passes (at least)
WIDEN = 16  # the Hamming pass keeps this many times RERANK for the finer pass on signs


@dataclass(frozen=True)
class Passage:
    path: str
    scope: str
    kind: str
    heading: str
    start_line: int  # 1-based, inclusive
    end_line: int
    text: str
    score: float  # cosine similarity to the query, -1..1
    entry_id: str | None = None  # the daily entry the passage is (daily logs)


def query_vector(model: Embedder, text: str) -> np.ndarray | None:
    """The text's vector, or None when the model knows none of its words (a zero row)."""
    vec = model.embed([text])[0]
    return vec if np.any(vec) else None


class VectorWriter:
    """The vector half of one index write: buffers documents, embeds what is new, writes
    rows through the backend's connection (the same transaction as the keyword rows)."""

    def __init__(self, storage: VectorStorage, conn: Any, *, clear: bool,
                 daily: DailyMemo | None = None) -> None:
        self.storage = storage
        self.daily = daily  # the last parses of daily logs, where this process keeps them
        self.conn = conn
        self.model = embedder()
        self.clear = clear
        self._docs: list[Doc] = []
        self.changed = clear
        self.removed = clear  # rows went: readers must look for the ids still there
        self.embedded = 0  # passages embedded by this write (tests and the bench read it)
        self._seen = 0  # documents flushed
        self._helper: Helper | None = None  # a full build's second core (`embedworker`)
        self._helper_failed = False
        self._sent: deque[list[tuple[Doc, Section]]] = deque()  # not answered yet
        if clear:
            storage.clear(conn)

    def feed(self, docs: Iterable[Doc]) -> Iterable[Doc]:
        """`docs`, passed through while their passages are written in batches."""
        for d in docs:
            self.add(d)
            yield d

    def add(self, doc: Doc) -> None:
        self._docs.append(doc)
        if len(self._docs) >= WRITE_BATCH:
            self.flush()

    def remove(self, paths: Sequence[str]) -> None:
        if paths:
            self.storage.delete_paths(self.conn, list(paths))
            self.changed = self.removed = True

    def flush(self) -> None:
        docs, self._docs = self._docs, []
        if not docs:
            return
        if self.model is None:  # keyword search only: no passage is kept stale
            self.storage.delete_paths(self.conn, [d.path for d in docs])
            self.changed = self.removed = True
            return
        if self.clear:  # a full build: every passage is new
            self._seen += len(docs)
            self._build(docs)
            return
        old: dict[str, dict[str, list[tuple]]] = {}
        for row in self.storage.old_rows(self.conn, [d.path for d in docs]):
            old.setdefault(row[1], {}).setdefault(row[2], []).append(row)
        new: list[tuple[Doc, Section]] = []
        keep: list[tuple] = []
        for d in docs:
            held = old.get(d.path, {})
            for s in self._sections(d):
                rows = held.get(s.digest)
                if rows:
                    rid, _p, _h, start, end, heading, entry, scope, kind, shared = rows.pop()
                    if (start, end, heading, entry, scope, kind, shared) != (
                            s.start_line, s.end_line, s.heading, s.entry_id, d.scope, d.kind,
                            d.shared):
                        keep.append((s.heading, s.start_line, s.end_line, s.entry_id, d.scope,
                                     d.kind, d.shared, rid))
                else:
                    new.append((d, s))
        stale = [r[0] for held in old.values() for rows in held.values() for r in rows]
        if stale:
            self.storage.delete_ids(self.conn, stale)
            self.removed = True
        if keep:
            self.storage.relines(self.conn, keep)
        if new:
            self._insert(new, embed_texts(self.model, [s.embedded for _, s in new]))
        self.changed = self.changed or bool(stale or keep or new)

    def _sections(self, doc: Doc) -> list[Section]:
        if self.daily is not None and doc.kind == Kind.DAILY.value:
            return self.daily.sections(doc.path, doc.body)
        return sections(doc.body, doc.kind)

    def _build(self, docs: list[Doc]) -> None:
        """A full build's batch: embedded by the helper process once the build is large
        enough (and there is a core for it), else here."""
        assert self.model is not None
        if (self._helper is None and not self._helper_failed and self._seen > HELPER_AFTER
                and (os.cpu_count() or 1) > 1):
            try:
                self._helper = Helper()
            except OSError as exc:
                log.warning("search by meaning: no helper process for the build (%s)", exc)
                self._helper_failed = True
        cut = [(d, s) for d in docs for s in sections(d.body, d.kind)]
        if self._helper is None:
            self._insert(cut, embed_texts(self.model, [s.embedded for _, s in cut]))
            return
        self._helper.submit([s.embedded for _, s in cut])
        self._sent.append(cut)
        while len(self._sent) > IN_FLIGHT:
            self._collect()

    def _collect(self) -> None:
        """Write the oldest batch the helper has; if it died, embed the rest here."""
        assert self._helper is not None and self.model is not None
        cut = self._sent.popleft()
        try:
            answer = self._helper.answer()
        except RuntimeError as exc:
            log.warning("search by meaning: %s; the build goes on in this process", exc)
            self._helper.close()
            self._helper, self._helper_failed = None, True
            for batch in [cut, *self._sent]:
                self._insert(batch, embed_texts(self.model, [s.embedded for _, s in batch]))
            self._sent.clear()
            return
        self._insert(cut, answer)

    def _insert(self, cut: list[tuple[Doc, Section]], answer: Answer) -> None:
        codes, vecs = answer
        if cut:
            self.storage.insert(self.conn, [
                (d.path, d.scope, d.kind, d.shared, s.heading, s.start_line, s.end_line,
                 s.entry_id, s.digest, s.text, codes[i].tobytes(), vecs[i].tobytes())
                for i, (d, s) in enumerate(cut)])
            self.embedded += len(cut)
            self.changed = True

    def finish(self) -> None:
        self.flush()
        if self._helper is not None:
            while self._sent and self._helper is not None:
                self._collect()
            if self._helper is not None:
                self._helper.close()
                self._helper = None
        if self.changed:
            self.storage.bump(self.conn, self.model.name if self.model is not None else "",
                              self.removed)


class VectorSearch:
    """The reading side of search by meaning; the backends provide `vectors` (storage)."""

    vectors: VectorStorage

    def _bits(self) -> Bits:
        """This process's bits, current with the stored generation."""
        lock: threading.Lock = self.__dict__.setdefault("_bits_lock", threading.Lock())
        with lock:
            bits: Bits = self.__dict__.setdefault("_bits_cache", Bits())
            generation = self.vectors.generation()
            if generation == bits.generation:
                return bits
            removed = bits.generation is not None and generation[1] != bits.generation[1]
            bits.append(self.vectors.rows_after(bits.max_id))
            if removed:
                live = np.fromiter(self.vectors.live_ids(), dtype=np.int64)
                bits.keep(live)
                if len(live) != len(bits.ids):  # the table was made anew: read it whole
                    bits = self.__dict__["_bits_cache"] = Bits()
                    bits.append(self.vectors.rows_after(0))
            bits.generation = generation
            return bits

    def _vector_transaction(self, fn: Callable[[Any], object]) -> None:
        raise NotImplementedError

    def _catch_up_vectors(self, store: Store) -> None:
        """Embed every file again when the stored vectors are not this model's (the index
        was built with embeddings off, or by another model)."""
        model = embedder()
        if model is None or self.vectors.model() == model.name:
            return
        paths: list[str] = self.catalogue.by_change()  # type: ignore[attr-defined]
        reader = DocReader(store, bulk=True)

        def embed_all(conn: Any) -> None:
            if self.vectors.model() == model.name:  # another process did it meanwhile
                return
            writer = VectorWriter(self.vectors, conn, clear=True)
            for p in paths:
                doc = reader.read(p)
                if doc is not None:
                    writer.add(doc)
            writer.finish()

        self._vector_transaction(embed_all)
        log.info("search by meaning: %d files embedded with %s", len(paths), model.name)

    def vectors_ready(self) -> bool:
        """Whether passages are embedded by the model this process has (what this process
        wrote is indexed first, as for a search: a fresh index records its model then)."""
        model = embedder()
        if model is None:
            return False
        self._drain_own_writes()
        return self.vectors.model() == model.name

    def _drain_own_writes(self) -> None:
        drain = getattr(self, "drain", None)  # (the updater's, in every backend)
        if drain is not None:
            drain()

    def nearest(self, text: str, k: int = 5, *, kinds: set[str] | None = None,
                exclude_paths: set[str] | None = None, scope: str | None = None,
                visible_to: str | None = None) -> list[Passage]:
        """The `k` indexed passages closest in meaning to `text`, best first (a scope's own
        and, with `visible_to`, only what that scope may read). [] when the model is not
        available or knows none of the text's words."""
        return self.nearest_among(text, k, scopes=None if scope is None else [scope],
                                  kinds=kinds, visible_to=visible_to,
                                  exclude_paths=exclude_paths)

    def nearest_among(self, text: str, k: int, *, scopes: Sequence[str] | None = None,
                      kinds: Iterable[str] | None = None, visible_to: str | None = None,
                      exclude_paths: set[str] | None = None,
                      vector: np.ndarray | None = None) -> list[Passage]:
        """`nearest` with several scopes; `vector`: the text's, when the caller has it."""
        model = embedder()
        k = max(0, int(k))
        if model is None or k == 0 or not text.strip():
            return []
        self._drain_own_writes()
        query = vector if vector is not None else query_vector(model, text)
        if query is None:
            return []
        bits = self._bits()
        mask = bits.mask(scopes, kinds, visible_to)
        if not len(bits.ids) or (mask is not None and not mask.any()):
            return []
        want = max(RERANK, k * 8 + len(exclude_paths or ()) * 4)
        rows = closest(bits.codes, sign_code(query[None, :]).view(np.uint64)[0], mask,
                       max(want * 2, RERANK * WIDEN))
        rows = refine(bits.codes, rows, query, want)
        ids = [int(i) for i in bits.ids[rows]]
        scored = self.vectors.vectors_of(ids)  # (id, path, vec): the exact ranking
        if exclude_paths:
            scored = [r for r in scored if r[1] not in exclude_paths]
        if not scored:
            return []
        matrix = np.frombuffer(b"".join(bytes(r[2]) for r in scored), dtype=np.float32)
        scores = matrix.reshape(len(scored), DIM) @ query
        best = np.argsort(-scores, kind="stable")[:k]
        chosen = {scored[i][0]: float(scores[i]) for i in best}
        out = [Passage(path, sc, kd, heading, start, end, body, chosen[rid], entry)
               for rid, path, sc, kd, heading, start, end, body, entry
               in self.vectors.fetch(list(chosen))]
        out.sort(key=lambda p: (-p.score, p.path, p.start_line))
        return out
