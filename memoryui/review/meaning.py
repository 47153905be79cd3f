"""Daily entries compared with curated memory by meaning: the same fact in other words, and
contradiction candidates.

An entry is compared with the passages (paragraphs, list items, table rows) of the files it
could be promoted into or that already hold team knowledge: its scope's MEMORY.md, global
memory, every world topic and every skill. Each passage is embedded once per file stamp
(`search.embeddings`, L2-normalised rows, so a dot product is the cosine similarity) and
kept while the file is unchanged (`caches.MEANING_FILES`).

Two thresholds, chosen on the labeled pairs of `bench/labels/meaning_pairs.json`
(`python3 -m bench.bench_meaning_pairs` prints precision and recall at each):

- a passage at or above `CONTRADICTION` (0.60) that differs from the entry in a number, a
  date, a name or a negation (`cues.differences`) is a contradiction candidate;
- a passage at or above `DUPLICATE` (0.70) with no such difference states the same fact:
  the entry is a duplicate by meaning.

Related memories (`related`) are the curated passages elsewhere in the workspace closest to
an entry or a file, asked of the search index's passage vectors (`search.vectors`).

Nothing is computed, and nothing is marked, when the model cannot load. Plain Python: no
Django.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from memoryui.caches import MEANING_FILES
from memoryui.search.embeddings import MAX_CHARS, Embedder, embedder
from memoryui.search.vectors import Passage as Related
from memoryui.store import InvalidName, Kind, Store, walk

from .cues import differences
from .similar import own_files, paragraph_spans, shared_files
from .targets import kind_files

if TYPE_CHECKING:
    import numpy as np
else:
    from memoryui.search.lazy import numpy as np  # imported when a text is first compared

DUPLICATE = 0.70
CONTRADICTION = 0.60
CANDIDATES = 10  # passages looked at per entry, best first
MAX_CONFLICTS = 3  # contradiction candidates shown per entry

Files = list[tuple[str, tuple[float, int]]]


@dataclass(frozen=True)
class Passage:
    """A passage of a curated file: lines start..end (1-based) and their text."""

    path: str
    start: int
    end: int
    text: str

    @property
    def digest(self) -> str:
        """Names the passage's wording (a decision about it stands while it reads the same)."""
        return digest(self.text)


