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
database, `state.OrmVerdicts`); a passage reworded since is a new pair.

A proposed change's added statements are candidates the same way (`for_proposals`, shown
on its card; `against_file` for the curated file's page): the lead keeps both or dismisses
there, remembered per statement wording, and approves or rejects the proposal as any other.
Plain Python: no Django.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from memoryui.caches import MEANING_FILES
from memoryui.search.embeddings import Embedder, embedder
from memoryui.secrets import added_lines
from memoryui.store import Actor, InvalidName, Kind, Store
from memoryui.store.layout import Address

from .actions import promote_entries
from .entries import Item, items_of, stamp_of
from .errors import ReviewError
from .ledger import Ledger
from .meaning import Match, Passage, Scored, cached_file, matches, passages_of, pick, scan
from .meaning import digest as wording
from .meaning import shared_and_skills as shared_curated
from .queue import resolve
from .similar import own_files, paragraph_spans
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


# -- proposals ---------------------------------------------------------------------------
# A proposal's added statements (the paragraphs, list items and table rows of its proposed
# text that hold an added line) are compared with the curated passages of every other
# curated file (global memory, world topics, skills, each scope's MEMORY.md) and with the
# lines of its own file that it keeps: a line it replaces is in its diff already. The
# lead keeps both or dismisses (remembered per statement wording and passage wording, so
# the same pair is not flagged again, in this proposal or a later one for the file); the
# proposal itself is approved or rejected as any other.

Proposed = tuple[str, str | None, str | None]  # (its file's path, current text, proposed)


@dataclass
class ProposalCandidate:
    """A statement a proposal adds and a curated passage it may contradict."""

    path: str  # the proposal's file
    start: int  # the statement's lines in the proposed text
    end: int
    text: str
    match: Match

    @property
    def statement(self) -> str:
        return statement_id(self.text)

    @property
    def pair(self) -> Pair:
        return (self.path, self.statement, self.match.passage.path, self.match.passage.digest)


def statement_id(text: str) -> str:
    """Names a proposed statement by its wording (what a verdict about it is kept under)."""
    return "proposed-" + wording(text)


def _statements(path: str, current: str | None, proposed: str | None
                ) -> tuple[list[Passage], list[Passage]]:
    """(the statements a proposal adds, the passages of its file it keeps as they are)."""
    if not proposed:
        return [], []
    added = {n for n, _line in added_lines(current, proposed)}
    spans = [Passage(path, s, e, t) for s, e, t in paragraph_spans(proposed)]
    new = [p for p in spans if any(n in added for n in range(p.start, p.end + 1))]
    same = {p.digest for p in spans} - {p.digest for p in new}
    # as they stand in the current file: their lines there are what a page links to
    kept = [p for p in passages_of(None, path, current or "") if p.digest in same]
    return new, kept


def _curated_files(store: Store) -> list[tuple[str, tuple[float, int]]]:
    files = shared_curated(store)
    for scope in store.scopes():
        files += own_files(store, scope)
    return files


def for_proposals(store: Store, verdicts: Verdicts, proposals: Sequence[Proposed],
                  only: str | None = None) -> list[list[ProposalCandidate]] | None:
    """For each proposal, its undecided contradiction candidates (at most MAX_CONFLICTS per
    statement, best first); None when the model cannot load. Each curated file (`only`:
    that one file) is scored against every statement of the page at once."""
    model = embedder()
    if model is None:
        return None
    cut = [_statements(path, cur, new) for path, cur, new in proposals]
    texts = [(i, p) for i, (new, _kept) in enumerate(cut) for p in new]
    if not texts:
        return [[] for _p in proposals]
    vectors = model.embed([p.text for _i, p in texts])
    found: list[Scored] = [[] for _t in texts]
    files = _curated_files(store)
    for path, stamp in files if only is None else [f for f in files if f[0] == only]:
        rows = [r for r, (i, _p) in enumerate(texts) if proposals[i][0] != path]
        if rows:
            scan(*cached_file(store, model, path, stamp), vectors[rows], found, rows)
    for i, (_new, kept) in enumerate(cut):
        rows = [r for r, (j, _p) in enumerate(texts) if j == i]
        if kept and rows and only in (None, proposals[i][0]):
            scan(kept, model.embed([p.text for p in kept]), vectors[rows], found, rows)
    out: list[list[ProposalCandidate]] = [[] for _p in proposals]
    for (i, p), close in zip(texts, found, strict=True):
        out[i] += [ProposalCandidate(p.path, p.start, p.end, p.text, m)
                   for m in pick(close, p.text)[1]]
    done = verdicts.decided([c.pair for cs in out for c in cs])
    return [[c for c in cs if c.pair not in done][:MAX_ON_PAGE] for cs in out]


def against_file(store: Store, verdicts: Verdicts, target: str,
                 proposals: Sequence[Proposed]) -> list[tuple[int, ProposalCandidate]]:
    """The open proposals' statements that may contradict a passage of the file at `target`,
    each with its proposal's index in `proposals` (what the file's page shows beside the
    entries of `in_file`)."""
    found = for_proposals(store, verdicts, proposals, only=target) or []
    return [(i, c) for i, cs in enumerate(found) for c in cs
            if c.match.passage.path == target][:MAX_ON_PAGE]


def decide_proposal(store: Store, verdicts: Verdicts, *, user: str, proposal: Proposed,
                    statement: str, path: str, digest: str, choice: str) -> None:
    """Keep both or dismiss a proposal's candidate: remembered, nothing changes. The
    statement must be one the proposal adds, the passage one that reads as it did."""
    if choice not in (KEEP, DISMISS):
        raise ReviewError("choose keep or dismiss (approve or reject the proposal itself)")
    own, current, proposed = proposal
    new, kept = _statements(own, current, proposed)
    said = [p for p in new if statement_id(p.text) == statement]
    if not said:
        raise ReviewError("this proposal does not add that statement (any more); reload "
                          "the page")
    if path == own:
        if not any(p.digest == digest for p in kept):
            raise ReviewError(f"the line of {path} this statement contradicts has changed "
                              "since; reload the page")
    else:
        _curated(store, path)
        find(store, path, digest)
    verdicts.record((own, statement, path, digest), choice, user)
