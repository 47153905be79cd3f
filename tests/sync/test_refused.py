"""Entries memoryui refuses from a remote are left out, shown, and never stall a round.

The hostile commits are written object by object (tests/sync/evil.py): git's porcelain
refuses to make most of them.
"""

from __future__ import annotations

import os
from pathlib import Path

from memoryui.store.housekeeping import housekeeping_paused
from memoryui.store.sync import Syncer
from memoryui.store.sync.refuse import rewriting_attributes
from tests.sync.evil import GITMODULES, blob, push_commit
from tests.sync.helpers import at, remember
from tests.sync_fixtures import git, is_ancestor, tip

MEM = "agents/native-bot/memory/MEMORY.md"


def _seeded(instance, native, url: str):
    host = native(url)
    host.reflect("# Memory\n\n- seeded\n")
    host.commit("seed")
    host.push()
    return instance("a", url), host


def _status(root: Path) -> str:
    return git(root, "status", "--porcelain", "--ignored=no", "--untracked-files=all")


def _refused(syncer) -> dict[str, str]:
    return {e.path: e.commit for e in syncer.states.read().refused}


def test_a_hostile_gitmodules_never_stalls_sync(instance, native, file_url, bare) -> None:
    a, host = _seeded(instance, native, file_url)
    evil = push_commit(host.path, {".gitmodules": ("100644", blob(host.path, GITMODULES)),
                                   "sub": ("160000", host.head())}, "add a submodule")
    r = a.round(blocking=True)
    assert r.error is None
    root = a.store.root
    head = a.store.head()
    assert head != evil and is_ancestor(root, evil, head)  # the remote's commit is kept
    assert not (root / ".gitmodules").exists() and not (root / "sub").exists()
    assert _refused(a) == {".gitmodules": evil, "sub": evil}
    assert _status(root) == ""
    msg = git(root, "log", "-1", "--format=%B", head)
    assert "'.gitmodules': submodule configuration" in msg and "'sub': a submodule" in msg

    # Later rounds go on: the remote moves on top of the hostile commit, an agent writes.
    daily = remember(a.store, "ops", "written after the hostile commit", at(10, 0))
    nxt = push_commit(host.path, {"agents/native-bot/memory/notes/next.md":
                                  ("100644", blob(host.path, "next\n"))}, "next")
    r = a.round(blocking=True)
    assert (r.error, r.pushed) == (None, True)
    assert a.store.read("agents/native-bot/memory/notes/next.md") == "next\n"
    assert is_ancestor(bare, nxt, tip(bare)) and tip(bare) == a.store.head()
    assert git(bare, "show", f"main:{daily}").endswith("written after the hostile commit\n")
    assert ".gitmodules" not in git(bare, "ls-tree", "--name-only", "main")
    assert not list(root.rglob("pwned"))
    # Even a plain git in the clone (no memoryui settings) still fetches (once memoryui's
    # housekeeping, which writes the commit-graph after a round, has let go of its lock).
    with housekeeping_paused(root):
        git(root, "fetch", "--quiet", file_url, "main")


def test_dotgit_and_dotdot_entries_are_left_out_and_status_stays_clean(
        instance, native, file_url, tmp_path) -> None:
    a, host = _seeded(instance, native, file_url)
    hook = blob(host.path, "#!/bin/sh\necho pwned > /tmp/pwned-by-sync\n")
    evil = push_commit(host.path, {".git/hooks/post-checkout": ("100755", hook),
                                   "../escape.md": ("100644", blob(host.path, "outside\n")),
                                   "agents/.GIT/config": ("100644", blob(host.path, "x\n"))},
                       "hostile names")
    for _ in range(2):  # every round, not only the first
        r = a.round(blocking=True)
        assert r.error is None
    root = a.store.root
    assert is_ancestor(root, evil, a.store.head())
    assert not (root / ".git" / "hooks" / "post-checkout").exists()
    assert not (root.parent / "escape.md").exists() and not (root / "agents" / ".GIT").exists()
    assert _status(root) == ""
    assert set(_refused(a)) == {".git", "..", "agents/.GIT"}

    remember(a.store, "ops", "still publishing", at(11, 0))
    r = a.round(blocking=True)
    assert (r.error, r.pushed) == (None, True)


