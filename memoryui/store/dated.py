"""Commits by author date, for the activity feed's since/until: kept, not re-read per page.

git's own `--since` stops at the first older commit, so it misses newer ones listed after
it when dates are out of order (imports, clock skew, backdated demo data): a dated page
compares every commit's author date instead. Reading every commit's date is a walk of the
whole history (0.3 s at 20k commits, seconds at 200k), so the dates of one filter (the
pathspecs and author arguments of `git log`) are kept per workspace, compactly (8 bytes of
time and 20 of id a commit), and extended with just the new commits when the branch moves
forward; anything else (a rewritten branch, another filter) reads them again.
"""

from __future__ import annotations

import threading
from array import array
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

from .gitcli import run_git

KEEP = 8  # filters kept per process (the feed's plain dated view and a few filtered ones)


@dataclass
class _Dates:
    head: str
    times: array  # author time of each commit, in `git log` order (newest first)
    ids: bytes  # 20 bytes per commit, same order


_kept: OrderedDict[tuple, _Dates] = OrderedDict()
_lock = threading.Lock()


def _read(root: Path, rng: list[str], filters: list[str], pathspecs: list[str]
          ) -> tuple[array, bytes]:
    raw = run_git(root, "log", "-z", "--format=%H %at", "--no-color", *filters, *rng, "--",
                  *pathspecs, check=False).decode()
    times, ids = array("q"), bytearray()
    for rec in raw.split("\0"):
        sha, _, at = rec.strip().partition(" ")
        if at and len(sha) == 40:
            times.append(int(at))
            ids += bytes.fromhex(sha)
    return times, bytes(ids)


def _is_ancestor(root: Path, old: str, new: str) -> bool:
    try:
        run_git(root, "merge-base", "--is-ancestor", old, new)
        return True
    except Exception:  # noqa: BLE001 - not an ancestor, or gone: read everything again
        return False


def dates(root: Path, head: str, filters: list[str], pathspecs: list[str]) -> _Dates:
    """Author dates of every commit `git log <filters> head -- <pathspecs>` lists."""
    key = (str(root), tuple(filters), tuple(pathspecs))
    with _lock:
        kept = _kept.get(key)
    if kept is not None and kept.head == head:
        return kept
    if kept is not None and _is_ancestor(root, kept.head, head):
        times, ids = _read(root, [f"{kept.head}..{head}"], filters, pathspecs)
        fresh = _Dates(head, times + kept.times, ids + kept.ids)
    else:
        fresh = _Dates(head, *_read(root, [head], filters, pathspecs))
    with _lock:
        _kept[key] = fresh
        _kept.move_to_end(key)
        while len(_kept) > KEEP:
            _kept.popitem(last=False)
    return fresh


def between(root: Path, head: str, filters: list[str], pathspecs: list[str],
            lo: int | None, hi: int | None, stop: int) -> list[str]:
    """Ids (newest first) of the first `stop` commits dated within lo..hi (inclusive)."""
    d = dates(root, head, filters, pathspecs)
    out: list[str] = []
    lo_ = lo if lo is not None else -(1 << 62)
    hi_ = hi if hi is not None else 1 << 62
    for i, t in enumerate(d.times):
        if lo_ <= t <= hi_:
            out.append(d.ids[20 * i:20 * i + 20].hex())
            if len(out) >= stop:
                break
    return out
