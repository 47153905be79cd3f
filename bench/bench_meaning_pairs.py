"""Duplicates by meaning and contradiction flags, measured on labeled pairs.

`bench/labels/meaning_pairs.json` holds pairs of a curated line (`a`) and a new entry (`b`),
each labeled `duplicate` (the same fact in other words), `contradiction` (close in meaning,
different in a number, a date, a name or a negation), `consistent` (the same subject, another
fact) or `unrelated`. Each pair is judged as the review queue judges an entry against a
passage (`memoryui.review.meaning.compare`), and precision and recall of both flags are
printed at the shipped thresholds, then for a sweep of each threshold with the other fixed
(how the shipped values were chosen).

    python3 -m bench.bench_meaning_pairs
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path

LABELS = Path(__file__).resolve().parent / "labels" / "meaning_pairs.json"
LABEL_NAMES = ("duplicate", "contradiction", "consistent", "unrelated")
FLAGS = ("duplicate", "contradiction")


@dataclass(frozen=True)
class Judged:
    a: str
    b: str
    label: str
    score: float
    diffs: tuple[str, ...]


def load(path: Path = LABELS) -> list[dict[str, str]]:
    pairs = json.loads(path.read_text())
    for p in pairs:
        if set(p) != {"a", "b", "label"} or p["label"] not in LABEL_NAMES:
            raise ValueError(f"not a labeled pair: {p!r}")
    return pairs


def judge_all(pairs: list[dict[str, str]]) -> list[Judged]:
    from memoryui.review.cues import differences
    from memoryui.search.embeddings import embedder

    model = embedder()
    if model is None:
        raise SystemExit("the embedding model cannot load; nothing to measure")
    texts = [t for p in pairs for t in (p["a"], p["b"])]
    rows = model.embed(texts)
    return [Judged(p["a"], p["b"], p["label"], float(rows[2 * i] @ rows[2 * i + 1]),
                   tuple(differences(p["a"], p["b"])))
            for i, p in enumerate(pairs)]


def flags(judged: list[Judged], duplicate: float, contradiction: float) -> list[str | None]:
    out: list[str | None] = []
    for j in judged:
        if j.diffs and j.score >= contradiction:
            out.append("contradiction")
        elif not j.diffs and j.score >= duplicate:
            out.append("duplicate")
        else:
            out.append(None)
    return out


def precision_recall(judged: list[Judged], said: list[str | None], flag: str
                     ) -> tuple[float, float, int, int, int]:
    """(precision, recall, true positives, flagged, labeled) of one flag."""
    tp = sum(1 for j, s in zip(judged, said, strict=True) if s == flag and j.label == flag)
    flagged = sum(1 for s in said if s == flag)
    labeled = sum(1 for j in judged if j.label == flag)
    return (tp / flagged if flagged else 1.0, tp / labeled if labeled else 1.0, tp, flagged,
            labeled)


def report(judged: list[Judged], duplicate: float, contradiction: float) -> dict[str, tuple]:
    said = flags(judged, duplicate, contradiction)
    return {f: precision_recall(judged, said, f) for f in FLAGS}


def main() -> int:
    from memoryui.review.meaning import CONTRADICTION, DUPLICATE

    pairs = load()
    judged = judge_all(pairs)
    counts = {name: sum(1 for p in pairs if p["label"] == name) for name in LABEL_NAMES}
    print(f"{len(pairs)} labeled pairs: " + ", ".join(f"{n} {k}" for k, n in counts.items()))
    print(f"\nshipped thresholds: duplicate >= {DUPLICATE:.2f}, contradiction >= "
          f"{CONTRADICTION:.2f} (cosine similarity)")
    for flag, (p, r, tp, flagged, labeled) in report(judged, DUPLICATE, CONTRADICTION).items():
        print(f"  {flag:<13} precision {p:5.0%} ({tp}/{flagged})  recall {r:5.0%} "
              f"({tp}/{labeled})")
    print("\nduplicate threshold (contradiction fixed):")
    for t in (0.60, 0.65, 0.70, 0.75, 0.80, 0.85):
        p, r, *_ = report(judged, t, CONTRADICTION)["duplicate"]
        print(f"  {t:.2f}  precision {p:5.0%}  recall {r:5.0%}")
    print("\ncontradiction threshold (duplicate fixed):")
    for t in (0.45, 0.50, 0.55, 0.60, 0.65, 0.70, 0.80):
        p, r, *_ = report(judged, DUPLICATE, t)["contradiction"]
        print(f"  {t:.2f}  precision {p:5.0%}  recall {r:5.0%}")
    said = flags(judged, DUPLICATE, CONTRADICTION)
    wrong = [(j, s) for j, s in zip(judged, said, strict=True)
             if (s or "") != (j.label if j.label in FLAGS else "")]
    if wrong:
        print("\nmisjudged at the shipped thresholds:")
        for j, s in wrong:
            print(f"  {j.label} judged {s or 'nothing'} ({j.score:.2f}"
                  f"{', ' + ', '.join(j.diffs) if j.diffs else ''}): {j.a!r} / {j.b!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
