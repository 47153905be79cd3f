"""Near-duplicate entries and facts memory already holds, scored with `rapidfuzz`.

Agents write the same fact again and again with small changes ("Deployed api v2.3 to
production; canary at 5%…" one day, "v2.4" the next). Texts are normalised (lower case,
markdown punctuation dropped, numbers, versions, times and hashes masked as `#`, while
identifiers such as INC-6 or db-7 are kept: texts naming different ones never match) and
compared with `rapidfuzz.fuzz.token_set_ratio`; two texts are "similar" at or above
`threshold()` (0..100, env `MEMORYUI_SIMILAR`, default `DEFAULT_THRESHOLD`; 0 turns
grouping and "already known" off). A text of fewer than `MIN_TOKENS` words, or one less
than `MIN_SHARE` the length of the other, never matches (a set that is a subset of another
scores 100).

Both steps stay sub-quadratic by blocking: a text is only scored against the few earlier
texts (group leaders, or known paragraphs) that share its rarest words. Plain Python: no
Django.
"""

from __future__ import annotations

import os
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TypeVar

from rapidfuzz import fuzz

from memoryui.caches import SIMILAR_FILES, SIMILAR_GROUPS, SIMILAR_INDEXES
from memoryui.store import InvalidName, Kind, Store, walk
from memoryui.store.mdblocks import fence_map

from .entries import stamp_of
from .targets import kind_files

DEFAULT_THRESHOLD = 88
MIN_TOKENS = 4
MIN_SHARE = 0.6  # the shorter text has at least this share of the longer one's words
KEYS = 4  # rarest words of a text used to find candidates
CANDIDATES = 10  # texts scored per text, at most

_MASK = re.compile(r"\b(?=[0-9a-f]*\d)[0-9a-f]{7,40}\b"  # hashes with a digit
                   r"|(?<![a-z0-9.])v?\d+(?:[.,:/-]\d+)*(?:%|[a-z]{1,3}\b)?")  # 2.6s, v2.3, 5%
# Names with a number are identifiers (INC-6, ACME-2, db-7, ticket #482), kept as one word:
# two texts naming different ones state different facts.
_IDENT = re.compile(r"\b([a-z]+)-(\d+)\b|#(\d+)\b")
_WORD = re.compile(r"[^\W_]+|#", re.UNICODE)

T = TypeVar("T")


def threshold() -> int:
    """MEMORYUI_SIMILAR (0..100); 0 disables grouping and "already known"."""
    raw = os.environ.get("MEMORYUI_SIMILAR", "").strip()
    try:
        value = int(raw) if raw else DEFAULT_THRESHOLD
    except ValueError:
        value = DEFAULT_THRESHOLD
    return max(0, min(100, value))


@lru_cache(maxsize=16384)
def normalise(text: str) -> str:
    """The words of a text that carry its fact: lower case, numbers masked as '#'."""
    text = _IDENT.sub(lambda m: f"{m[1]}{m[2]}" if m[1] else f"no{m[3]}", text.lower())
    return " ".join(_WORD.findall(_MASK.sub(" # ", text)))


@lru_cache(maxsize=8192)
def _wordset(norm: str) -> frozenset[str]:
    """Distinct words of a normalised text, masked numbers not counted."""
    return frozenset(norm.split()) - {"#"}


@lru_cache(maxsize=8192)
def _idents(words: frozenset[str]) -> frozenset[str]:
    """The identifiers among a text's words: letters and digits together (inc6, db7)."""
    return frozenset(w for w in words if not w.isalpha() and not w.isdigit())


def _words(norm: str) -> int:
    return len(_wordset(norm))


def similar(a: str, b: str, cutoff: int) -> float:
    """The score of two normalised texts (0 when below `cutoff` or not comparable).

    Texts sharing less than half the words of the longer one are not scored (at the
    cutoffs worth using, 80 and up, token_set_ratio cannot reach them)."""
    wa, wb = _wordset(a), _wordset(b)
    short, long_ = sorted((len(wa), len(wb)))
    if short < MIN_TOKENS or short < MIN_SHARE * long_:
        return 0.0
    if cutoff >= 80 and 2 * len(wa & wb) < long_:
        return 0.0
    ia, ib = _idents(wa), _idents(wb)
    if ia and ib and ia != ib:  # INC-6 is not INC-7
        return 0.0
    return fuzz.token_set_ratio(a, b, processor=None, score_cutoff=cutoff)


