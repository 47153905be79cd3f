"""The sign bits of passage vectors: what a worker holds for search by meaning, and the
two passes over them that pick the few hundred passages the exact ranking reads.

Each passage's vector is kept as its 256 sign bits (32 bytes). A query first ranks every
passage by Hamming distance to its own signs (`closest`), then the nearest few thousand by
its vector dotted with their signs (`refine`), which tracks the cosine far better; the best
of those go to the exact ranking (`vectors.VectorSearch.nearest_among`). Plain numpy.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterable
from typing import TYPE_CHECKING

from .embeddings import DIM

if TYPE_CHECKING:
    import numpy as np
else:
    from .lazy import numpy as np  # imported at the first vector read or written

CODE_WORDS = DIM // 64  # uint64 words of a passage's sign bits
CODE_BYTES = DIM // 8
APPEND_CHUNK = 65_536  # rows a worker reads into its bits at a time


def sign_code(vectors: np.ndarray) -> np.ndarray:
    """Each row's sign bits, packed: (n, DIM // 8) uint8."""
    return np.packbits(vectors > 0, axis=1)


def closest(codes: np.ndarray, code: np.ndarray, mask: np.ndarray | None,
            want: int) -> np.ndarray:
    """Columns of `codes` (those `mask` allows) about the `want` nearest `code` in Hamming
    distance: a histogram of the distances gives the cut (an argpartition of a million
    rows costs more than the distances themselves)."""
    words, n = codes.shape
    distance = np.zeros(n, dtype=np.uint16)
    scratch, counted = np.empty(n, dtype=np.uint64), np.empty(n, dtype=np.uint8)
    for w in range(words):
        np.bitwise_xor(codes[w], code[w], out=scratch)
        np.bitwise_count(scratch, out=counted)
        distance += counted
    far = words * 64 + 1
    if mask is not None:
        distance[~mask] = far
    histogram = np.cumsum(np.bincount(distance, minlength=far + 1))
    cut = min(int(np.searchsorted(histogram, want)), far - 1)
    rows = np.flatnonzero(distance <= cut)
    if len(rows) > want * 2:  # many at the cut's distance: keep the nearest
        rows = rows[np.argpartition(distance[rows], want)[:want]]
    return rows


@functools.cache
def _byte_bits() -> np.ndarray:
    """Each byte value's eight bits as floats (a table made at the first use)."""
    return np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1).astype(np.float32)


def refine(codes: np.ndarray, rows: np.ndarray, query: np.ndarray, want: int) -> np.ndarray:
    """The `want` of `rows` whose sign bits agree best with the query's own values (the
    query's vector dotted with each passage's signs, by a table of each byte's part): far
    closer to the cosine than the Hamming distance between two sets of signs, and cheap on
    a few thousand rows."""
    if len(rows) <= want:
        return rows
    table = _byte_bits() @ query.reshape(CODE_BYTES, 8).T  # (byte value, byte position)
    data = np.ascontiguousarray(codes[:, rows].T).view(np.uint8)  # (rows, CODE_BYTES)
    estimate = table[data, np.arange(CODE_BYTES)].sum(axis=1)
    return rows[np.argpartition(-estimate, want)[:want]]


class Bits:
    """One process's view of the passages: ids, sign bits, scope and kind numbers."""

    def __init__(self) -> None:
        self.generation: tuple[str, str] | None = None  # none read yet
        self.ids = np.zeros(0, dtype=np.int64)
        # one row per 64-bit word, one column per passage: each word's XOR and popcount
        # runs over contiguous memory (4x faster than summing across a (n, 4) array)
        self.codes = np.zeros((CODE_WORDS, 0), dtype=np.uint64)
        self.scopes = np.zeros(0, dtype=np.int32)
        self.kinds = np.zeros(0, dtype=np.int16)
        self.shared = np.zeros(0, dtype=bool)
        self.scope_no: dict[str, int] = {}
        self.kind_no: dict[str, int] = {}

    @property
    def max_id(self) -> int:
        return int(self.ids[-1]) if len(self.ids) else 0

    def append(self, rows: Iterable[tuple]) -> None:
        """Add rows in id order, read in chunks: a million rows held as Python objects at
        once would take a worker's memory up by a few hundred MB for the first query."""
        parts: list[tuple[np.ndarray, ...]] = []
        it = iter(rows)
        while chunk := list(itertools.islice(it, APPEND_CHUNK)):
            parts.append(self._arrays(chunk))
        if not parts:
            return
        ids, codes, scopes, kinds, shared = zip(*parts, strict=True)
        self.ids = np.concatenate([self.ids, *ids])
        self.codes = np.concatenate([self.codes, *codes], axis=1)
        self.scopes = np.concatenate([self.scopes, *scopes])
        self.kinds = np.concatenate([self.kinds, *kinds])
        self.shared = np.concatenate([self.shared, *shared])

    def _arrays(self, chunk: list[tuple]) -> tuple[np.ndarray, ...]:
        bits = np.frombuffer(b"".join(bytes(r[4]) for r in chunk), dtype=np.uint64)
        return (np.fromiter((r[0] for r in chunk), dtype=np.int64, count=len(chunk)),
                bits.reshape(len(chunk), CODE_WORDS).T,
                np.fromiter((self.scope_no.setdefault(r[1], len(self.scope_no))
                             for r in chunk), dtype=np.int32, count=len(chunk)),
                np.fromiter((self.kind_no.setdefault(r[2], len(self.kind_no))
                             for r in chunk), dtype=np.int16, count=len(chunk)),
                np.fromiter((bool(r[3]) for r in chunk), dtype=bool, count=len(chunk)))

    def keep(self, live: np.ndarray) -> None:
        mask = np.isin(self.ids, live, assume_unique=True)
        self.ids, self.codes = self.ids[mask], self.codes[:, mask]
        self.scopes, self.kinds, self.shared = self.scopes[mask], self.kinds[mask], \
            self.shared[mask]

    def mask(self, scopes: Iterable[str] | None, kinds: Iterable[str] | None,
             visible_to: str | None) -> np.ndarray | None:
        """Rows the filters let through (None: all of them)."""
        out: np.ndarray | None = None

        def narrow(m: np.ndarray) -> None:
            nonlocal out
            out = m if out is None else out & m

        if scopes is not None:
            nos = [self.scope_no[s] for s in scopes if s in self.scope_no]
            narrow(np.isin(self.scopes, np.asarray(nos, dtype=np.int32)))
        if kinds is not None:
            nos = [self.kind_no[k] for k in kinds if k in self.kind_no]
            narrow(np.isin(self.kinds, np.asarray(nos, dtype=np.int16)))
        if visible_to is not None:  # the layout's read rule, as the keyword filters apply it
            own = self.scope_no.get(visible_to, -1) if visible_to else -1
            narrow(self.shared | (self.scopes == own))
        return out
