"""Passages and their vectors, kept with the keyword index, on both backends."""

from __future__ import annotations

from memoryui.search import PostgresSearchIndex, SearchIndex
from memoryui.search.passages import sections
from memoryui.store import Store
from tests.search.helpers import ALICE, daily, note

BACKUPS = "# Ops facts\n\n## Backups\n\nPostgres dumps happen nightly at 02:00.\n"
REFUNDS = "# Billing\n\n## Refunds\n\nCustomers get their money back within 30 days.\n"


def _ids(index: SearchIndex, path: str) -> dict[str, int]:
    """text -> row id of a file's passages (a passage embedded again gets a new id)."""
    return {text: rid for rid, _s, _e, _h, text in index.vectors.passages_of(path)}


def test_nearest_finds_a_paraphrase(index: SearchIndex, store: Store) -> None:
    note(store, "ops-bot", "backups", BACKUPS)
    note(store, "billing-agent", "refunds", REFUNDS)
    index.drain()
    got = index.nearest("when do the database backups run?", k=3)
    assert got[0].path.endswith("backups.md")
    assert "Postgres dumps happen nightly" in got[0].text
    assert got[0].heading == "Backups"
    assert got[0].start_line <= 5 <= got[0].end_line
    assert -1.0 <= got[0].score <= 1.0001
    assert got[0].score > got[-1].score


def test_filters_scope_kind_and_excluded_paths(index: SearchIndex, store: Store) -> None:
    mine = note(store, "ops-bot", "backups", BACKUPS)
    log = daily(store, "billing-agent", "2026-11-20", ("09:00", "Postgres dumps ran at 02:00."))
    index.drain()
    query = "database backups"
    assert {p.path for p in index.nearest(query, k=5)} == {mine, log}
    assert {p.path for p in index.nearest(query, k=5, scope="billing-agent")} == {log}
    assert {p.path for p in index.nearest(query, k=5, kinds={"note"})} == {mine}
    assert {p.path for p in index.nearest(query, k=5, exclude_paths={mine})} == {log}
    entry = index.nearest(query, k=5, kinds={"daily"})[0]
    assert entry.entry_id and entry.entry_id.startswith("0900-")
    assert entry.heading == "09:00"
    # a scope token reads its own files and the shared ones, never another scope's
    assert {p.path for p in index.nearest(query, k=5, visible_to="ops-bot")} == {mine}


def test_an_edit_embeds_only_the_changed_passages(index: SearchIndex, store: Store) -> None:
    text = "".join(f"## Topic {i}\n\nFact number {i} about the {w} service.\n\n"
                   for i, w in enumerate(["billing", "search", "deploy", "backup"]))
    path = note(store, "ops-bot", "facts", text)
    index.drain()
    before = _ids(index, path)
    assert len(before) == 4
    # a line added above every section moves them all: their lines change, not their vectors
    store.write(path, "Kept by ops.\n\n" + text.replace("deploy service", "deploy pipeline"),
                actor=ALICE, tool="test")
    index.drain()
    after = _ids(index, path)
    kept = {t: i for t, i in after.items() if t in before}
    assert kept == {t: i for t, i in before.items() if "deploy" not in t}
    new = set(after) - set(before)
    assert new == {"Kept by ops.", "## Topic 2\n\nFact number 2 about the deploy pipeline."}
    assert all(i > max(before.values()) for t, i in after.items() if t in new)
    assert [s for _i, s, *_ in index.vectors.passages_of(path)] == [1, 3, 7, 11, 15]
    # an entry appended to a daily log embeds that entry alone
    log = daily(store, "ops-bot", "2026-11-20", ("09:00", "Deployed the search service."))
    index.drain()
    first = _ids(index, log)
    daily(store, "ops-bot", "2026-11-20", ("10:00", "Rolled the deploy back."))
    index.drain()
    assert _ids(index, log) == {**first, "Rolled the deploy back.": max(_ids(index, log).values())}
    assert [h for _i, _s, _e, h, _t in index.vectors.passages_of(log)] == ["09:00", "10:00"]


