"""Sync rounds against a real remote (file:// and git daemon) and a native agent host: fast
forwards, entry-by-entry and three-way merges, and conflicts kept local until resolved."""

from __future__ import annotations

import pytest

from memoryui.store.entries import parse_daily
from memoryui.store.sync import ConflictChanged, via_remote
from tests.catalogued import catalogued
from tests.sync.conftest import ALICE
from tests.sync.helpers import DAY, at, reflect, remember
from tests.sync.remote import show
from tests.sync_fixtures import fsck_clean, git, is_ancestor, tip


def test_fast_forward_takes_remote_commits_with_their_authors(instance, native, file_url,
                                                              bare) -> None:
    a = instance("a", file_url)
    host = native(file_url)
    daily = host.remember("native host learned the cache TTL", at(9, 0))
    mem = host.reflect("# Memory\n\n- the cache TTL is 5 minutes\n")
    native_head = host.commit("native-bot: remember and reflect")
    host.push()
    seen: list[str] = []
    a.store.listeners.append(lambda paths, _when: seen.extend(paths))
    assert daily not in catalogued(a.store)

    r = a.round(blocking=True)
    assert (r.error, r.integrated, r.pushed) == (None, 1, False)
    assert a.store.head() == native_head  # a fast-forward: no merge commit
    assert a.store.read(daily) == host.read(daily)
    assert {daily, mem} <= set(catalogued(a.store))  # the pages' read model has them
    assert {daily, mem} <= set(seen)  # listeners (the search index) were told
    assert catalogued(a.store)[mem].last["author"] == "native-bot"
    assert a.store.pending() == []

    # Arrived-from-remote marks exactly the fetched commits, not what is made here.
    reflect(a.store, "ops", "# Memory\n\n- local fact\n")
    assert a.round(blocking=True).pushed
    local = a.store.head()
    assert a.arrived_from_remote([native_head, local]) == {native_head}
    assert via_remote(a.store, [native_head, local]) == {native_head}
    assert tip(bare) == local
    assert a.round(blocking=True).summary() == "sync: up to date"
    fsck_clean(bare)
    fsck_clean(a.store.root)


def test_the_committer_tells_its_listeners_of_what_a_round_merged_once(instance, native,
                                                                       file_url) -> None:
    """In the committer process a round tells the listeners (its search index) of the paths
    it brought in; the next tick, following the branch for commits others made, does not
    tell them again (each telling re-reads and re-indexes the files)."""
    a = instance("a", file_url)
    assert a.store.host_commits(wait=False)
    a.store.committer.stop.set()  # its ticks are made by hand here
    reflect(a.store, "ops", "# Memory\n\n- local fact\n")
    a.store.flush()
    a.store.committer._tick()  # the first look at the branch
    host = native(file_url)
    daily = host.remember("native host learned the cache TTL", at(9, 0))
    host.commit("native-bot: remember")
    host.push()
    told: list[list[str]] = []
    a.store.listeners.append(lambda paths, _when: told.append(list(paths)))
    assert a.round(blocking=True).integrated == 1
    assert [daily] in told
    heard = len(told)
    a.store.committer._tick()
    assert len(told) == heard, told


def test_housekeeping_holding_the_commit_graph_never_fails_a_round(instance, native,
                                                                   file_url) -> None:
    """The background commit-graph write and a fetch used to race for one lock."""
    a = instance("a", file_url)
    host = native(file_url)
    host.remember("native host learned the cache TTL", at(9, 0))
    arrived = host.commit("native-bot: remember")
    host.push()
    chain = a.store.git.git_dir / "objects" / "info" / "commit-graphs"
    chain.mkdir(parents=True, exist_ok=True)
    lock = chain / "commit-graph-chain.lock"
    lock.write_text("")  # as `git commit-graph write --split` holds it while it runs
    try:
        r = a.round(blocking=True)
    finally:
        lock.unlink()
    assert (r.error, r.integrated) == (None, 1)
    assert a.store.head() == arrived


