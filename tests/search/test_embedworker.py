"""A full build's helper process: the same passages and vectors as a build in one process,
and a helper that cannot run leaves the build to finish in process."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import memoryui.search.vectors as vectors
from memoryui.search import SearchIndex
from memoryui.store import Store
from tests.search.helpers import daily, note

TOPICS = ("backups", "refunds", "deploys", "on-call", "search", "billing", "alerts", "vendors")


def _fill(store: Store) -> None:
    for i, topic in enumerate(TOPICS * 3):
        note(store, f"agent-{i % 3}", f"{topic}-{i}",
             f"# {topic.title()}\n\n## Facts\n\nThe {topic} runbook says step {i} comes first."
             f"\n\n## Owners\n\nTeam {i % 4} owns {topic}; page them after {i} minutes.\n")
    daily(store, "agent-0", "2026-11-20", ("09:00", "Postgres dumps ran at 02:00."),
          ("10:30", "Refunds under 30 days need no approval."))


def _passages(index: SearchIndex) -> list[tuple]:
    conn = index.vectors._connect()
    return [tuple(r) for r in conn.execute(
        "SELECT path, start_line, end_line, heading, entry_id, hash, text, code, vec "
        "FROM passages ORDER BY path, start_line")]


def _build(tmp_path: Path, store: Store, name: str) -> list[tuple]:
    index = SearchIndex(tmp_path / f"{name}.sqlite3", catch_up_interval=0, background=False)
    index.attach(store)
    try:
        index.rebuild()
        assert index.nearest("when do the database backups run?", k=1)
        return _passages(index)
    finally:
        index.close()


@pytest.fixture
def small_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    """Batches of two documents and the helper from the third on: many batches in flight."""
    monkeypatch.setattr(vectors, "WRITE_BATCH", 2)
    monkeypatch.setattr(vectors, "HELPER_AFTER", 2)


def test_a_build_with_the_helper_stores_what_one_process_does(
        tmp_path: Path, store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    _fill(store)
    alone = _build(tmp_path, store, "alone")
    monkeypatch.setattr(vectors, "WRITE_BATCH", 2)  # many batches, the helper from the third
    monkeypatch.setattr(vectors, "HELPER_AFTER", 2)
    helped = _build(tmp_path, store, "helped")
    assert len(alone) > 2 * len(TOPICS)
    assert [r[:7] for r in helped] == [r[:7] for r in alone]
    # the same vectors, up to float rounding (a batch's token sums are added in its order)
    for a, b in zip(helped, alone, strict=True):
        assert np.allclose(np.frombuffer(a[8], np.float32), np.frombuffer(b[8], np.float32),
                           atol=1e-5)


def test_a_helper_that_cannot_run_leaves_the_build_to_this_process(
        tmp_path: Path, store: Store, small_batches: None,
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    _fill(store)
    monkeypatch.setattr(sys, "executable", "/bin/false")  # the helper exits at once
    got = _build(tmp_path, store, "fallback")
    assert {p for p, *_ in got} == {p for p in store.list_files() if p.endswith(".md")}
    assert any("goes on in this process" in r.getMessage() for r in caplog.records)