def test_a_deleted_file_loses_its_passages(index: SearchIndex, store: Store) -> None:
    path = note(store, "ops-bot", "backups", BACKUPS)
    index.drain()
    assert index.nearest("database backups", k=1)[0].path == path
    store.delete(path, actor=ALICE, tool="test")
    index.drain()
    assert index.vectors.passages_of(path) == []
    assert all(p.path != path for p in index.nearest("database backups", k=5))


def _reader(index: SearchIndex) -> SearchIndex:
    """Another handle on the same index, as a worker has while the committer writes."""
    if index.backend == "sqlite":
        return SearchIndex(index.path, catch_up_interval=0, background=False)
    return PostgresSearchIndex(index.dsn, catch_up_interval=0, background=False)


def test_a_worker_follows_the_passages_another_process_writes(index: SearchIndex,
                                                              store: Store) -> None:
    """A worker's cached bits follow what the committer adds, changes and removes."""
    reader = _reader(index)
    try:
        first = note(store, "ops-bot", "backups", BACKUPS)
        index.drain()
        assert {p.path for p in reader.nearest("database backups", k=5)} == {first}
        other = note(store, "ops-bot", "dumps", "Database dumps are copied to the bucket.")
        index.drain()
        assert {p.path for p in reader.nearest("database backups", k=5)} == {first, other}
        store.write(other, "Database dumps go to the cold bucket.\n", actor=ALICE, tool="t")
        index.drain()
        near = reader.nearest("database backups", k=5)
        assert {p.text for p in near} == {"Database dumps go to the cold bucket.",
                                          *[t for *_, t in index.vectors.passages_of(first)]}
        store.delete(first, actor=ALICE, tool="test")
        index.drain()
        assert {p.path for p in reader.nearest("database backups", k=5)} == {other}
        index.rebuild()
        assert {p.path for p in reader.nearest("database backups", k=5)} == {other}
    finally:
        reader.close()


def test_rebuild_and_catch_up_embed_everything(index: SearchIndex, store: Store) -> None:
    path = note(store, "ops-bot", "backups", BACKUPS)
    index.drain()
    index.rebuild()
    assert index.nearest("database backups", k=1)[0].path == path
    assert index.vectors_ready()


def test_queries_the_model_cannot_read_find_nothing(index: SearchIndex, store: Store) -> None:
    note(store, "ops-bot", "backups", BACKUPS)
    index.drain()
    assert index.nearest("", k=3) == []
    assert index.nearest("   ", k=3) == []
    assert index.nearest("database backups", k=0) == []
    for query in ("\u2603\ufe0f\U0001f680", "x" * 1_000_000, "\x00\x01\x02\xff" * 1000):
        assert isinstance(index.nearest(query, k=3), list)


def test_sections_follow_headings_entries_and_length() -> None:
    text = "---\ntitle: x\n---\nIntro line.\n\n# A\n\none\n\n```\n# not a heading\n```\n## B\n\ntwo\n"
    got = sections(text, "note")
    assert [(s.heading, s.start_line) for s in got] == [("", 4), ("A", 6), ("B", 13)]
    assert "# not a heading" in got[1].text
    long = "# Big\n\n" + "\n\n".join("word " * 100 for _ in range(20))
    parts = sections(long, "note")
    assert len(parts) > 5 and all(len(s.text) <= 2_400 for s in parts)
    assert all(s.heading == "Big" for s in parts)
    log = "# 2026-11-20\n\n## 09:00\n\nFirst.\n\n## 10:30\n\nSecond entry.\n"
    entries = sections(log, "daily")
    assert [(s.heading, s.text, s.start_line) for s in entries] == [
        ("09:00", "First.", 3), ("10:30", "Second entry.", 7)]
    assert sections("", "daily") == []


