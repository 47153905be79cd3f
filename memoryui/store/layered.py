"""A map changed copy-on-write in two layers: a change costs what changed, not the map.

The tree model hands out its maps (path -> file, path -> last change) to readers in other
threads and never changes one it has handed out: a change makes a new map. Copying a
200k-entry dict for that took 5-10 ms per write, twice (the tree, then the last-change map
when the commit arrived), on the request right after every write. A `Layered` keeps a big
`base` it never changes and a small `top` of what changed since (a removal is a marker);
a change copies the top only, and once the top holds COMPACT_AT entries it is folded into a
new base: one whole copy per COMPACT_AT changes instead of one per change.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from itertools import chain
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")

COMPACT_AT = 4096  # changed keys kept on top before they are folded into a new base
_GONE = object()  # on top: the key was removed
_MISSING = object()


class Layered(Mapping[K, V], Generic[K, V]):
    """A read-only mapping; `changed` returns a new one. Reads are a dict lookup or two."""

    __slots__ = ("_base", "_top", "_len")

    def __init__(self, base: dict[K, V] | None = None, top: dict | None = None,
                 length: int | None = None):
        self._base: dict[K, V] = {} if base is None else base  # never changed once here
        self._top: dict = {} if top is None else top
        self._len = len(self._base) if length is None else length

    @classmethod
    def of(cls, mapping: Mapping[K, V]) -> Layered[K, V]:
        """`mapping` as a Layered: a dict becomes the base as it is (not copied), so its
        owner must not change it afterwards."""
        if isinstance(mapping, Layered):
            return mapping
        return cls(mapping if isinstance(mapping, dict) else dict(mapping))

    def __getitem__(self, key: K) -> V:
        top = self._top
        if top:
            value = top.get(key, _MISSING)
            if value is not _MISSING:
                if value is _GONE:
                    raise KeyError(key)
                return value
        return self._base[key]

    def get(self, key: K, default: object = None) -> V | None:  # type: ignore[override]
        top = self._top
        if top:
            value = top.get(key, _MISSING)
            if value is not _MISSING:
                return default if value is _GONE else value  # type: ignore[return-value]
        return self._base.get(key, default)  # type: ignore[return-value]

    def __contains__(self, key: object) -> bool:
        top = self._top
        if top and key in top:
            return top[key] is not _GONE
        return key in self._base

    def __len__(self) -> int:
        return self._len

    def __iter__(self) -> Iterator[K]:
        top = self._top
        if not top:
            return iter(self._base)
        return chain((k for k in self._base if k not in top),
                     (k for k, v in top.items() if v is not _GONE))

    def items(self) -> Iterable[tuple[K, V]]:  # type: ignore[override]
        """Iterate once (the base's own view when nothing changed on top)."""
        top = self._top
        if not top:
            return self._base.items()
        return chain(((k, v) for k, v in self._base.items() if k not in top),
                     ((k, v) for k, v in top.items() if v is not _GONE))

    def values(self) -> Iterable[V]:  # type: ignore[override]
        return (v for _k, v in self.items())

    def copy(self) -> Layered[K, V]:
        """The same content under a new identity (readers cache by identity)."""
        return Layered(self._base, dict(self._top), self._len)

    def changed(self, changes: Mapping[K, V], removed: Iterable[K] = ()) -> Layered[K, V]:
        """A new map with `changes` set and `removed` taken out; this one stays as it is."""
        base, top, n = self._base, dict(self._top), self._len
        for key, value in changes.items():
            held = top.get(key, _MISSING)
            if held is _GONE or (held is _MISSING and key not in base):
                n += 1
            top[key] = value
        for key in removed:
            held = top.get(key, _MISSING)
            if held is _GONE or (held is _MISSING and key not in base):
                continue  # not there
            n -= 1
            if key in base:
                top[key] = _GONE
            else:
                del top[key]
        if len(top) < COMPACT_AT:
            return Layered(base, top, n)
        folded = dict(base)
        for key, value in top.items():
            if value is _GONE:
                del folded[key]
            else:
                folded[key] = value
        return Layered(folded)
