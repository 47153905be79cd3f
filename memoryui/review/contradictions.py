"""Contradiction candidates a lead resolves: replace the old line, keep both, or dismiss.

A candidate is an undecided daily entry and a curated passage close in meaning that differ
in a number, a date, a name or a negation (`meaning`). It shows on the entry's card and on
the curated file's page, both texts side by side. Nothing changes by itself; the lead
chooses:

- **replace**: the passage's lines become the entry's text, in one commit through the
  store's write path (`actions.promote_entries`: the message names the entry and the old
  line, the `Promoted-From` trailer cites it, the entry is recorded as promoted and the
  promotion can be undone like any other);
- **keep both**: both statements stand (say, they hold in different contexts); the pair is
  not flagged again;
- **dismiss**: not a contradiction; the pair is not flagged again.

Each choice is remembered per (entry, file, passage wording) in the `Verdicts` store (the
database, `state.OrmVerdicts`); a passage reworded since is a new pair. Plain Python: no
Django.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from memoryui.caches import MEANING_FILES
from memoryui.search.embeddings import Embedder, embedder
from memoryui.store import Actor, InvalidName, Kind, Store
from memoryui.store.layout import Address

from .actions import promote_entries
from .entries import Item, items_of, stamp_of
from .errors import ReviewError
from .ledger import Ledger
from .meaning import Match, Passage, Scored, matches, passages_of, pick, scan
from .queue import resolve
from .sources import daily_files
from .targets import TARGET_KINDS, make_target

if TYPE_CHECKING:
    import numpy as np
else:
    from memoryui.search.lazy import numpy as np  # imported when a text is first compared

REPLACE, KEEP, DISMISS = "replace", "keep", "dismiss"
CHOICES = {REPLACE: "Replaced the old line", KEEP: "Kept both", DISMISS: "Dismissed"}
DAYS = 7  # a file's page looks at the undecided entries of this many days up to today
MAX_ON_PAGE = 20

Pair = tuple[str, str, str, str]  # (daily log path, entry id, curated file path, digest)


class Verdicts(Protocol):
    """The lead's choices about contradiction candidates (each call one transaction)."""

    def decided(self, pairs: Iterable[Pair]) -> dict[Pair, str]:
        """The choice made about each pair that has one."""
        ...

    def record(self, pair: Pair, choice: str, user: str, commit_sha: str = "") -> None:
        """Remember a choice (a later choice about the same pair replaces it)."""
        ...


@dataclass
class Candidate:
    """An entry and a curated passage it may contradict."""

    item: Item
    match: Match

    @property
    def pair(self) -> Pair:
        return pair_of(self.item, self.match.passage)


def pair_of(item: Item, passage: Passage) -> Pair:
    return (item.path, item.entry.id, passage.path, passage.digest)


def mark(store: Store, verdicts: Verdicts, items: Sequence[Item]) -> None:
    """Set each item's `paraphrase` (a passage stating its fact in other words) and
    `conflicts` (undecided contradiction candidates); nothing when the model cannot load."""
    model = embedder()
    if model is None or not items:
        return
    found = matches(store, [(it.scope, it.entry.text) for it in items],
                    _vectors_of(store, model, items))
    if not found:
        return
    pairs = [pair_of(it, m.passage) for it, (_d, ms) in zip(items, found, strict=True)
             for m in ms]
    done = verdicts.decided(pairs) if pairs else {}
    for it, (dup, conflicts) in zip(items, found, strict=True):
        it.paraphrase = dup
        it.conflicts = [m for m in conflicts if pair_of(it, m.passage) not in done]


def _entry_vectors(store: Store, model: Embedder, path: str, scope: str, date: str,
                   stamp: tuple[float, int]) -> tuple[list[Item], np.ndarray]:
    key = (str(store.root), path, "entries")
    hit = MEANING_FILES.get(key)
    if hit and hit[0] == stamp:
        return hit[1]
    items = items_of(store, path, scope, date, stamp)
    value = (items, model.embed([it.entry.text for it in items]))
    MEANING_FILES.put(key, (stamp, value))
    return value


def _vectors_of(store: Store, model: Embedder, items: Sequence[Item]) -> np.ndarray:
    """The items' rows, from their logs' vectors (each log embedded once per stamp)."""
    rows: list[np.ndarray] = []
    logs: dict[str, dict[str, np.ndarray]] = {}
    for it in items:
        if it.path not in logs:
            stamp = stamp_of(store, it.path)
            logs[it.path] = {}
            if stamp is not None:
                those, vectors = _entry_vectors(store, model, it.path, it.scope, it.date, stamp)
                logs[it.path] = {x.entry.id: v for x, v in zip(those, vectors, strict=True)}
        row = logs[it.path].get(it.entry.id)
        rows.append(row if row is not None else model.embed([it.entry.text])[0])
    return np.vstack(rows)