def test_a_linked_daily_folder_leaves_remember_and_recall_working(
        instance, native, file_url, bare, tmp_path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    a, host = _seeded(instance, native, file_url)
    link = blob(host.path, str(outside))
    evil = push_commit(host.path, {"agents/ops/memory/daily": ("120000", link),
                                   "agents/ops/memory/notes/p.md": ("120000",
                                                                    blob(host.path, "/etc/passwd"))},
                       "links")
    assert a.round(blocking=True).error is None
    folder = a.store.root / "agents" / "ops" / "memory" / "daily"
    assert not os.path.lexists(folder)
    assert _refused(a) == {"agents/ops/memory/daily": evil,
                           "agents/ops/memory/notes/p.md": evil}
    path = remember(a.store, "ops", "remember works", at(12, 0))
    assert a.store.read(path).endswith("remember works\n")
    assert a.round(blocking=True).pushed
    assert git(bare, "cat-file", "-p", f"main:{path}").endswith("remember works\n")
    assert list(outside.iterdir()) == []


def test_content_rewriting_attributes_are_refused_plain_ones_kept(instance, native,
                                                                  file_url) -> None:
    a, host = _seeded(instance, native, file_url)
    push_commit(host.path, {
        ".gitattributes": ("100644", blob(host.path, "*.md filter=evil\n")),
        "agents/.gitattributes": ("100644", blob(host.path, "# union merges\n*.md merge=union\n")),
    }, "attributes")
    assert a.round(blocking=True).error is None
    assert not (a.store.root / ".gitattributes").exists()
    assert (a.store.root / "agents" / ".gitattributes").read_text().endswith("merge=union\n")
    assert set(_refused(a)) == {".gitattributes"}
    assert rewriting_attributes("* text=auto\n") and rewriting_attributes("a ident\n")
    assert rewriting_attributes("*.md eol=crlf\n") and rewriting_attributes("x working-tree-encoding=UTF-16\n")
    assert not rewriting_attributes("*.bin -text -diff\n# filter=x\n*.md linguist-generated\n")


def test_a_refused_entry_conflicts_with_nothing_when_the_remote_edits_it(
        instance, native, file_url) -> None:
    """Once left out, a later remote edit of the entry is left out again, never a conflict."""
    a, host = _seeded(instance, native, file_url)
    first = push_commit(host.path, {".gitmodules": ("100644", blob(host.path, GITMODULES))}, "1")
    remember(a.store, "ops", "local", at(9, 0))
    assert a.round(blocking=True).pushed
    second = push_commit(host.path, {".gitmodules": ("100644", blob(host.path, GITMODULES + "#\n"))},
                         "2")
    r = a.round(blocking=True)
    assert (r.error, r.conflicts) == (None, [])
    assert [e.commit for e in a.states.read().refused] == [second, first]
    assert not (a.store.root / ".gitmodules").exists()
    assert a.status().state == "synced" and a.store.read(MEM) == "# Memory\n\n- seeded\n"


def test_a_clone_of_a_hostile_remote_starts_without_what_it_refuses(instance, native,
                                                                    file_url) -> None:
    host = native(file_url)
    host.reflect("# Memory\n\n- seeded\n")
    host.commit("seed")
    host.push()
    evil = push_commit(host.path, {".gitmodules": ("100644", blob(host.path, GITMODULES)),
                                   "../escape.md": ("100644", blob(host.path, "outside\n")),
                                   "agents/ops/memory/daily": ("120000", blob(host.path, "/tmp"))},
                       "hostile")
    a = instance("fresh", file_url)  # bootstrap clones into an empty folder
    root = a.store.root
    assert a.store.read(MEM) == "# Memory\n\n- seeded\n"
    assert git(root, "rev-parse", "HEAD^").strip() == evil
    assert not (root / ".gitmodules").exists() and not (root.parent / "escape.md").exists()
    assert not os.path.lexists(root / "agents" / "ops" / "memory" / "daily")
    assert _status(root) == ""
    assert _refused(a) == {".gitmodules": evil, "..": evil, "agents/ops/memory/daily": evil}
    path = remember(a.store, "ops", "a fresh clone remembers", at(8, 0))
    r = a.round(blocking=True)
    assert (r.error, r.pushed) == (None, True)
    assert a.store.read(path).endswith("a fresh clone remembers\n")


def test_a_clone_that_took_refused_entries_before_heals_at_the_next_change(
        instance, native, file_url, tmp_path) -> None:
    """A clone whose HEAD already holds a linked daily folder and a `..` entry (taken in
    before memoryui refused them) loses them at the next remote change."""
    outside = tmp_path / "outside"
    outside.mkdir()
    a, host = _seeded(instance, native, file_url)
    evil = push_commit(host.path, {"agents/ops/memory/daily": ("120000", blob(host.path,
                                                                              str(outside))),
                                   "../escape.md": ("100644", blob(host.path, "outside\n"))},
                       "hostile")
    root = a.store.root
    with housekeeping_paused(root):  # the fetch writes the commit-graph too
        git(root, "fetch", "--quiet", "--no-recurse-submodules", file_url, "main")
        git(root, "update-ref", "refs/heads/main", evil)  # as a fast-forward took it in
    (root / "agents" / "ops" / "memory").mkdir(parents=True)
    os.symlink(outside, root / "agents" / "ops" / "memory" / "daily")
    assert "../escape.md" in _status(root)

    fresh = Syncer(a.store, a.config)  # a restarted server
    push_commit(host.path, {"agents/native-bot/memory/notes/n.md":
                            ("100644", blob(host.path, "n\n"))}, "an ordinary change")
    r = fresh.round(blocking=True)
    assert r.error is None
    assert not os.path.lexists(root / "agents" / "ops" / "memory" / "daily")
    assert _status(root) == ""
    assert set(_refused(fresh)) == {"agents/ops/memory/daily", ".."}
    path = remember(a.store, "ops", "remembered again", at(9, 30))
    assert a.store.read(path).endswith("remembered again\n")
    assert fresh.round(blocking=True).pushed
    assert list(outside.iterdir()) == []
