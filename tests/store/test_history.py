"""Git reads: logs with paging, a file at any commit, diffs as hunks, blame, restore,
pending changes, and the cached tree of last changes."""

from __future__ import annotations

import datetime as dt
import os
import subprocess
from pathlib import Path

import pytest

from memoryui.store import Actor, Conflict, NotFound, Store
from memoryui.store.diffs import diff_texts
from tests.catalogued import catalogued

MEM = "agents/ops-bot/memory/MEMORY.md"


def ts(day: str) -> float:
    return dt.datetime.fromisoformat(day + "T12:00:00+00:00").timestamp()


@pytest.fixture
def history(store: Store) -> Store:
    bot, alice = Actor.agent("ops-bot"), Actor.user("alice")
    store.write(MEM, "# Memory\n\n- one\n", actor=bot, tool="reflect", when=ts("2026-11-01"))
    store.write(MEM, "# Memory\n\n- one\n- two\n", actor=bot, tool="reflect",
                when=ts("2026-11-05"))
    store.write(MEM, "# Memory\n\n- one (fixed)\n- two\n", actor=alice, tool="edit",
                message="Fix the first fact\n\nIt was wrong.", when=ts("2026-11-10"))
    return store


def test_log_paging_and_date_filters(history: Store) -> None:
    all_commits = history.log(path=MEM)
    assert [c.author for c in all_commits] == ["alice", "ops-bot", "ops-bot"]
    assert [c.sha for c in history.log(path=MEM, limit=1, offset=1)] == [all_commits[1].sha]
    assert [c.author for c in history.log(since="2026-11-04", until="2026-11-06")] == ["ops-bot"]
    fix = all_commits[0]
    assert fix.subject == "Fix the first fact"
    assert fix.body == "It was wrong."
    assert fix.trailers["Memoryui-Actor"] == ["user:alice"]


def test_file_at_any_commit_and_missing(history: Store) -> None:
    first = history.log(path=MEM)[-1].sha
    assert history.file_at(MEM, first) == "# Memory\n\n- one\n"
    assert history.file_at("memory/world/none.md", first) is None
    with pytest.raises(NotFound):
        history.file_at(MEM, "deadbeef" * 5)


def test_commit_diff_is_structured(history: Store) -> None:
    fix = history.log(path=MEM)[0]
    detail = history.commit(fix.sha)
    [fd] = detail.diffs
    assert fd.path == MEM and fd.additions == 1 and fd.deletions == 1
    ops = [(ln.op, ln.text) for h in fd.hunks for ln in h.lines if ln.op != " "]
    assert ops == [("-", "- one"), ("+", "- one (fixed)")]
    rows = fd.side_by_side()[0]
    changed = [r for r in rows if r[2] == "-"]
    assert changed == [(3, "- one", "-", 3, "- one (fixed)", "+")]
    assert history.commit("not-a-sha") is None
    assert history.commit("0" * 40) is None


def test_diff_between_versions(history: Store) -> None:
    commits = history.log(path=MEM)
    [fd] = history.diff(commits[-1].sha, commits[0].sha, MEM)
    assert fd.additions == 2 and fd.deletions == 1


def test_blame_attributes_lines(history: Store) -> None:
    lines = history.blame(MEM)
    assert [ln.text for ln in lines] == ["# Memory", "", "- one (fixed)", "- two"]
    assert [ln.author for ln in lines] == ["ops-bot", "ops-bot", "alice", "ops-bot"]
    assert lines[2].actor == "user:alice"


def test_restore_is_a_new_commit_with_the_old_text(history: Store) -> None:
    first = history.log(path=MEM)[-1]
    head_before = history.head()
    result = history.restore(MEM, first.sha, actor=Actor.user("bob"))
    assert history.read(MEM) == "# Memory\n\n- one\n"
    latest = history.log(path=MEM, limit=1)[0]
    assert latest.sha == result.commit and latest.parents == [head_before]
    assert latest.trailers["Restored-From"] == [first.sha]
    assert latest.author == "bob"
    assert len(history.log(path=MEM)) == 4