def digest(text: str) -> str:
    return hashlib.sha1(" ".join(text.split()).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Match:
    """A curated passage close in meaning to an entry, and the details they differ in."""

    passage: Passage
    score: float  # cosine similarity, -1..1
    differences: tuple[str, ...]

    @property
    def percent(self) -> int:
        return round(max(0.0, self.score) * 100)

    @property
    def reasons(self) -> str:
        """"a number and a negation": what the two texts disagree on."""
        d = list(self.differences)
        return d[0] if len(d) == 1 else ", ".join(d[:-1]) + " and " + d[-1]


def judge(score: float, diffs: Sequence[str]) -> str | None:
    """"contradiction", "duplicate" or None for a passage at `score` differing in `diffs`."""
    if diffs and score >= CONTRADICTION:
        return "contradiction"
    if not diffs and score >= DUPLICATE:
        return "duplicate"
    return None


def compare(model: Embedder, a: str, b: str) -> tuple[str | None, float, list[str]]:
    """The verdict on two texts (label, similarity, differences): what the bench measures."""
    rows = model.embed([a, b])
    score = float(rows[0] @ rows[1])
    diffs = differences(a, b)
    return judge(score, diffs), score, diffs


def clear_caches() -> None:
    MEANING_FILES.clear()


def _read(store: Store, path: str) -> str | None:
    try:
        data = walk.read_nofollow(store.root, path)
    except (InvalidName, OSError):
        return None
    return None if data is None else data.decode("utf-8", "replace")


def passages_of(store: Store | None, path: str, text: str | None = None) -> list[Passage]:
    """The passages of a curated file (read without following a link when `text` is None)."""
    if text is None and store is not None:
        text = _read(store, path)
    if text is None:
        return []
    return [Passage(path, s, e, t) for s, e, t in paragraph_spans(text)]


def cached_file(store: Store, model: Embedder, path: str, stamp: tuple[float, int]
                ) -> tuple[list[Passage], np.ndarray]:
    """A curated file's passages and their rows, embedded once per stamp."""
    key = (str(store.root), path)
    hit = MEANING_FILES.get(key)
    if hit and hit[0] == stamp:
        return hit[1]
    found = passages_of(store, path)
    value = (found, model.embed([p.text for p in found]))
    MEANING_FILES.put(key, (stamp, value))
    return value


def shared_and_skills(store: Store) -> Files:
    """(path, stamp) of global memory, the world topics and the skills: what every entry is
    compared with, beside its scope's MEMORY.md."""
    skills = [(p, (mtime, size)) for p, _n, mtime, size in kind_files(store, Kind.SKILL)]
    return shared_files(store) + skills


Scored = list[tuple[float, Passage]]


def pick(found: Scored, text: str, skip: str = "") -> tuple[Match | None, list[Match]]:
    """(the duplicate, the contradiction candidates) of a text among scored passages (at
    least CONTRADICTION); `skip` is a path left out (the text's own file)."""
    found = sorted(found, key=lambda sp: -sp[0])[:CANDIDATES]
    duplicate: Match | None = None
    conflicts: list[Match] = []
    for score, p in found:
        if p.path == skip:
            continue
        diffs = differences(p.text, text)
        label = judge(score, diffs)
        if label == "contradiction" and len(conflicts) < MAX_CONFLICTS:
            conflicts.append(Match(p, score, tuple(diffs)))
        elif label == "duplicate" and duplicate is None:
            duplicate = Match(p, score, ())
    return duplicate, conflicts


def scan(found: list[Passage], matrix: np.ndarray, vectors: np.ndarray, into: list[Scored],
         rows: Sequence[int] | None = None) -> None:
    """Add to `into[i]` each passage at or above CONTRADICTION for text i (`rows`: which
    texts `vectors` are, all by default)."""
    if not found or not len(vectors):
        return
    scores = matrix @ vectors.T  # passages x texts
    for r, c in np.argwhere(scores >= CONTRADICTION):
        into[rows[c] if rows is not None else c].append((float(scores[r, c]), found[r]))


def matches(store: Store, texts: Sequence[tuple[str | None, str]],
            vectors: np.ndarray | None = None) -> list[tuple[Match | None, list[Match]]] | None:
    """For each (scope, text): the passage stating the same fact in other words (or None)
    and the contradiction candidates, best first; None when the model cannot load.
    `vectors`: the texts' rows when the caller has them (else they are embedded here).

    Each file's passages are scored against every text at once, file by file, so memory
    holds each file's vectors once (`caches.MEANING_FILES`, bounded by size)."""
    model = embedder()
    if model is None:
        return None
    if not texts:
        return []
    if vectors is None:
        vectors = model.embed([t for _s, t in texts])
    found: list[Scored] = [[] for _t in texts]
    for path, stamp in shared_and_skills(store):
        scan(*cached_file(store, model, path, stamp), vectors, found)
    by_scope: dict[str, list[int]] = {}
    for i, (scope, _t) in enumerate(texts):
        if scope:
            by_scope.setdefault(scope, []).append(i)
    for scope, rows in by_scope.items():
        for path, stamp in own_files(store, scope):
            scan(*cached_file(store, model, path, stamp), vectors[rows], found, rows)
    return [pick(f, t) for f, (_s, t) in zip(found, texts, strict=True)]


# -- related memories ----------------------------------------------------------------------------

RELATED = 5  # passages shown
# Below this a passage is about something else: a section embeds all its lines together, so
# a section holding the fact among others scores lower than the line alone would.
RELATED_MIN = 0.30
RELATED_KINDS = frozenset({Kind.MEMORY.value, Kind.GLOBAL.value, Kind.WORLD.value,
                           Kind.SKILL.value})


class Nearest(Protocol):
    """What related memories ask of the search index (`search.vectors.VectorSearch`)."""

    def vectors_ready(self) -> bool: ...

    def nearest(self, text: str, k: int = 5, *, kinds: set[str] | None = None,
                exclude_paths: set[str] | None = None, scope: str | None = None,
                visible_to: str | None = None) -> list[Related]: ...


def related(index: Nearest, text: str, exclude: set[str], k: int = RELATED
            ) -> list[Related] | None:
    """The curated passages elsewhere in the workspace closest in meaning to `text` (other
    agents' MEMORY.md, global memory, world topics, skills; never the files in `exclude`),
    best first; None when search by meaning is unavailable (no model, vectors not built)."""
    if embedder() is None or not index.vectors_ready():
        return None
    found = index.nearest(text[:MAX_CHARS], k, kinds=set(RELATED_KINDS),
                          exclude_paths=exclude)
    return [p for p in found if p.score >= RELATED_MIN]