def test_a_long_daily_log_keeps_its_newest_entries_findable_by_meaning(
        index: SearchIndex, store: Store, monkeypatch) -> None:
    """A file gets at most MAX_PASSAGES vectors: a note its first passages, a daily log its
    newest entries, so the latest thing a busy agent logged is still found by meaning."""
    from memoryui.search import passages

    monkeypatch.setattr(passages, "MAX_PASSAGES", 3)
    log = daily(store, "ops-bot", "2026-11-20",
                *[(f"0{h}:00", f"Routine check number {h} passed.") for h in range(1, 6)],
                ("09:00", "Postgres dumps happen nightly at 02:00."))
    index.drain()
    kept = sorted(text for text in _ids(index, log))
    assert kept == ["Postgres dumps happen nightly at 02:00.", "Routine check number 4 passed.",
                    "Routine check number 5 passed."]
    got = index.nearest("when do the database backups run?", k=1)
    assert got[0].path == log and "Postgres dumps" in got[0].text
    long = "# Big\n\n" + "\n\n".join(f"## Part {n}\n\nParagraph {n} of the doc." for n in range(6))
    assert [s.heading for s in passages.sections(long, "note")] == ["Big", "Part 0", "Part 1"]


def test_a_fresh_index_is_ready_for_meaning_with_what_its_process_just_wrote(
        index: SearchIndex, store: Store) -> None:
    """The review's related memories ask before they search: the writes this process made
    are indexed first, as for a search, so a fresh index does not answer "not ready"."""
    note(store, "ops-bot", "backups", "Postgres dumps happen nightly at 02:00.\n")
    assert index.vectors_ready()
    assert index.nearest("when do the database backups run?", k=1)


def test_a_growing_daily_log_has_the_passages_of_a_whole_parse(monkeypatch) -> None:
    """Indexing a log again after appends reuses its last parse (`DailyMemo`): the
    passages are those of the log cut whole (the newest MAX_PASSAGES entries, a long entry
    cut in parts), and an edit before the end or a shorter log is seen."""
    from memoryui.search import passages

    monkeypatch.setattr(passages, "MAX_PASSAGES", 4)
    memo = passages.DailyMemo()
    path = "agents/ops-bot/memory/daily/2026-11-20.md"
    text = "# 2026-11-20\n"
    for n in range(8):
        text += f"\n## 09:0{n}\n\nCheck {n} passed.\n"
        if n == 5:
            text += "\n\n".join("word " * 150 for _ in range(3)) + "\n"
        assert memo.sections(path, text) == passages.sections(text, "daily")
    assert [s.heading for s in memo.sections(path, text)] == ["09:05", "09:05", "09:06", "09:07"]
    edited = text.replace("Check 7 passed.", "Check 7 failed.")
    assert memo.sections(path, edited)[-1].text == "Check 7 failed."
    assert memo.sections(path, text[:60]) == passages.sections(text[:60], "daily")
    assert memo.sections(path, "") == []


def test_the_pass_on_signs_keeps_more_true_neighbours_than_hamming_alone() -> None:
    """Among 20,000 passages, the 256 kept for the exact ranking hold more of the 10 truly
    nearest when the query's own values weigh the signs (what a query at 200k files needs:
    the Hamming pass alone lets true neighbours go)."""
    import numpy as np

    from memoryui.search.embeddings import DIM
    from memoryui.search.signbits import CODE_WORDS, closest, refine, sign_code

    rng = np.random.default_rng(7)
    vecs = rng.standard_normal((20_000, DIM)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    codes = np.ascontiguousarray(sign_code(vecs)).view(np.uint64).reshape(-1, CODE_WORDS).T
    kept_hamming = kept_refined = 0
    for q in range(20):
        query = vecs[q] + 0.9 * rng.standard_normal(DIM).astype(np.float32) / DIM ** 0.5
        query /= np.linalg.norm(query)
        truth = set(np.argsort(-(vecs @ query))[:10].tolist())
        code = sign_code(query[None, :]).view(np.uint64)[0]
        kept_hamming += len(truth & set(closest(codes, code, None, 256).tolist()))
        wide = closest(codes, code, None, 4096)
        kept_refined += len(truth & set(refine(codes, wide, query, 256).tolist()))
    assert kept_refined > kept_hamming