def test_a_round_that_finds_the_index_locked_leaves_git_status_clean_after_the_next_tick(
        instance, native, file_url) -> None:
    """Another git process (a `git status` refreshing the index) may hold `index.lock` as a
    round stages what it brought: the next commit tick stages it, so `git status` never keeps
    showing the remote's files as changed (and a person's `git commit` never reverts them)."""
    a = instance("a", file_url)
    host = native(file_url)
    mem = host.reflect("# Memory\n\n- the cache TTL is 5 minutes\n")
    arrived = host.commit("native-bot: reflect")
    host.push()
    lock = a.store.git.git_dir / "index.lock"
    lock.write_text("")
    try:
        r = a.round(blocking=True)
    finally:
        lock.unlink()
    assert (r.error, r.integrated) == (None, 1)
    assert a.store.head() == arrived and a.store.read(mem) == host.read(mem)
    assert a.store.git.has_uncommitted()  # what the committer's next tick looks at
    a.store.flush()
    assert git(a.store.root, "status", "--porcelain") == ""


def test_daily_logs_from_both_sides_merge_entry_by_entry(instance, native, daemon, bare,
                                                         tmp_path) -> None:
    url = daemon.url("memory.git")
    host = native(url)
    path = host.remember("first, from the host", at(9, 0))
    host.commit()
    host.push()
    a = instance("a", url)  # bootstrap clones the remote
    assert a.store.read(path) == host.read(path)

    host.remember("host at 09:20", at(9, 20))
    host.remember("host at 09:40", at(9, 40))
    host.commit()
    host.push()
    remember(a.store, "native-bot", "memoryui at 09:20", at(9, 20))  # the same minute
    remember(a.store, "native-bot", "memoryui at 09:30", at(9, 30))

    r = a.round(blocking=True)
    assert (r.error, r.conflicts, r.pushed) == (None, [], True)
    text = a.store.read(path)
    assert text.count("# 2026-02-12") == 1
    assert [(e.time, e.body) for e in parse_daily(text)] == [
        ("09:00", "first, from the host"), ("09:20", "memoryui at 09:20"),
        ("09:20", "host at 09:20"), ("09:30", "memoryui at 09:30"),
        ("09:40", "host at 09:40")]
    assert text == ("# 2026-02-12\n\n## 09:00\n\nfirst, from the host\n"
                    "\n## 09:20\n\nmemoryui at 09:20\n\n## 09:20\n\nhost at 09:20\n"
                    "\n## 09:30\n\nmemoryui at 09:30\n\n## 09:40\n\nhost at 09:40\n")
    assert show(bare, path) == text
    host.pull()
    assert host.read(path) == text
    b = instance("b", url)
    assert b.store.read(path) == text
    assert a.round(blocking=True).summary() == "sync: up to date"
    for repo in (bare, a.store.root, b.store.root, host.path):
        fsck_clean(repo)


def test_clean_three_way_merge_of_memory(instance, native, file_url, bare) -> None:
    lines = ["# Memory", "", "- one", "- two", "- three", "- four", "- five", ""]
    host = native(file_url)
    mem = host.reflect("\n".join(lines))
    host.commit()
    host.push()
    a = instance("a", file_url)
    host.reflect("\n".join(lines).replace("- one", "- ONE (host)"))
    theirs = host.commit()
    host.push()
    reflect(a.store, "native-bot", "\n".join(lines).replace("- five", "- FIVE (memoryui)"))
    ours = a.store.head()

    r = a.round(blocking=True)
    assert (r.error, r.conflicts, r.pushed) == (None, [], True)
    merged = "\n".join(lines).replace("- one", "- ONE (host)").replace("- five",
                                                                         "- FIVE (memoryui)")
    assert a.store.read(mem) == merged
    parents = git(a.store.root, "log", "-1", "--format=%P").split()
    assert parents == [ours, theirs]
    body = git(a.store.root, "log", "-1", "--format=%B")
    assert f"- {mem}" in body and "Memoryui-Actor: system:sync" in body
    host.pull()
    assert host.read(mem) == merged
    fsck_clean(bare)


