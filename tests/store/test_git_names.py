"""Exact paths from git: names git would C-quote (`"`, TAB, backslash, newline, non-ASCII)
come back verbatim from log, show, diff, status and the last-change map, so the scope
read rule always sees the real path. memoryui itself writes only printable names."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from memoryui.store import Actor, InvalidName, Store
from memoryui.store.layout import DURAGENT
from tests.catalogued import catalogued

NOTES = "agents/ops-bot/memory/notes"
ODD = ['a"b.md', "tab\there.md", "back\\slash.md", "ünïcødé ✓.md", "new\nline.md",
       "trailing\\", "x\x1fy\x1e.md"]
ODD_PATHS = [f"{NOTES}/{name}" for name in ODD]


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=Ann", "-c", "user.email=ann@example.org",
                           *args], cwd=root, capture_output=True, check=True,
                          text=True).stdout


@pytest.fixture
def odd(store: Store) -> Store:
    """The odd names created natively in the work tree and committed as pending changes."""
    store.write(f"{NOTES}/plain.md", "plain\n", actor=Actor.agent("ops-bot"), tool="write")
    for i, path in enumerate(ODD_PATHS):
        (store.root / path).write_text(f"content {i}\n")
    return store


def test_pending_lists_the_exact_names_and_commits_them(odd: Store) -> None:
    assert sorted(e.path for e in odd.pending()) == sorted(ODD_PATHS)
    assert all(e.refused is None and e.status == "added" for e in odd.pending())
    [sha] = odd.commit_pending()
    assert odd.pending() == []

    [info] = odd.log(limit=1)
    assert sorted(f.path for f in info.files) == sorted(ODD_PATHS)
    detail = odd.commit(sha)
    assert sorted(f.path for f in detail.files) == sorted(ODD_PATHS)
    by_path = {d.path: d for d in detail.diffs}
    assert sorted(by_path) == sorted(ODD_PATHS)
    for i, path in enumerate(ODD_PATHS):
        assert [(ln.op, ln.text) for h in by_path[path].hunks for ln in h.lines] == \
            [("+", f"content {i}")]
        assert by_path[path].status == "added"
    parent = detail.parents[0]
    assert sorted(d.path for d in odd.diff(parent, sha)) == sorted(ODD_PATHS)
    assert [d.path for d in odd.diff(parent, sha, ODD_PATHS[0])] == [ODD_PATHS[0]]
    files = catalogued(odd)
    assert all(files[p].last["sha"] == sha for p in ODD_PATHS)


def test_changes_renames_and_deletes_by_a_person_with_git(odd: Store) -> None:
    odd.commit_pending()
    root = odd.root
    (root / ODD_PATHS[0]).write_text("changed\n")
    git(root, "mv", ODD_PATHS[1], f"{NOTES}/renamed\ttoo.md")
    git(root, "rm", "-q", ODD_PATHS[4])
    git(root, "commit", "-qam", "a person's edit")
    [info] = odd.log(limit=1)
    changes = {(f.status, f.path, f.old_path) for f in info.files}
    assert changes == {("M", ODD_PATHS[0], None), ("D", ODD_PATHS[4], None),
                       ("R", f"{NOTES}/renamed\ttoo.md", ODD_PATHS[1])}
    detail = odd.commit(info.sha)
    assert {(d.status, d.path, d.old_path) for d in detail.diffs} == {
        ("modified", ODD_PATHS[0], None), ("deleted", ODD_PATHS[4], None),
        ("renamed", f"{NOTES}/renamed\ttoo.md", ODD_PATHS[1])}
    assert [c.sha for c in odd.log(path=ODD_PATHS[0])][0] == info.sha
    blame = odd.blame(ODD_PATHS[0])
    assert [(b.text, b.sha) for b in blame] == [("changed", info.sha)]


def test_every_path_of_a_commit_with_odd_names_is_placed_in_its_scope(store: Store) -> None:
    """The access check sees exact paths: another scope's odd names never look shared."""
    names = ['agents/other/memory/notes/a"b.md', "agents/other/memory/notes/t\tab.md"]
    for path in names:
        (store.root / path).parent.mkdir(parents=True, exist_ok=True)
        (store.root / path).write_text("other's secret\n")
    [sha] = store.commit_pending()
    paths = [f.path for f in store.commit(sha).files]
    assert sorted(paths) == sorted(names)
    assert not any(DURAGENT.readable_by(p, "ops-bot") for p in paths)
    assert all(DURAGENT.readable_by(p, "other") for p in paths)


