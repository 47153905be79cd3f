"""Reverting one commit: a three-way merge per file, one new commit with `Reverts: <sha>`."""

from __future__ import annotations

import subprocess

import pytest

from memoryui.store import Actor, InvalidName, Store
from memoryui.store.revert import CannotMerge, MergeCommitRefused, StaleHead, plan, revert

MEM = "agents/ops-bot/memory/MEMORY.md"
TOPIC = "memory/world/deploys.md"
BOT, ALICE = Actor.agent("ops-bot"), Actor.user("alice")


def commits(store: Store) -> int:
    return len(store.log(limit=1000))


def test_revert_keeps_later_edits_and_is_one_commit(store: Store) -> None:
    store.write(MEM, "# Memory\n\n- one\n- two\n- three\n", actor=BOT, tool="reflect")
    bad = store.write(MEM, "# Memory\n\n- one WRONG\n- two\n- three\n", actor=BOT,
                      tool="reflect").commit
    store.write(MEM, "# Memory\n\n- one WRONG\n- two\n- three (later)\n", actor=BOT,
                tool="reflect")
    before = commits(store)
    res = revert(store, bad[:10], actor=ALICE, expect_head=store.head())
    assert store.read(MEM) == "# Memory\n\n- one\n- two\n- three (later)\n"
    assert commits(store) == before + 1
    new = store.commit(res.commit)
    assert new.trailers["Reverts"] == [bad]
    assert new.actor == "user:alice"
    assert [f.path for f in new.files] == [MEM]


def test_multi_file_commit_added_and_deleted_files(store: Store) -> None:
    store.write(TOPIC, "# Deploys\n\n- friday freeze\n", actor=BOT, tool="reflect")
    store.write(MEM, "# Memory\n\n- one\n", actor=BOT, tool="reflect")
    # One commit that edits MEM, deletes TOPIC and adds a new file.
    new_file = "memory/world/canary.md"
    grouped = Store(store.root, commit_delay=3600)  # the journal groups these three writes
    grouped.write(MEM, "# Memory\n\n- one\n- two\n", actor=BOT, tool="t", message="big change")
    grouped.delete(TOPIC, actor=BOT, tool="t", message="big change")
    grouped.write(new_file, "# Canary\n", actor=BOT, tool="t", message="big change")
    grouped.close()
    big = store.head()
    assert {f.path for f in store.commit(big).files} == {MEM, TOPIC, new_file}
    res = revert(store, big, actor=ALICE, expect_head=big)
    assert store.read(MEM) == "# Memory\n\n- one\n"
    assert store.read(TOPIC) == "# Deploys\n\n- friday freeze\n"
    assert not store.exists(new_file)
    assert {f.path for f in store.commit(res.commit).files} == {MEM, TOPIC, new_file}
    assert store.pending() == []


def test_conflict_writes_nothing_and_resolution_commits(store: Store) -> None:
    store.write(MEM, "# Memory\n\n- one\n", actor=BOT, tool="reflect")
    bad = store.write(MEM, "# Memory\n\n- one changed\n", actor=BOT, tool="reflect").commit
    store.write(MEM, "# Memory\n\n- one changed again\n", actor=BOT, tool="reflect")
    head = store.head()
    [f] = plan(store, bad)
    assert f.conflicts == 1 and "<<<<<<< current file" in f.text
    with pytest.raises(CannotMerge) as exc:
        revert(store, bad, actor=ALICE, expect_head=head)
    assert exc.value.status == 409 and exc.value.files[0].path == MEM
    assert store.head() == head and store.read(MEM) == "# Memory\n\n- one changed again\n"
    with pytest.raises(InvalidName):
        revert(store, bad, actor=ALICE, expect_head=head, resolved={MEM: f.text})
    res = revert(store, bad, actor=ALICE, expect_head=head,
                 resolved={MEM: "# Memory\n\n- one (resolved)\n"})
    assert store.read(MEM) == "# Memory\n\n- one (resolved)\n"
    assert store.commit(res.commit).trailers["Reverts"] == [bad]


def test_added_file_changed_since_is_a_conflict(store: Store) -> None:
    add = store.write(TOPIC, "# Deploys\n", actor=BOT, tool="reflect").commit
    store.write(TOPIC, "# Deploys\n\n- more\n", actor=BOT, tool="reflect")
    with pytest.raises(CannotMerge):
        revert(store, add, actor=ALICE)
    assert store.exists(TOPIC)


def test_stale_head_already_reverted_and_merge_commits(store: Store) -> None:
    store.write(MEM, "a\n", actor=BOT, tool="reflect")
    c = store.write(MEM, "b\n", actor=BOT, tool="reflect").commit
    old_head = store.head()
    store.write(TOPIC, "x\n", actor=BOT, tool="reflect")
    with pytest.raises(StaleHead) as exc:
        revert(store, c, actor=ALICE, expect_head=old_head)
    assert exc.value.status == 409 and store.read(MEM) == "b\n"
    revert(store, c, actor=ALICE)
    head = store.head()
    assert revert(store, c, actor=ALICE).commit is None  # nothing left to undo
    assert store.head() == head
    git = ["git", "-C", str(store.root), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "checkout", "-q", "-b", "side", c], check=True)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "side"], check=True)
    subprocess.run([*git, "checkout", "-q", "main"], check=True)
    subprocess.run([*git, "merge", "-q", "--no-ff", "-m", "merge side", "side"], check=True)
    with pytest.raises(MergeCommitRefused) as exc2:
        revert(store, store.resolve("HEAD"), actor=ALICE)
    assert exc2.value.status == 400 and "choose a parent" in str(exc2.value)


def test_revert_on_a_deferred_store_commits_pending_writes_first(store: Store) -> None:
    """The server groups agent writes for a moment: those are committed on their own,
    and the revert is still exactly one commit of its own."""
    store.write(MEM, "a\n", actor=BOT, tool="reflect")
    c = store.write(MEM, "a\nb\n", actor=BOT, tool="reflect").commit
    deferred = Store(store.root, commit_delay=3600)
    try:
        deferred.write(TOPIC, "x\n", actor=BOT, tool="reflect")  # waits in the journal
        res = revert(deferred, c, actor=ALICE)
        assert res.commit == deferred.head() and deferred.read(MEM) == "a\n"
        assert [f.path for f in deferred.commit(res.commit).files] == [MEM]
        assert [f.path for f in deferred.log(limit=2)[1].files] == [TOPIC]
    finally:
        deferred.close()
