"""A push that loses races to native hosts is retried at once, taking in only what is new."""

from __future__ import annotations

import subprocess

from memoryui.store.entries import parse_daily
from tests.sync.helpers import at, remember
from tests.sync.remote import rivals_push_first
from tests.sync_fixtures import fsck_clean, git, is_ancestor, tip


def test_a_push_losing_many_races_still_publishes_in_one_round(instance, native, daemon,
                                                               bare) -> None:
    url = daemon.url("memory.git")
    a = instance("a", url)
    host = native(url)
    daily = remember(a.store, "ops", "local entry", at(11, 0))
    raced = rivals_push_first(a, host, 5)  # a native host pushes between each fetch and push
    r = a.round(blocking=True)
    assert (r.pushed, r.attempts, r.error) == (True, 6, None)
    assert tip(bare) == a.store.head()
    for sha in raced:
        assert is_ancestor(bare, sha, tip(bare))
    assert a.arrived_from_remote([*raced, a.store.head()]) == set(raced)
    assert git(bare, "show", f"main:{daily}") == a.store.read(daily)
    remote = git(bare, "show", f"main:{host.daily_path(at(11, 0).date())}")
    assert [e.body for e in parse_daily(remote)] == [f"pushed in between {i}" for i in range(5)]
    # Each retry merged only the new remote commit: one merge per race, no merge of merges.
    merges = git(bare, "rev-list", "--merges", "main", f"^{raced[-1]}").split()
    assert len(merges) == 5
    fsck_clean(bare)


def test_a_round_gives_up_at_its_deadline_and_the_next_one_publishes(instance, native,
                                                                     file_url, bare) -> None:
    a = instance("a", file_url, interval=0, timeout=1)  # a window of one second
    host = native(file_url)
    daily = remember(a.store, "ops", "waits for a quiet moment", at(12, 0))
    real_push = a.transport.push
    busy = [True]

    def always_raced(sha: str, branch: str):
        if busy[0]:
            host.remember("rival", at(12, 1))
            host.commit()
            host.push()
        return real_push(sha, branch)

    a.transport.push = always_raced
    r = a.round(blocking=True)
    assert not r.pushed and r.attempts >= 2
    assert r.error is not None and "the remote kept moving" in r.error and "in 1 s" in r.error
    busy[0] = False
    r = a.round(blocking=True)
    assert (r.pushed, r.error) == (True, None)
    assert git(bare, "show", f"main:{daily}") == a.store.read(daily)


def test_a_large_backlog_is_published_whole(instance, native, file_url, bare) -> None:
    """Past the packing threshold the commits go out from a pack made before the push."""
    a = instance("a", file_url)
    for i in range(70):
        remember(a.store, "ops", f"backlog {i}", at(13, i % 60))
        a.store.flush()
    packs = set((a.store.git.git_dir / "objects" / "pack").glob("*.pack"))
    r = a.round(blocking=True)
    assert (r.pushed, r.error) == (True, None)
    assert set((a.store.git.git_dir / "objects" / "pack").glob("*.pack")) - packs
    assert tip(bare) == a.store.head()
    path = a.store.path_for("daily", "ops", at(13, 0).date().isoformat())
    assert [e.body for e in parse_daily(git(bare, "show", f"main:{path}"))] == \
        [f"backlog {i}" for i in range(70)]
    assert subprocess.run(["git", "fsck", "--no-dangling"], cwd=a.store.root,
                          capture_output=True).returncode == 0