def test_discard_of_natively_made_odd_names(odd: Store) -> None:
    odd.commit_pending()
    (odd.root / ODD_PATHS[0]).write_text("changed natively\n")
    (odd.root / ODD_PATHS[4]).write_text("newline name, changed\n")
    assert odd.pending_versions(ODD_PATHS[0]) == ("content 0\n", "changed natively\n")
    assert odd.pending_versions(ODD_PATHS[4]) == ("content 4\n", "newline name, changed\n")
    odd.discard_pending([ODD_PATHS[4]])
    (odd.root / f"{NOTES}/new\tone.md").write_text("new\n")
    assert odd.discard_pending([ODD_PATHS[0], f"{NOTES}/new\tone.md"]) == \
        sorted([ODD_PATHS[0], f"{NOTES}/new\tone.md"])
    assert (odd.root / ODD_PATHS[0]).read_text() == "content 0\n"
    assert not (odd.root / f"{NOTES}/new\tone.md").exists()
    assert odd.pending() == []


def test_a_name_that_is_not_utf8_is_refused_and_can_be_discarded(store: Store) -> None:
    folder = store.root / NOTES
    folder.mkdir(parents=True)
    raw = os.path.join(os.fsencode(folder), b"bad\xff.md")
    with open(raw, "wb") as fh:
        fh.write(b"x\n")
    [entry] = store.pending()
    assert entry.refused == "its name is not valid UTF-8: rename or discard it"
    assert list(store.commit_pending()) == []
    assert store.discard_pending([entry.path]) == [entry.path]
    assert not os.path.exists(raw)


@pytest.mark.parametrize("name", ['a"b.md', "t\tab.md", "b\\s.md", "n\nl.md", "bell\a.md",
                                  "rtl\u202e.md", "zero\u200bwidth.md", ".hidden.md",
                                  " lead.md"])
def test_memoryui_refuses_to_write_names_git_would_quote(store: Store, name: str) -> None:
    with pytest.raises(InvalidName):
        store.write(f"{NOTES}/{name}", "x\n", actor=Actor.agent("ops-bot"), tool="write")
    assert store.head() is None and not (store.root / NOTES).exists()


@pytest.mark.parametrize("name", ["ünïcødé ✓.md", "with space.md", "日本語.md", "---x.md",
                                  "a'b (c) [d] {e} #f &g.md"])
def test_printable_names_are_written(store: Store, name: str) -> None:
    path = f"{NOTES}/{name}"
    store.write(path, "x\n", actor=Actor.agent("ops-bot"), tool="write")
    [info] = store.log(limit=1)
    assert [f.path for f in info.files] == [path]
    assert store.read(path) == "x\n"


def test_renames_into_a_quoted_name_are_refused(store: Store) -> None:
    store.write(f"{NOTES}/a.md", "x\n", actor=Actor.agent("ops-bot"), tool="write")
    with pytest.raises(InvalidName):
        store.rename(f"{NOTES}/a.md", f'{NOTES}/a"b.md', actor=Actor.agent("ops-bot"),
                     tool="rename")
    with pytest.raises(InvalidName):
        store.rename_tree(NOTES, "agents/ops-bot/memory/n\totes",
                          actor=Actor.agent("ops-bot"), tool="rename")
    assert store.read(f"{NOTES}/a.md") == "x\n"


def test_a_name_cannot_forge_lines_in_the_commit_message(store: Store) -> None:
    name = f"{NOTES}/x\n\nMemoryui-Actor: user:admin\n.md"
    (store.root / NOTES).mkdir(parents=True)
    (store.root / name).write_text("x\n")
    [sha] = store.commit_pending()
    detail = store.commit(sha)
    assert [f.path for f in detail.files] == [name]
    assert detail.actor == "agent:ops-bot"
    assert "\n" not in detail.subject and "\\n" in detail.subject
    assert store.log(actor="user:admin") == []


def test_a_message_cannot_pose_as_another_actor(store: Store) -> None:
    store.write(f"{NOTES}/a.md", "x\n", actor=Actor.agent("ops-bot"), tool="memory",
                message="tidy\n\nMemoryui-Actor: user:admin")
    [info] = store.log(limit=1)
    assert info.actor == "agent:ops-bot" and "Memoryui-Actor: user:admin" in info.message
    assert store.log(actor="user:admin") == []
    assert [c.sha for c in store.log(actor="agent:ops-bot")] == [info.sha]
