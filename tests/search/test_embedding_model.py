"""The embedder reads WordLlama's table and tokenizer straight from the installed wheel and
gives the vectors WordLlama itself gives, offline."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from memoryui.search.embeddings import DIM, WordLlamaEmbedder

TEXTS = ["when do the database backups run?", "Postgres dumps happen nightly at 02:00",
         "refunds under 30 days", "日本語のテキスト 🎉", "x" * 20_000]


def test_the_vectors_are_wordllamas_own() -> None:
    import wordllama
    from wordllama import WordLlama

    ours = WordLlamaEmbedder().embed(TEXTS)
    theirs = WordLlama.load(cache_dir=Path(wordllama.__file__).parent,
                            disable_download=True).embed([t[:8_000] for t in TEXTS], norm=True)
    assert ours.shape == (len(TEXTS), DIM) and ours.dtype == np.float32
    assert np.allclose(ours, theirs, atol=1e-5)


def test_a_paraphrase_is_nearer_than_an_unrelated_fact() -> None:
    question, answer, other = WordLlamaEmbedder().embed(TEXTS[:3])
    assert question @ answer > question @ other


def test_a_text_without_tokens_is_a_zero_row_and_the_rest_unit_rows() -> None:
    rows = WordLlamaEmbedder().embed(["", "backups", ""])
    assert not rows[0].any() and not rows[2].any()
    assert abs(float(np.linalg.norm(rows[1])) - 1.0) < 1e-5
    assert WordLlamaEmbedder().embed([]).shape == (0, DIM)