def test_restore_with_a_stale_base_conflicts(history: Store) -> None:
    first = history.log(path=MEM)[-1]
    with pytest.raises(Conflict):
        history.restore(MEM, first.sha, actor=Actor.user("bob"), expect="0" * 64)
    assert history.read(MEM) == "# Memory\n\n- one (fixed)\n- two\n"


def test_stale_expect_raises_conflict_with_current_text(history: Store) -> None:
    _, version = history.read_versioned(MEM)
    history.write(MEM, "changed\n", actor=Actor.agent("ops-bot"), tool="reflect")
    with pytest.raises(Conflict) as info:
        history.write(MEM, "mine\n", actor=Actor.user("alice"), tool="edit", expect=version)
    assert info.value.current == "changed\n"
    assert history.read(MEM) == "changed\n"


def test_pending_changes_commit_attributed_to_owning_scope(history: Store) -> None:
    root = history.root
    (root / MEM).write_text("edited outside\n")
    (root / "memory/world").mkdir(parents=True)
    (root / "memory/world/new.md").write_text("new\n")
    pending = {e.path: e.status for e in history.pending()}
    assert pending == {MEM: "modified", "memory/world/new.md": "added"}
    commits = history.commit_pending()
    assert len(commits) == 2
    assert history.pending() == []
    assert history.log(path=MEM, limit=1)[0].author == "ops-bot"
    assert history.log(path="memory/world/new.md", limit=1)[0].actor == "external:workspace"


def test_pending_discard_restores_head_and_removes_new_files(history: Store) -> None:
    root = history.root
    (root / MEM).write_text("oops\n")
    (root / "agents/ops-bot/memory/notes").mkdir(parents=True)
    (root / "agents/ops-bot/memory/notes/stray.md").write_text("stray\n")
    done = history.discard_pending([MEM, "agents/ops-bot/memory/notes/stray.md"])
    assert len(done) == 2
    assert history.read(MEM) == "# Memory\n\n- one (fixed)\n- two\n"
    assert not (root / "agents/ops-bot/memory/notes/stray.md").exists()
    assert history.pending() == []


def test_the_catalogue_lists_files_with_their_last_change(history: Store) -> None:
    history.write("memory/world/people.md", "# People\n", actor=Actor.user("alice"), tool="edit")
    tree = catalogued(history)
    assert set(tree) == {MEM, "memory/world/people.md"}
    info = tree[MEM]
    assert info.size == len("# Memory\n\n- one (fixed)\n- two\n")
    assert info.last["author"] == "alice" and info.last["actor"] == "user:alice"
    assert history.address_of(MEM).scope == "ops-bot"
    # It follows HEAD at each write.
    history.write(MEM, "later\n", actor=Actor.agent("ops-bot"), tool="reflect")
    assert catalogued(history)[MEM].last["author"] == "ops-bot"
    # ... and is kept across a restart (in the database).
    fresh = Store(history.root)
    assert catalogued(fresh)[MEM].last["author"] == "ops-bot"


def test_delete_and_rename_are_commits(store: Store) -> None:
    bot = Actor.agent("ops-bot")
    store.write("agents/ops-bot/memory/notes/a.md", "a\n", actor=bot, tool="t")
    store.rename("agents/ops-bot/memory/notes/a.md", "agents/ops-bot/memory/notes/b.md",
                 actor=bot, tool="t")
    assert store.read("agents/ops-bot/memory/notes/b.md") == "a\n"
    store.delete("agents/ops-bot/memory/notes/b.md", actor=bot, tool="t")
    assert not (store.root / "agents").exists(), "empty folders are pruned"
    assert len(store.log()) == 3
    with pytest.raises(NotFound):
        store.delete("agents/ops-bot/memory/notes/b.md", actor=bot, tool="t")


def test_diff_texts_marks_missing_newline() -> None:
    fd = diff_texts("a\nb", "a\nc\n", "x.md")
    ops = [(ln.op, ln.text) for ln in fd.hunks[0].lines]
    assert ("-", "b") in ops and ("+", "c") in ops
    assert any(op == "\\" for op, _ in ops)


