"""Search finds what was learned: ranked, filtered, highlighted, and always current.

Every test runs against a real git workspace and a real SQLite FTS5 index file, and checks what a
person or an agent searching would see: which files come back, in which order, with which
highlighted text.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Iterator
from pathlib import Path

import pytest

from memoryui.store import Actor, Store
from memoryui.store.entries import parse_daily
from memoryui.store.search import PostgresSearchIndex, QueryError, SearchIndex, parse_query
from tests.pg import pg_database

BOT = Actor.agent("ops-bot")
OTHER = Actor.agent("billing-agent")
ALICE = Actor.user("alice")



@pytest.fixture(params=["sqlite", "postgres"])
def index(request, tmp_path: Path, store: Store) -> Iterator[SearchIndex]:
    """The index under test, on each backend (Postgres: a fresh database per test)."""
    if request.param == "sqlite":
        idx = SearchIndex(tmp_path / "search.sqlite3", catch_up_interval=0, background=False)
    else:
        idx = PostgresSearchIndex(pg_database(request.getfixturevalue("pg_server")),
                                  catch_up_interval=0, background=False)
    idx.attach(store)
    yield idx
    idx.close()


def paths(results) -> list[str]:
    return [h.path for h in results.hits]


def note(store: Store, scope: str, name: str, text: str, actor: Actor | None = None) -> str:
    path = store.path_for("note", scope, name)
    store.write(path, text, actor=actor or Actor.agent(scope), tool="test")
    return path


def daily(store: Store, scope: str, date: str, *entries: tuple[str, str]) -> str:
    path = store.path_for("daily", scope, date)
    for hhmm, body in entries:
        store.append(path, f"\n## {hhmm}\n\n{body}\n", header=f"# {date}\n",
                     actor=Actor.agent(scope), tool="remember")
    return path


FILLER = ("The weekly sync covered roadmap items, hiring, on-call rotation and the budget. "
          "Nothing else stood out this week apart from routine maintenance. ")


# -- ranking ---------------------------------------------------------------------------------

def test_a_file_named_after_the_query_ranks_above_a_body_mention(store, index):
    body_hit = note(store, "ops-bot", "weekly-sync",
                    "# Weekly sync\n\n" + FILLER + "We talked about kafka rebalancing briefly.\n")
    name_hit = note(store, "ops-bot", "kafka-rebalancing",
                    "# Notes\n\n" + FILLER + "Partitions move when a consumer leaves.\n")
    res = index.search("kafka rebalancing")
    assert paths(res)[:2] == [name_hit, body_hit]
    assert res.hits[0].score > res.hits[1].score


def test_a_heading_hit_ranks_above_a_body_hit(store, index):
    body_hit = note(store, "ops-bot", "alpha",
                    "# Daily routine\n\n" + FILLER + "The failover drill went fine.\n")
    heading_hit = note(store, "ops-bot", "beta",
                       "# Routine\n\n## Failover drill\n\n" + FILLER + "Went fine.\n")
    assert paths(index.search("failover drill"))[:2] == [heading_hit, body_hit]


def test_equal_scores_put_the_most_recent_change_first(store, index):
    text = "# Cache\n\nThe cache warmer runs every ten minutes.\n"
    older = note(store, "ops-bot", "cache-a", text)
    newer = note(store, "ops-bot", "cache-b", text)
    assert paths(index.search("warmer")) == [newer, older]
    # Touching the older file makes it the most recent one.
    store.write(older, text + "\n", actor=BOT, tool="test")
    assert paths(index.search("warmer")) == [older, newer]


# -- query syntax ----------------------------------------------------------------------------

def test_a_phrase_needs_the_words_together_and_in_order(store, index):
    together = note(store, "ops-bot", "one", "We rolled back the release at noon.\n")
    note(store, "ops-bot", "two", "Back in March we rolled the dice on a new vendor.\n")
    assert paths(index.search('"rolled back"')) == [together]
    assert len(index.search("rolled back").hits) == 2


def test_a_prefix_query_matches_longer_words(store, index):
    p = note(store, "ops-bot", "deploys", "Deployment of payments-api finished.\n")
    note(store, "ops-bot", "other", "Nothing about releases here.\n")
    assert paths(index.search("deploym*")) == [p]
    assert paths(index.search("paym*")) == [p]


def test_words_with_punctuation_are_searched_as_written(store, index):
    p = note(store, "ops-bot", "errors", "payments-api (C++) returned HTTP/2 502; v1.2.3 fixed it\n")
    for q in ("payments-api", "HTTP/2", "v1.2.3", "C++ payments-api"):
        assert paths(index.search(q)) == [p], q


def test_or_and_exclusion(store, index):
    a = note(store, "ops-bot", "a", "staging deploy went fine\n")
    b = note(store, "ops-bot", "b", "production deploy went fine\n")
    assert set(paths(index.search("staging OR production"))) == {a, b}
    assert paths(index.search("deploy -staging")) == [b]
    assert paths(index.search("deploy NOT production")) == [a]


def test_column_filters_search_only_that_part_of_a_file(store, index):
    titled = note(store, "ops-bot", "gamma", "# Zookeeper quirks\n\nSession expiry.\n")
    mentioned = note(store, "ops-bot", "delta", "# Misc\n\nzookeeper was slow today\n")
    assert paths(index.search("title:zookeeper")) == [titled]
    assert paths(index.search("name:delta")) == [mentioned]
    assert set(paths(index.search("body:zookeeper"))) == {titled, mentioned}


@pytest.mark.parametrize("query", [
    '"unclosed phrase', "(deploy", "deploy)", "NOT", "OR", "deploy OR", "AND deploy",
    "-staging", "***", "*", "!!!", "title:", 'body:""', "((((", "NEAR(", "a" * 600,
])
def test_a_malformed_query_gets_a_clear_message(store, index, query):
    note(store, "ops-bot", "x", "deploy staging\n")
    with pytest.raises(QueryError) as err:
        index.search(query)
    assert err.value.status == 400
    message = str(err.value)
    assert message and "Traceback" not in message and "sqlite" not in message.lower()


def test_fts_operators_typed_as_text_are_not_syntax(store, index):
    p = note(store, "ops-bot", "ops", 'The "NEAR" column and a {brace} and ^caret : colon\n')
    for q in ("NEAR", "{brace}", "^caret", "colon :", "column:x near"):
        res = index.search(q)  # never an error
        assert all(h.path == p for h in res.hits)


def test_filter_tokens_are_not_searchable_words(store, index):
    note(store, "ops-bot", "plain", "nothing special here\n")
    for q in ("knote0", "shared0", "s6f70732d626f740"):
        assert index.search(q).hits == [], q


def test_an_empty_query_is_refused_with_a_message():
    with pytest.raises(QueryError, match="Type a word"):
        parse_query("   ")


# -- filters ---------------------------------------------------------------------------------

def test_filters_by_scope_kind_and_date(store, index):
    d1 = daily(store, "ops-bot", "2026-01-10", ("09:00", "Rotated the vault token."))
    d2 = daily(store, "ops-bot", "2026-02-20", ("09:00", "Rotated the vault token again."))
    d3 = daily(store, "billing-agent", "2026-02-21", ("10:00", "Vault token rotated for billing."))
    n1 = note(store, "ops-bot", "vault", "# Vault\n\nToken rotation runbook.\n")
    world = store.path_for("world", None, "vault")
    store.write(world, "# Vault\n\nShared token facts.\n", actor=ALICE, tool="test")

    assert set(paths(index.search("token", scope="ops-bot"))) == {d1, d2, n1}
    assert set(paths(index.search("token", kind="daily"))) == {d1, d2, d3}
    assert set(paths(index.search("token", kind=["note", "world"]))) == {n1, world}
    assert set(paths(index.search("token", kind="daily", date_from="2026-02-01"))) == {d2, d3}
    assert set(paths(index.search("token", kind="daily", date_to="2026-02-20"))) == {d1, d2}
    assert paths(index.search("token", kind="daily", date_from="2026-01-05",
                              date_to="2026-01-31")) == [d1]
    assert index.search("token", scope="nobody").hits == []


def test_a_date_range_across_months_and_years(store, index):
    got = {daily(store, "ops-bot", d, ("08:00", "heartbeat ok"))
           for d in ("2025-12-30", "2026-01-01", "2026-01-31", "2026-02-01", "2026-03-02")}
    res = index.search("heartbeat", date_from="2025-12-31", date_to="2026-02-01")
    assert {h.date for h in res.hits} == {"2026-01-01", "2026-01-31", "2026-02-01"}
    assert len(got) == 5


def test_a_bad_date_is_a_clear_error(store, index):
    with pytest.raises(QueryError, match="not a date"):
        index.search("x", date_from="last tuesday")


def test_visible_to_shows_one_scope_plus_shared_files(store, index):
    mine = note(store, "ops-bot", "secret", "the launch codes are here\n")
    theirs = note(store, "billing-agent", "secret", "the launch codes are elsewhere\n")
    world = store.path_for("world", None, "launch")
    store.write(world, "launch codes policy\n", actor=ALICE, tool="test")
    glob = store.path_for("global")
    store.write(glob, "launch codes live in the vault\n", actor=ALICE, tool="test")
    skill = store.path_for("skill", None, "launching")
    store.write(skill, "---\nname: launching\ndescription: x\n---\nlaunch codes\n",
                actor=ALICE, tool="test")
    seen = set(paths(index.search("launch codes", visible_to="ops-bot")))
    assert seen == {mine, world, glob, skill}
    assert theirs in paths(index.search("launch codes"))


# -- snippets --------------------------------------------------------------------------------

def test_snippets_highlight_matches_and_escape_html(store, index):
    note(store, "ops-bot", "xss", "Before <script>alert('x')</script> the kafka broker & co.\n")
    hit = index.search("kafka").hits[0]
    assert "<mark>kafka</mark>" in hit.snippet_html
    assert "<script>" not in hit.snippet_html
    assert "&lt;script&gt;" in hit.snippet_html and "&amp; co" in hit.snippet_html
    start, end = hit.highlights[0]
    assert hit.snippet_text[start:end] == "kafka"


def test_a_daily_hit_names_the_entry_it_came_from(store, index):
    path = daily(store, "ops-bot", "2026-02-12",
                 ("09:00", "Morning checks were green."),
                 ("11:30", "Restarted the flaky consumer on ledger-db."),
                 ("15:00", "Handed over to the night shift."))
    hit = index.search("flaky consumer").hits[0]
    entries = parse_daily(store.read(path))
    assert hit.entry_id == entries[1].id
    assert "flaky consumer" in entries[1].body


# -- staying current -------------------------------------------------------------------------

def test_writes_deletes_renames_and_restores_update_the_index(store, index):
    p = note(store, "ops-bot", "disk", "The disk on db-3 is nearly full.\n")
    assert paths(index.search("nearly full")) == [p]

    res = store.write(p, "The disk on db-3 was resized.\n", actor=BOT, tool="test")
    assert index.search("nearly full").hits == []
    assert paths(index.search("resized")) == [p]

    first_commit = store.log(p)[-1].sha
    store.restore(p, first_commit, actor=ALICE)
    assert paths(index.search("nearly full")) == [p]
    assert res.changed

    moved = store.path_for("note", "ops-bot", "disk-db3")
    store.rename(p, moved, actor=BOT, tool="test")
    assert paths(index.search("nearly full")) == [moved]

    store.delete(moved, actor=BOT, tool="test")
    assert index.search("nearly full").hits == []
    assert index.count() == 0


def test_appends_are_searchable_at_once(store, index):
    path = daily(store, "ops-bot", "2026-02-12", ("09:00", "first entry about redis"))
    daily(store, "ops-bot", "2026-02-12", ("10:00", "second entry about memcached"))
    assert paths(index.search("memcached")) == [path]
    assert paths(index.search("redis")) == [path]


def test_deferred_commits_are_searchable_before_they_are_committed(tmp_path):
    s = Store(tmp_path / "ws", commit_delay=30)
    idx = SearchIndex(tmp_path / "s.db", catch_up_interval=0, background=False)
    idx.attach(s)
    path = s.path_for("note", "ops-bot", "quick")
    s.write(path, "lightning fast\n", actor=BOT, tool="test")
    assert paths(idx.search("lightning")) == [path]
    s.close()


def test_an_outside_change_is_picked_up(store, index):
    p = note(store, "ops-bot", "edited", "original wording\n")
    full = store.root / p
    full.write_text("rewritten by hand in vim\n")
    (store.root / "agents/ops-bot/memory/notes/native.md").write_text("written natively\n")
    assert set(paths(index.search("rewritten OR natively"))) == {
        p, "agents/ops-bot/memory/notes/native.md"}
    assert index.search("original").hits == []
    full.unlink()
    assert index.search("rewritten").hits == []


def test_catch_up_is_throttled(store, tmp_path):
    idx = SearchIndex(tmp_path / "t.db", catch_up_interval=3600, background=False)
    idx.attach(store)
    note(store, "ops-bot", "a", "alpha\n")
    idx.search("alpha")  # first use: builds
    (store.root / "agents/ops-bot/memory/notes/b.md").write_text("bravo\n")
    assert idx.search("bravo").hits == []  # not yet: the scan ran moments ago
    assert idx.catch_up() == ["agents/ops-bot/memory/notes/b.md"]
    assert len(idx.search("bravo").hits) == 1


def test_committing_or_discarding_pending_changes_updates_the_index(store, index):
    p = note(store, "ops-bot", "pend", "the committed text\n")
    (store.root / p).write_text("an outside edit\n")
    index.catch_up()
    assert paths(index.search("outside edit")) == [p]
    store.discard_pending([p])
    assert index.search("outside edit").hits == []
    assert paths(index.search("committed text")) == [p]

    (store.root / p).write_text("another outside edit\n")
    store.commit_pending()
    assert paths(index.search("another")) == [p]


def test_rebuild_gives_the_same_index_as_incremental_updates(store, index, tmp_path):
    for i in range(12):
        note(store, "ops-bot", f"n{i}", f"# Topic {i}\n\nkafka lag {i} and redis {i % 3}\n")
    daily(store, "billing-agent", "2026-02-01", ("08:00", "invoice run kafka"))
    store.delete(store.path_for("note", "ops-bot", "n3"), actor=BOT, tool="test")
    store.write(store.path_for("note", "ops-bot", "n5"), "# Topic 5\n\nno more queues\n",
                actor=BOT, tool="test")
    fresh = SearchIndex(tmp_path / "fresh.db", catch_up_interval=0, background=False)
    fresh.attach(store)
    progress: list[tuple[int, int]] = []
    stats = fresh.rebuild(progress=lambda done, total: progress.append((done, total)))
    assert stats["files"] == index.count() == 12
    assert progress[-1] == (12, 12)
    assert fresh.indexed_paths() == index.indexed_paths()
    for q in ("kafka", "redis", '"kafka lag"', "topic", "queues", "invoice"):
        a, b = index.search(q, limit=50), fresh.search(q, limit=50)
        assert sorted(paths(a)) == sorted(paths(b)), q
        assert a.total == b.total


def test_rebuild_keeps_history_order_for_recency(store, tmp_path):
    text = "# Same\n\nidentical words\n"
    older = note(store, "ops-bot", "old", text)
    newer = note(store, "ops-bot", "new", text)
    idx = SearchIndex(tmp_path / "r.db", catch_up_interval=3600)
    idx.attach(store)
    idx.rebuild()
    assert paths(idx.search("identical")) == [newer, older]


def _spec(index: SearchIndex) -> tuple[str, str]:
    return (index.backend, str(index.path) if index.backend == "sqlite" else index.dsn)


def _open(spec: tuple[str, str], **kw: object) -> SearchIndex:
    """Another handle on the same index storage (another process would open it this way)."""
    backend, where = spec
    return SearchIndex(where, **kw) if backend == "sqlite" else PostgresSearchIndex(where, **kw)


def test_another_workspace_starts_a_fresh_index(tmp_path, store, index):
    note(store, "ops-bot", "here", "only in the first workspace\n")
    other = Store(tmp_path / "ws2")
    idx2 = _open(_spec(index), catch_up_interval=0, background=False)
    idx2.attach(other)
    assert idx2.search("workspace").hits == []
    other.close()


def _writer(spec: tuple[str, str], ws: str, scope: str, n: int) -> None:
    s = Store(ws)
    idx = _open(spec, catch_up_interval=3600)
    idx.attach(s)
    for i in range(n):
        s.write(s.path_for("note", scope, f"n{i}"), f"concurrent note {i}\n",
                actor=Actor.agent(scope), tool="test")
    s.close()


def test_several_processes_update_one_index(store, index):
    index.search("warmup")  # creates the file and the first scan
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(_spec(index), str(store.root), f"bot-{k}", 15))
             for k in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    res = index.search("concurrent", limit=100, catch_up=False)
    assert res.total == 45
    assert index.catch_up() == []  # every write was already indexed by its own process