def test_same_line_conflict_keeps_local_pauses_publishing_until_resolved(
        instance, native, daemon, bare) -> None:
    url = daemon.url("memory.git")
    host = native(url)
    mem = host.reflect("# Memory\n\n- the deploy window is Tuesday\n")
    host.commit()
    host.push()
    a = instance("a", url)
    host.reflect("# Memory\n\n- the deploy window is Wednesday\n")
    c1 = host.commit("host: Wednesday")
    host.push()
    thursday = "# Memory\n\n- the deploy window is Thursday\n"
    reflect(a.store, "native-bot", thursday)

    r = a.round(blocking=True)
    assert (r.conflicts, r.paused, r.pushed, r.error) == ([mem], True, False, None)
    assert a.store.read(mem) == thursday  # the local version stays
    assert tip(bare) == c1  # and the remote never sees it
    st = a.status()
    assert (st.state, st.publishing_paused) == ("conflict", True)
    assert [(c.path, c.theirs_commit) for c in st.conflicts] == [(mem, c1)]
    base, ours, theirs = a.conflict_texts(mem)
    assert ("Tuesday" in base, "Thursday" in ours, "Wednesday" in theirs) == (True,) * 3

    # Agent writes go on, other files keep flowing in; nothing is pushed meanwhile.
    daily = remember(a.store, "ops", "still writing during the conflict", at(10, 0))
    reflect(a.store, "native-bot", thursday + "- and Friday\n")
    host.remember("the host keeps going", at(10, 5))
    c2 = host.commit()
    host.push()
    r = a.round(blocking=True)
    assert (r.integrated, r.pushed, r.paused, r.error) == (1, False, True, None)
    assert "the host keeps going" in a.store.read(host.daily_path(DAY))
    assert a.store.read(daily) and tip(bare) == c2

    # The remote edits the file again: the conflict follows its newest version.
    host.reflect("# Memory\n\n- the deploy window is Wednesday, 10:00 UTC\n")
    c3 = host.commit("host: a time")
    host.push()
    assert a.round(blocking=True).conflicts == [mem]
    assert a.conflict(mem).theirs_commit == c3
    _base, ours, theirs = a.conflict_texts(mem)
    assert "and Friday" in ours and "10:00 UTC" in theirs
    with pytest.raises(ConflictChanged):
        a.resolve(mem, "stale", actor=ALICE, expect_theirs=c1)

    merged = ("# Memory\n\n- the deploy window is Wednesday, 10:00 UTC (Thursday as a "
              "fallback)\n- and Friday\n")
    sha = a.resolve(mem, merged, actor=ALICE, expect_theirs=c3)
    message = git(a.store.root, "log", "-1", "--format=%B", sha)
    assert f"Resolves-Sync-Conflict: {c3}" in message
    assert "Memoryui-Actor: user:alice" in message
    assert a.status().conflicts == []
    r = a.round(blocking=True)
    assert (r.pushed, r.error) == (True, None)
    final = tip(bare)
    assert all(is_ancestor(bare, t, final) for t in (c1, c2, c3))  # nothing forced away
    assert show(bare, mem) == merged
    host.pull()
    assert host.read(mem) == merged
    assert a.status().state == "synced"
    for repo in (bare, a.store.root, host.path):
        fsck_clean(repo)


def test_modify_delete_conflicts_both_ways(instance, native, file_url, bare) -> None:
    host = native(file_url)
    gone_there = "agents/native-bot/memory/notes/runbook.md"
    gone_here = "agents/native-bot/memory/notes/oncall.md"
    host.write(gone_there, "runbook v1\n")
    host.write(gone_here, "oncall v1\n")
    host.commit()
    host.push()
    a = instance("a", file_url)
    host.delete(gone_there)
    host.write(gone_here, "oncall v2 from the host\n")
    host.commit()
    host.push()
    a.store.write(gone_there, "runbook v2 from memoryui\n", actor=ALICE, tool="edit")
    a.store.delete(gone_here, actor=ALICE, tool="delete")

    r = a.round(blocking=True)
    assert sorted(r.conflicts) == sorted([gone_there, gone_here]) and not r.pushed
    assert a.store.read(gone_there) == "runbook v2 from memoryui\n"
    assert not a.store.exists(gone_here)
    assert a.conflict(gone_there).theirs is None and a.conflict(gone_here).ours is None
    assert a.conflict_texts(gone_here) == ("oncall v1\n", None, "oncall v2 from the host\n")

    a.resolve(gone_there, None, actor=ALICE)  # agree with the deletion
    assert a.round(blocking=True).paused  # one conflict still open
    a.resolve(gone_here, "oncall v2 from the host\n", actor=ALICE)
    r = a.round(blocking=True)
    assert (r.pushed, r.error) == (True, None)
    assert show(bare, gone_there) is None
    assert show(bare, gone_here) == "oncall v2 from the host\n"
    fsck_clean(bare)