class _Blocks:
    """An inverted index from words to texts: finds the texts worth scoring."""

    def __init__(self, df: Counter[str]) -> None:
        self.df = df
        self.postings: dict[str, list[int]] = defaultdict(list)
        self.texts: list[str] = []
        self.memo: dict[str, list[str]] = {}  # text -> its keys (a cached index is asked again)
        self.found: dict[str, tuple[int, float]] = {}

    def keys(self, norm: str) -> list[str]:
        hit = self.memo.get(norm)
        if hit is None:
            df = self.df
            hit = self.memo[norm] = sorted(_wordset(norm), key=lambda w: (df[w], w))[:KEYS]
            if len(self.memo) > 8192:
                self.memo.clear()
        return hit

    def add(self, norm: str) -> int:
        i = len(self.texts)
        self.texts.append(norm)
        postings = self.postings
        for w in _wordset(norm):
            postings[w].append(i)
        return i

    def best(self, norm: str, cutoff: int) -> tuple[int, float]:
        """(index, score) of the most similar indexed text, or (-1, 0)."""
        votes: Counter[int] = Counter()
        for w in self.keys(norm):
            for i in self.postings.get(w, ())[-256:]:
                votes[i] += 1
        found, top = -1, 0.0
        for i, _n in votes.most_common(CANDIDATES):
            score = similar(norm, self.texts[i], cutoff)
            if score > top:
                found, top = i, score
        return found, top


    def lookup(self, norm: str, cutoff: int) -> tuple[int, float]:
        """`best`, remembered: for an index that is complete (nothing added any more)."""
        key = f"{cutoff}:{norm}"
        hit = self.found.get(key)
        if hit is None:
            hit = self.found[key] = self.best(norm, cutoff)
            if len(self.found) > 8192:
                self.found.clear()
        return hit


def _df(norms: Iterable[str]) -> Counter[str]:
    df: Counter[str] = Counter()
    for n in norms:
        df.update(_wordset(n))
    return df


def group(items: Sequence[T], text: Callable[[T], str], cutoff: int | None = None
          ) -> list[list[T]]:
    """The items in groups of near-duplicates, in the order given (newest first).

    Each group starts with its first item (its leader); a later item joins the group whose
    leader it is most similar to (never a chain of small changes). Cost: each item is
    scored against at most CANDIDATES leaders sharing its rarest words.
    """
    cutoff = threshold() if cutoff is None else cutoff
    if cutoff <= 0:
        return [[it] for it in items]
    norms = [normalise(text(it)) for it in items]
    blocks = _Blocks(_df(norms))
    exact: dict[str, int] = {}  # normalised text -> its leader's index in `blocks`
    of_leader: list[int] = []  # leader's index in `blocks` -> its group in `groups`
    groups: list[list[T]] = []
    for it, norm in zip(items, norms, strict=True):
        if _words(norm) < MIN_TOKENS:  # too short to tell one fact from another
            groups.append([it])
            continue
        lead = exact.get(norm)
        if lead is None:
            found, _score = blocks.best(norm, cutoff)
            lead = found if found >= 0 else None
        if lead is None:
            lead = exact[norm] = blocks.add(norm)
            of_leader.append(len(groups))
            groups.append([])
        groups[of_leader[lead]].append(it)
    return groups


def group_ids(token: tuple, items: Sequence[T], text: Callable[[T], str], cutoff: int
              ) -> list[int]:
    """`group` as one group number per item, kept while `token` (say, the stamps of the
    files the items come from, in this order) is the same."""
    key = (token, cutoff, len(items))
    hit = SIMILAR_GROUPS.get(key)
    if hit is not None:
        return hit
    position = {id(it): n for n, it in enumerate(items)}
    ids = [0] * len(items)
    for g, members in enumerate(group(items, text, cutoff)):
        for it in members:
            ids[position[id(it)]] = g
    SIMILAR_GROUPS.put(key, ids)
    return ids


# -- already known ------------------------------------------------------------------------------

@dataclass(frozen=True)
class Known:
    """Where memory already states an entry's fact."""

    path: str
    line: int  # 1-based
    score: float


_BLOCK = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")


def paragraphs(text: str) -> list[tuple[int, str]]:
    """(first line, text) of each paragraph, list item and table row of a markdown file."""
    return [(start, joined) for start, _end, joined in paragraph_spans(text)]


def paragraph_spans(text: str) -> list[tuple[int, int, str]]:
    """(first line, last line, text) of each paragraph, list item and table row (1-based;
    headings, fenced code and blank lines are in none)."""
    out: list[tuple[int, int, str]] = []
    cur: list[str] = []
    start = 0

    def flush() -> None:
        if cur:
            out.append((start, start + len(cur) - 1, " ".join(cur)))
            cur.clear()

    lines = text.splitlines()
    for n, (line, code) in enumerate(zip(lines, fence_map(lines)[0], strict=True), 1):
        s = line.strip()
        if code or not s or s.startswith("#") or s.startswith("|") and set(s) <= set("|-: "):
            flush()
            continue
        if _BLOCK.match(line) or s.startswith("|") or not cur:
            flush()
            start = n
        cur.append(s)
    flush()
    return out