def test_git_status_in_workspace_is_clean_after_memoryui_writes(history: Store) -> None:
    out = subprocess.run(["git", "status", "--porcelain"], cwd=Path(history.root),
                         capture_output=True, text=True).stdout
    assert out == ""


def test_commit_diffs_skip_unchanged_folders_and_say_exactly_what_git_says(tmp_path: Path,
                                                                          monkeypatch) -> None:
    """The diff read from changed blobs alone (equal subtrees skipped) gives the same files,
    hunks and patch text as libgit2's full tree diff, for every kind of commit; renames,
    modes and type changes take libgit2's own diff."""
    import os

    import pygit2

    from memoryui.store import history as githistory
    from memoryui.store import treediff

    root = tmp_path / "repo"
    root.mkdir()

    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(root), "-c", "user.name=T", "-c", "user.email=t@x",
                        *args], check=True, capture_output=True)

    def put(rel: str, data: bytes | str) -> None:
        f = root / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_bytes(data.encode() if isinstance(data, str) else data)

    def commit(msg: str) -> None:
        git("add", "-A")
        git("commit", "-q", "--allow-empty", "-m", msg)

    git("init", "-q", "-b", "main")
    put("agents/a/memory/MEMORY.md", "# A\n\n- one\n- two\n")
    put("agents/b/memory/daily/2026-01-01.md", "## 09:00\nstarted\n")
    put("memory/world/people.md", "# People\n")
    commit("first")  # the root commit: every file added
    put("agents/a/memory/MEMORY.md", "# A\n\n- one\n- 2\n")
    commit("one line")
    put("agents/b/memory/daily/2026-01-02.md", "## 10:00\nnew day\n")
    put("memory/world/people.md", "# People\n\n- Ana\n")
    put("skills/deploy/SKILL.md", "---\nname: deploy\n---\n")
    commit("adds in new folders and a change elsewhere")
    (root / "memory/world/people.md").unlink()
    put("agents/a/memory/notes/n.md", "no newline at the end")
    commit("a delete with an add: libgit2 looks for renames")
    put("agents/a/memory/blob.bin", b"\x00\x01\x02binary")
    (root / "agents/b/memory/daily/2026-01-01.md").unlink()
    commit("a binary file, and a delete")
    git("mv", "agents/a/memory/notes/n.md", "agents/a/memory/notes/m.md")
    commit("a rename")
    put("tool.sh", "#!/bin/sh\n")
    os.chmod(root / "tool.sh", 0o755)
    commit("an executable")
    (root / "skills/deploy/SKILL.md").unlink()
    (root / "skills/deploy").rmdir()
    put("skills/deploy", "now a file\n")
    commit("a folder becomes a file")
    commit("nothing changed")

    repo = pygit2.Repository(str(root))
    fast_used = []
    real_fast = treediff._fast_diff
    monkeypatch.setattr(treediff, "_fast_diff",
                        lambda *a: fast_used.append(r := real_fast(*a)) or r)
    for c in repo.walk(repo.head.target):
        parent = c.parents[0].tree if c.parents else None
        for path in (None, "agents/a", "agents/a/memory/MEMORY.md"):
            got = treediff.tree_diff(parent, c.tree, path)
            want = treediff._libgit2_diff(parent, c.tree, path, True)
            assert got[0] == want[0], c.message  # files, status, hunks, every line
            if path is None:
                assert got[1] == want[1], c.message
    assert sum(r is not None for r in fast_used) >= 12  # most commits took the quick way

    # Catching up the last-change map in process gives what `git log --name-status` says
    # for every range of these commits, or declines (None) and git answers.
    chain = [str(c.id) for c in repo.walk(repo.head.target)][::-1]  # oldest first

    def first_seen(pairs) -> dict:
        seen: dict = {}
        for p, info in pairs:
            seen.setdefault(p, info)
        return seen

    answered = 0
    for i, since in enumerate(chain):
        for head in chain[i + 1:]:
            got = githistory.recent_changes(repo, since, head)
            if got is not None:
                answered += 1
                assert first_seen(got) == first_seen(githistory.last_changes(root, since, head))
    assert answered >= 15  # ranges without the mode change and the folder-to-file commit
    git("checkout", "-q", "-b", "side", chain[-3])
    put("agents/c/memory/MEMORY.md", "# C\n")
    commit("on a side branch")
    git("checkout", "-q", "main")
    git("merge", "-q", "--no-edit", "side")
    merged = str(pygit2.Repository(str(root)).head.target)
    assert githistory.recent_changes(pygit2.Repository(str(root)), chain[-1], merged) is None


