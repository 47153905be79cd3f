"""The labeled pairs behind the duplicate and contradiction thresholds, and the bench that
prints their precision and recall."""

from __future__ import annotations

from collections import Counter

import pytest

from bench import bench_meaning_pairs as bench
from memoryui.search.embeddings import embedder


def test_the_labeled_set_is_big_enough_and_well_formed() -> None:
    pairs = bench.load()
    counts = Counter(p["label"] for p in pairs)
    assert len(pairs) >= 40 and all(counts[name] >= 10 for name in bench.LABEL_NAMES)
    assert len({(p["a"], p["b"]) for p in pairs}) == len(pairs)  # no pair twice


@pytest.mark.skipif(embedder() is None, reason="the embedding model is missing")
def test_the_bench_prints_precision_and_recall_of_both_flags(capsys) -> None:
    assert bench.main() == 0
    out = capsys.readouterr().out
    for flag in bench.FLAGS:
        line = next(ln for ln in out.splitlines() if ln.strip().startswith(flag))
        assert "precision" in line and "recall" in line
