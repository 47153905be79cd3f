"""git's index on large workspaces: split, refreshed by git itself, read as git reads it, and
never loaded by libgit2 (which cannot read a split index). Checked against git's own view:
`git ls-files --debug`, `git status`, `git diff --cached`, and a person's `git commit`."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from memoryui.store import Actor, Store, gitindex, housekeeping, walk

BOT = Actor.agent("ops-bot")
DAY = "agents/ops-bot/memory/daily/2026-11-20.md"


def git(root: Path, *args: str, check: bool = True) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "Hand", "GIT_AUTHOR_EMAIL": "hand@example.org",
           "GIT_COMMITTER_NAME": "Hand", "GIT_COMMITTER_EMAIL": "hand@example.org"}
    return subprocess.run(["git", *args], cwd=root, check=check, capture_output=True,
                          text=True, env=env).stdout


def as_git_lists(root: Path) -> dict[str, tuple[int, int]]:
    """path -> (size, mtime seconds) of every index entry, as `git ls-files --debug` says."""
    out, path = {}, None
    for line in git(root, "ls-files", "--debug").splitlines():
        if not line.startswith("  "):
            path = line
        elif line.strip().startswith("mtime:"):
            mtime = int(line.split()[1].split(":")[0])
        elif line.strip().startswith("size:"):
            out[path] = (int(line.split()[1]), mtime)
    return out


def shared_parts(root: Path) -> dict[str, tuple[int, int]]:
    """The shared parts by name, with inode and size (git touches their times when it uses
    them; a rewrite is a new file)."""
    return {p.name: (p.stat().st_ino, p.stat().st_size)
            for p in (root / ".git").glob("sharedindex.*")}


@pytest.fixture
def split(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    """A workspace large enough (the threshold lowered) for memoryui to split its index."""
    monkeypatch.setattr(housekeeping, "SPLIT_INDEX_FROM", 1)
    store = Store(tmp_path / "ws")
    for n in range(40):
        store.write(f"memory/world/topic-{n:02d}.md", f"# Topic {n}\n", actor=BOT, tool="t")
    store.git.split_index()  # as the next housekeeping would, now that the index is large
    store.write(DAY, "# 2026-11-20\n", actor=BOT, tool="remember")
    yield store
    store.close()


@pytest.mark.parametrize("version", ["2", "4"])
def test_the_size_of_a_split_index_is_read_from_its_headers(tmp_path: Path, version: str) -> None:
    """The threshold for splitting (and for filling the catalogue at once) reads headers
    only, in index versions 2 and 4, whole or split."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    for n in range(300):
        (root / f"f{n:03d}.md").write_text(f"{n}\n")
    git(root, "add", ".")
    git(root, "commit", "-qm", "seed")
    git(root, "update-index", "--index-version", version)
    assert gitindex.index_size(root / ".git") == 300
    git(root, "update-index", "--split-index")
    (root / "new.md").write_text("added\n")
    git(root, "add", "-A")
    assert list((root / ".git").glob("sharedindex.*"))  # really split
    assert 300 <= gitindex.index_size(root / ".git") <= 302
    assert gitindex.index_size(tmp_path / "nowhere") == 0


def test_commits_rewrite_only_the_split_part_and_git_agrees(split: Store) -> None:
    root = split.root
    assert git(root, "config", "core.splitIndex").strip() == "true"
    before = shared_parts(root)
    assert before
    for n in range(3):
        split.append(DAY, f"\n## 09:0{n}\n\nentry {n}\n", actor=BOT, tool="remember")
    split.write("memory/world/topic-07.md", "# Topic 7, revised\n", actor=BOT, tool="t")
    assert shared_parts(root) == before  # the shared part was not written again
    assert (root / ".git" / "index").stat().st_size < min(
        (root / ".git" / name).stat().st_size for name in before)
    assert git(root, "status", "--porcelain") == ""
    assert git(root, "diff", "--cached", "--name-only") == ""
    # libgit2 reads commits and diffs on this repository without touching the index
    detail = split.commit(split.log(limit=1)[0].sha)
    assert [f.path for f in detail.files] == ["memory/world/topic-07.md"]
    assert "entry 2" in split.read(DAY)
    assert len(split.log(DAY, limit=10)) == 4


def test_a_persons_commit_keeps_what_agents_wrote(split: Store) -> None:
    """The index follows each commit tick, so a person who stages one file and commits does
    not commit the index's old versions of the agents' files (reverting them)."""
    root = split.root
    split.append(DAY, "\n## 10:00\n\nfrom the agent\n", actor=BOT, tool="remember")
    (root / "memory/world/by-hand.md").write_text("# By hand\n")
    git(root, "add", "memory/world/by-hand.md")
    git(root, "commit", "-qm", "by hand")
    assert "from the agent" in git(root, "show", f"HEAD:{DAY}")
    assert git(root, "status", "--porcelain") == ""
    assert split.read("memory/world/by-hand.md") == "# By hand\n"


def test_a_repository_that_keeps_its_index_whole_is_left_so(monkeypatch: pytest.MonkeyPatch,
                                                            tmp_path: Path) -> None:
    monkeypatch.setattr(housekeeping, "SPLIT_INDEX_FROM", 1)
    root = tmp_path / "ws"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "core.splitIndex", "false")
    store = Store(root)
    store.write(DAY, "# 2026-11-20\n", actor=BOT, tool="remember")
    store.git.split_index()
    store.append(DAY, "\n## 09:00\n\nhi\n", actor=BOT, tool="remember")
    assert git(root, "config", "core.splitIndex").strip() == "false"
    assert shared_parts(root) == {}
    assert git(root, "status", "--porcelain") == ""
    store.close()