class _FileIndex:
    def __init__(self, path: str, text: str) -> None:
        self.path = path
        self.rows = [(line, normalise(p)) for line, p in paragraphs(text)]


def clear_caches() -> None:
    SIMILAR_FILES.clear()
    SIMILAR_INDEXES.clear()
    SIMILAR_GROUPS.clear()
    normalise.cache_clear()
    _wordset.cache_clear()
    _idents.cache_clear()


def _file_index(store: Store, path: str, stamp: tuple[float, int]) -> _FileIndex | None:
    key = (str(store.root), path)
    hit = SIMILAR_FILES.get(key)
    if hit and hit[0] == stamp:
        return hit[1]
    try:
        data = walk.read_nofollow(store.root, path)
    except (InvalidName, OSError):
        return None
    if data is None:
        return None
    idx = _FileIndex(path, data.decode("utf-8", "replace"))
    SIMILAR_FILES.put(key, (stamp, idx))
    return idx


def _stamped(store: Store, path: str) -> list[tuple[str, tuple[float, int]]]:
    """[(path, (mtime, size))] when `path` is a regular file reached without a link."""
    stamp = stamp_of(store, path)  # lstat, after checking no folder on the way is a link
    return [(path, stamp)] if stamp is not None else []


def own_files(store: Store, scope: str) -> list[tuple[str, tuple[float, int]]]:
    """The scope's MEMORY.md, when the layout has one and it exists."""
    if not store.layout.supports(Kind.MEMORY):
        return []
    try:
        return _stamped(store, store.path_for(Kind.MEMORY, scope))
    except (InvalidName, ValueError, KeyError):
        return []


def shared_files(store: Store) -> list[tuple[str, tuple[float, int]]]:
    """(path, (mtime, size)) of global memory and every world topic (walked, never
    through a symbolic link; kept until a change reaches them: every queue page asks)."""
    found: list[tuple[str, tuple[float, int]]] = []
    if store.layout.supports(Kind.GLOBAL):
        try:
            found += _stamped(store, store.path_for(Kind.GLOBAL))
        except (InvalidName, ValueError, KeyError):
            pass
    found += [(path, (mtime, size))
              for path, _name, mtime, size in kind_files(store, Kind.WORLD)]
    return found


def _index(store: Store, files: list[tuple[str, tuple[float, int]]]
           ) -> tuple[_Blocks, list[tuple[str, int]]]:
    key = (str(store.root), tuple(files))
    hit = SIMILAR_INDEXES.get(key)
    if hit:
        return hit
    rows: list[tuple[str, int, str]] = []
    for path, stamp in files:
        idx = _file_index(store, path, stamp)
        if idx is not None:
            rows.extend((path, line, norm) for line, norm in idx.rows)
    blocks = _Blocks(_df(r[2] for r in rows))
    for _p, _l, norm in rows:
        blocks.add(norm)
    built = (blocks, [(p, line) for p, line, _n in rows])
    SIMILAR_INDEXES.put(key, built)
    return built


def already_known(store: Store, texts: Sequence[tuple[str | None, str]],
                  cutoff: int | None = None) -> list[Known | None]:
    """For each (scope, text): where memory already states it, or None.

    Looks in the scope's MEMORY.md, global memory and world topics; files are parsed once
    per (mtime, size), and the index of a set of files is kept while none of them changes.
    """
    cutoff = threshold() if cutoff is None else cutoff
    if cutoff <= 0 or not texts:
        return [None] * len(texts)
    shared = _index(store, shared_files(store))
    own: dict[str | None, tuple[_Blocks, list[tuple[str, int]]] | None] = {}
    out: list[Known | None] = []
    for scope, text in texts:
        if scope not in own:
            files = own_files(store, scope) if scope else []
            own[scope] = _index(store, files) if files else None
        norm = normalise(text)
        best: Known | None = None
        for found in (own[scope], shared):
            if found is None:
                continue
            blocks, where = found
            i, score = blocks.lookup(norm, cutoff)
            if i >= 0 and (best is None or score > best.score):
                best = Known(where[i][0], where[i][1], score)
        out.append(best)
    return out


def known_in(store: Store, path: str, texts: Sequence[str], cutoff: int | None = None
             ) -> list[Known | None]:
    """For each text: where the file at `path` (a chosen target) already states it."""
    cutoff = threshold() if cutoff is None else cutoff
    files = _stamped(store, path) if cutoff > 0 else []
    if not files:
        return [None] * len(texts)
    blocks, where = _index(store, files)
    out: list[Known | None] = []
    for text in texts:
        i, score = blocks.lookup(normalise(text), cutoff)
        out.append(Known(where[i][0], where[i][1], score) if i >= 0 else None)
    return out