def in_file(store: Store, ledger: Ledger, verdicts: Verdicts, path: str, today: dt.date
            ) -> list[Candidate] | None:
    """The undecided entries of the last DAYS days that may contradict a passage of the
    curated file at `path` (a scope's MEMORY.md: that scope's entries); None when the model
    cannot load or the file is not a promotion target."""
    addr = store.address_of(path)
    model = embedder()
    if addr is None or addr.kind not in TARGET_KINDS or model is None:
        return None
    passages = passages_of(store, path)
    if not passages:
        return []
    matrix = model.embed([p.text for p in passages])
    since = today - dt.timedelta(days=DAYS - 1)
    states = ledger.decisions_between(since.isoformat(), today.isoformat())
    found: list[Candidate] = []
    for log, scope, date, stamp in daily_files(store, since, today):
        if addr.kind == Kind.MEMORY and scope != addr.scope:
            continue
        items, vectors = _entry_vectors(store, model, log, scope, date, stamp)
        scored: list[Scored] = [[] for _it in items]
        scan(passages, matrix, vectors, scored)
        for it, close in zip(items, scored, strict=True):
            if close and states.get(it.ref) is None:
                found += [Candidate(it, m) for m in pick(close, it.entry.text)[1]]
    done = verdicts.decided([c.pair for c in found]) if found else {}
    found = [c for c in found if c.pair not in done]
    found.sort(key=lambda c: (c.match.passage.start, c.item.sort_key))
    return found[:MAX_ON_PAGE]


def _curated(store: Store, path: str) -> Address:
    """The address of a file entries are promoted into; ReviewError for any other path."""
    try:
        addr = store.address_of(path)
    except InvalidName as exc:
        raise ReviewError(str(exc)) from None
    if addr is None or addr.kind not in TARGET_KINDS:
        raise ReviewError(f"{path[:200]} is not a file entries are promoted into")
    return addr


def find(store: Store, path: str, digest: str) -> Passage:
    """The passage of `path` whose wording has `digest`; ReviewError when it changed."""
    for p in passages_of(store, path):
        if p.digest == digest:
            return p
    raise ReviewError(f"the line of {path} this entry contradicts has changed since; "
                      "reload the page")


def replaced(text: str, passage: Passage, new: str) -> str:
    """`text` with the passage's lines replaced by `new`, kept a list item or table row
    when it was one (the old line's marker and indent kept)."""
    lines = text.splitlines(keepends=True)
    first = lines[passage.start - 1]
    body = first.lstrip()
    indent = first[:len(first) - len(body)]
    marker = ""
    for m in ("- ", "* ", "+ "):
        if body.startswith(m):
            marker = m
    words = " ".join(new.split()) if marker else new.strip()
    end = "\n" if lines[passage.end - 1].endswith("\n") else ""
    lines[passage.start - 1:passage.end] = [indent + marker + words + end]
    return "".join(lines)


def replace(store: Store, ledger: Ledger, verdicts: Verdicts, *, actor: Actor, key: str,
            path: str, digest: str) -> str:
    """The passage becomes the entry's text in one commit citing the entry; returns its sha.

    The passage is found by its wording (`digest`), so lines edited elsewhere in the file
    since the lead looked do not matter; a reworded passage is refused, and a write that
    lands between this read and the commit is the store's Conflict (409)."""
    items = resolve(store, ledger, [key])
    if not items:
        raise ReviewError("name the entry whose text replaces the line")
    it = items[0]
    addr = _curated(store, path)
    target = make_target(store, addr.kind.value, addr.scope, addr.name)
    if target.text is None:
        raise ReviewError(f"{path} does not exist any more")
    old = find(store, path, digest)
    message = (f"Replace {path}:{old.start} with the {it.date}"
               f"{' ' + it.time if it.time else ''} entry of {it.scope} ({it.key})\n\n"
               f"Was: {' '.join(old.text.split())[:200]}")
    promo = promote_entries(store, ledger, actor=actor, keys=[key], target=target,
                            text=replaced(target.text, old, it.entry.text), base=target.base,
                            message=message)
    verdicts.record(pair_of(it, old), REPLACE, actor.name, promo.commit_sha)
    return promo.commit_sha


def decide(store: Store, ledger: Ledger, verdicts: Verdicts, *, user: str, key: str,
           path: str, digest: str, choice: str) -> Item:
    """Keep both or dismiss: remembered, nothing in the files changes."""
    if choice not in (KEEP, DISMISS):
        raise ReviewError("choose replace, keep or dismiss")
    items = resolve(store, ledger, [key])
    if not items:
        raise ReviewError("name the entry this choice is about")
    _curated(store, path)
    old = find(store, path, digest)
    verdicts.record(pair_of(items[0], old), choice, user)
    return items[0]