def test_a_locked_split_index_is_refreshed_by_the_next_flush(split: Store) -> None:
    root = split.root
    lock = root / ".git" / "index.lock"
    lock.write_bytes(b"")
    split.append(DAY, "\n## 11:00\n\nwhile locked\n", actor=BOT, tool="remember")
    assert "while locked" in git(root, "show", f"HEAD:{DAY}")
    lock.unlink()
    split.flush()
    assert git(root, "status", "--porcelain") == ""


def test_an_entry_that_lands_while_a_tick_commits_waits_for_the_next(tmp_path: Path) -> None:
    """An agent appends while a tick commits the entries before: the index holds the
    committed version (git writes no blob of the newer bytes, which no commit would ever
    hold), status shows the entry waiting, a person's commit meanwhile takes none of it,
    and the next tick commits it as the agent's."""
    store = Store(tmp_path / "ws", commit_delay=60)
    root = store.root
    store.write(DAY, "# 2026-11-20\n", actor=BOT, tool="remember")
    store.append(DAY, "\n## 09:00\n\nfirst\n", actor=BOT, tool="remember")
    move = store.git._move_branch

    def move_then_append(old: str | None, new: str) -> None:
        move(old, new)
        if "second" not in store.read(DAY):
            store.append(DAY, "\n## 09:01\n\nsecond\n", actor=BOT, tool="remember")

    store.git._move_branch = move_then_append  # type: ignore[method-assign]
    store.flush()
    assert "first" in git(root, "show", f"HEAD:{DAY}")
    assert "second" not in git(root, "show", f"HEAD:{DAY}")
    assert git(root, "diff", "--cached", "--name-only") == ""
    assert git(root, "status", "--porcelain") == f" M {DAY}\n"
    assert "unreachable blob" not in git(root, "fsck", "--unreachable", "--no-reflogs")
    assert set(as_git_lists(root)) == {e.path for e in walk.walk(root)}

    (root / "by-hand.md").write_text("# By hand\n")
    git(root, "add", "by-hand.md")
    git(root, "commit", "-qm", "by hand")
    assert git(root, "show", "--name-only", "--format=", "HEAD") == "by-hand.md\n"
    assert "second" not in git(root, "show", f"HEAD:{DAY}")

    store.flush()
    assert "second" in git(root, "show", f"HEAD:{DAY}")
    assert git(root, "log", "-1", "--format=%an", "--", DAY).strip() == BOT.name
    assert git(root, "status", "--porcelain") == ""
    assert "unreachable blob" not in git(root, "fsck", "--unreachable", "--no-reflogs")
    store.close()


def test_entries_a_locked_index_missed_are_staged_as_committed(split: Store) -> None:
    """The next flush refreshes what a locked index missed at the version HEAD has: a line
    typed into the log meanwhile stays an outside change (for the pending page to commit
    under its owner), not something staged for a person's next `git commit`."""
    root = split.root
    lock = root / ".git" / "index.lock"
    lock.write_bytes(b"")
    split.append(DAY, "\n## 11:00\n\nwhile locked\n", actor=BOT, tool="remember")
    lock.unlink()
    with open(root / DAY, "a", encoding="utf-8") as fh:
        fh.write("typed by hand\n")
    split.flush()
    assert git(root, "diff", "--cached", "--name-only") == ""
    assert git(root, "status", "--porcelain") == f" M {DAY}\n"
    assert [e.path for e in split.pending()] == [DAY]


def test_a_torn_or_odd_note_of_missed_entries_never_stops_commits(split: Store) -> None:
    """The note a locked index leaves is read back line by line: a torn line, a number, a
    list or a name with a NUL in it is skipped, and the entries it names are refreshed."""
    root = split.root
    lock = root / ".git" / "index.lock"
    lock.write_bytes(b"")
    split.append(DAY, "\n## 11:00\n\nwhile locked\n", actor=BOT, tool="remember")
    lock.unlink()
    with open(split.git.index_stale, "a", encoding="utf-8") as fh:
        fh.write('7\n["a"]\n"memory/world/x\\u0000y.md"\n"memory/wor')
    split.append(DAY, "\n## 11:01\n\nafter\n", actor=BOT, tool="remember")
    assert "after" in git(root, "show", f"HEAD:{DAY}")
    assert git(root, "status", "--porcelain") == ""
    assert not split.git.index_stale.exists()


def test_a_refresh_a_locked_index_missed_is_retried_with_nothing_more_written(
        split: Store) -> None:
    """The last write's index refresh met a locked index, and no agent writes again: the
    next tick (or a page making history current) still refreshes it, so `git status` does
    not go on showing committed entries as changes for a person's `git commit` to revert."""
    root = split.root
    lock = root / ".git" / "index.lock"
    lock.write_bytes(b"")
    split.append(DAY, "\n## 11:00\n\nthe last entry\n", actor=BOT, tool="remember")
    lock.unlink()
    assert git(root, "diff", "--cached", "--name-only") == f"{DAY}\n"  # stale meanwhile
    assert split.git.has_uncommitted()  # what makes the next tick flush
    split.sync()
    assert git(root, "status", "--porcelain") == ""
    assert not split.git.has_uncommitted()