def test_many_commits_read_by_git_say_what_libgit2_reads(tmp_path) -> None:
    """The overview's few thousand commits are read in one `git cat-file --batch`: author,
    actor and subject must be those of the one-by-one read (trailers, hand commits, a
    subject of two lines), and a sha git does not have is left out."""
    from memoryui.store import history as h

    store = Store(tmp_path / "ws")
    store.write(MEM, "one\n", actor=Actor.agent("ops-bot"), tool="reflect")
    store.write("memory/world/people.md", "p\n", actor=Actor.user("alice"), tool="ui")
    (store.root / "hand.md").write_text("by hand\n")
    env = {**os.environ, "GIT_AUTHOR_NAME": "Hand Ü", "GIT_AUTHOR_EMAIL": "h@example.org",
           "GIT_COMMITTER_NAME": "Hand", "GIT_COMMITTER_EMAIL": "h@example.org"}
    subprocess.run(["git", "add", "hand.md"], cwd=store.root, check=True, env=env)
    subprocess.run(["git", "commit", "-q", "-m", "two lines\nof subject\n\nbody here"],
                   cwd=store.root, check=True, env=env)
    shas = h.log(store.root)
    wanted = [c.sha for c in shas] + ["f" * 40, "not a sha"]
    got = h.commit_summaries(store.root, wanted)
    repo = store.git.repo
    assert got == {c.sha: h.summary(repo[c.sha].author.name, repo[c.sha].message)
                   for c in shas}
    assert got[shas[0].sha] == {"author": "Hand Ü", "actor": "git:Hand Ü",
                                "subject": "two lines of subject"}
    assert {g["actor"] for g in got.values()} >= {"agent:ops-bot", "user:alice"}
    # A blame's few commits are read through libgit2; the actors are the same either way.
    few = h.actors_of(store.root, wanted, store.git.repo)
    assert few == h.actors_of(store.root, wanted) == {s: g["actor"] for s, g in got.items()}


def test_commits_reads_given_commits_in_the_order_asked(tmp_path: Path) -> None:
    """The compare page's two rows come from one git call (or libgit2, given the repo):
    each commit as `log` reads it, in the order asked, whether older first or the same one
    twice, a commit made by hand with a non-ASCII author and a multi-line message too."""
    from memoryui.store import history as h

    store = Store(tmp_path / "ws")
    store.write(MEM, "one\n", actor=Actor.agent("ops-bot"), tool="reflect")
    store.write(MEM, "two\n", actor=Actor.user("alice"), tool="edit")
    (store.root / "notes.md").write_text("by hand\n")
    env = {**os.environ, "GIT_AUTHOR_NAME": "Zoë Ångström", "GIT_AUTHOR_EMAIL": "zoe@x.test",
           "GIT_COMMITTER_NAME": "c", "GIT_COMMITTER_EMAIL": "c@x.test"}
    subprocess.run(["git", "add", "notes.md"], cwd=store.root, check=True)
    subprocess.run(["git", "commit", "-q", "-m", "By hand\n\nwith a body\n\nSigned-off-by: Z <z@x>"],
                   cwd=store.root, check=True, env=env)
    hand, new, old = h.log(store.root, with_files=False)
    for repo in (None, store.git.repo):
        got = h.commits(store.root, [old.sha, hand.sha, new.sha], repo)
        assert got == [old, hand, new]  # every field: ids, parents, author, time, message
        assert got[1].author == "Zoë Ångström" and got[1].trailers["Signed-off-by"]
        assert [c.sha for c in h.commits(store.root, [new.sha, new.sha], repo)] == [new.sha]
        assert h.commits(store.root, ["0" * 40], repo) == []
        assert h.commits(store.root, [], repo) == []
