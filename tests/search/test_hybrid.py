"""Hybrid ranking: keywords and meaning fused, the switch to keywords, and the fallbacks."""

from __future__ import annotations

import logging
import threading

import pytest

from memoryui.search import QueryError, SearchIndex, hybrid
from memoryui.search.hybrid import RRF_K
from memoryui.store import Store
from tests.search.helpers import daily, note, paths

BACKUPS = "# Ops facts\n\n## Backups\n\nPostgres dumps happen nightly at 02:00.\n"
REFUNDS = "# Billing\n\n## Refunds\n\nCustomers get their money back within 30 days.\n"
QUESTION = "when do the database backups run?"


@pytest.fixture
def facts(index: SearchIndex, store: Store) -> dict[str, str]:
    out = {"backups": note(store, "ops-bot", "backups", BACKUPS),
           "refunds": note(store, "billing-agent", "refunds", REFUNDS),
           "deploys": note(store, "ops-bot", "deploys", "Deploys go out on Tuesdays.\n")}
    index.drain()
    return out


def test_meaning_finds_what_keywords_miss(index: SearchIndex, facts: dict[str, str]) -> None:
    assert paths(index.search(QUESTION, mode="keyword")) == []
    got = index.search(QUESTION, mode="hybrid")
    assert got.mode == "hybrid" and got.notice == ""
    assert paths(got)[0] == facts["backups"]
    hit = got.hits[0]
    assert "Postgres dumps happen nightly at 02:00." in hit.snippet_text
    assert [t for t, _ in hit.title_spans] == ["Backups"]
    assert hit.name == "backups" and hit.date


def test_a_file_both_rankings_agree_on_comes_first(index: SearchIndex, store: Store,
                                                  facts: dict[str, str]) -> None:
    note(store, "ops-bot", "postgres", "Postgres upgrade notes: version 16 in March.\n")
    index.drain()
    got = index.search("postgres dumps", mode="hybrid")
    assert paths(got)[0] == facts["backups"]
    assert got.hits[0].score == pytest.approx(2 / (RRF_K + 1), rel=0.05)
    keyword = index.search("postgres", mode="keyword")
    assert set(paths(keyword)) <= set(paths(index.search("postgres", mode="hybrid")))


def test_filters_apply_to_meaning(index: SearchIndex, store: Store,
                                  facts: dict[str, str]) -> None:
    log = daily(store, "billing-agent", "2026-11-20", ("09:00", "The database dumps ran at 2am."))
    index.drain()
    assert facts["backups"] not in paths(index.search(QUESTION, mode="hybrid",
                                                      scope="billing-agent"))
    assert paths(index.search(QUESTION, mode="hybrid", kind="daily")) == [log]
    assert facts["backups"] not in paths(index.search(QUESTION, visible_to="billing-agent",
                                                      mode="hybrid"))
    assert paths(index.search(QUESTION, mode="hybrid", date_from="2026-11-20",
                              date_to="2026-11-20")) == [log]


def test_paging_over_the_fused_ranking(index: SearchIndex, store: Store) -> None:
    for i in range(6):
        note(store, "ops-bot", f"backup-{i}", f"Backup job {i}: database dumps at 0{i}:00.\n")
    index.drain()
    whole = paths(index.search("database backups", mode="hybrid", limit=6))
    assert len(whole) == 6
    pages = [paths(index.search("database backups", mode="hybrid", limit=2, offset=o))
             for o in (0, 2, 4)]
    assert sum(pages, []) == whole


def test_keyword_mode_keeps_keyword_ranking(index: SearchIndex, facts: dict[str, str]) -> None:
    got = index.search("postgres", mode="keyword")
    assert got.mode == "keyword" and got.notice == ""
    assert paths(got) == [facts["backups"]]
    with pytest.raises(QueryError, match="Unknown search mode"):
        index.search("postgres", mode="vectors")


def test_model_turned_off_falls_back_to_keywords(index: SearchIndex, facts: dict[str, str],
                                                 monkeypatch, caplog) -> None:
    monkeypatch.setenv("MEMORYUI_EMBEDDINGS", "off")
    with caplog.at_level(logging.INFO, logger="memoryui.search"):
        got = index.search("postgres", mode="hybrid")
    assert got.mode == "keyword"
    assert got.notice.startswith("Search by meaning is unavailable: it is turned off")
    assert paths(got) == [facts["backups"]]
    assert "keywords only" in caplog.text
    assert index.nearest(QUESTION) == []


def test_turned_back_on_embeds_what_was_written_meanwhile(index: SearchIndex, store: Store,
                                                          monkeypatch) -> None:
    monkeypatch.setenv("MEMORYUI_EMBEDDINGS", "off")
    path = note(store, "ops-bot", "backups", BACKUPS)
    index.drain()
    monkeypatch.delenv("MEMORYUI_EMBEDDINGS")
    assert not index.vectors_ready()
    assert index.search(QUESTION, mode="hybrid", catch_up=False).notice.endswith(
        "the passages are still being embedded; results match keywords only.")
    # the catch-up before a search embeds every file again
    assert paths(index.search(QUESTION, mode="hybrid")) == [path]
    assert index.vectors_ready()


@pytest.mark.parametrize("query", ["\u5099\u4efd\u6578\u64da\u5eab", "\u0e01\u0e32\u0e23",
                                   "\u0430\u0431\u0432\u0433"])
def test_words_the_model_never_saw(index: SearchIndex, store: Store, query: str,
                                   facts: dict[str, str]) -> None:
    path = note(store, "ops-bot", "unicode", f"Notes: {query} stays as written.\n")
    index.drain()
    got = index.search(query, mode="hybrid")
    assert path in paths(got)
    if got.mode == "keyword":
        assert got.notice.startswith("Search by meaning found no word it knows")


def test_bad_queries_are_messages_not_crashes(index: SearchIndex, facts: dict[str, str]) -> None:
    for query in ("", "   ", "x" * 1_000_000, "a\x00b", "\U0001f680\U0001f4be"):
        with pytest.raises(QueryError):
            index.search(query, mode="hybrid")
    got = index.search("\x01\x02\ufffd\ufffd postgres \x7f", mode="hybrid")
    assert facts["backups"] in paths(got)


def test_meaning_still_ranks_when_its_threads_are_busy(index: SearchIndex,
                                                       facts: dict[str, str]) -> None:
    """Many searches at once: one that finds every meaning thread taken ranks by meaning
    itself once its keywords are in, rather than waiting for a thread or dropping meaning."""
    release = threading.Event()
    busy = [hybrid._meaning_pool().submit(release.wait, 60)
            for _ in range(hybrid.MEANING_THREADS)]
    try:
        got = index.search(QUESTION, mode="hybrid")
    finally:
        release.set()
    assert got.mode == "hybrid" and got.notice == ""
    assert paths(got)[0] == facts["backups"]
    assert all(f.result() for f in busy)
