"""A symbolic link planted in the workspace is never followed: not by pending changes, not by
`manage.py snapshot`, not by the tree. Its target never reaches git, and a curator can
discard the link itself."""

from __future__ import annotations

import io
import os
import subprocess
from pathlib import Path

import pytest

from memoryui.store import Actor, InvalidName, Store
from tests.catalogued import catalogued

SECRET = "SECRET_KEY = 'server-secret-never-leak-42'\n"
MEM = "agents/ops-bot/memory/MEMORY.md"
NOTES = "agents/ops-bot/memory/notes"


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder outside the workspace holding a fake server secret."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "secret.md").write_text(SECRET)
    (folder / "a.md").write_text(SECRET)
    return folder


@pytest.fixture
def seeded(store: Store) -> Store:
    store.write(MEM, "# Memory\n", actor=Actor.agent("ops-bot"), tool="reflect")
    store.write(f"{NOTES}/a.md", "note a\n", actor=Actor.agent("ops-bot"), tool="write")
    return store


def git_objects(root: Path) -> bytes:
    """Every object in the repository, loose or packed, as git would hand it to a clone."""
    return subprocess.run(["git", "cat-file", "--batch-all-objects", "--batch"], cwd=root,
                          capture_output=True, check=True).stdout


def assert_never_in_git(root: Path) -> None:
    assert SECRET.encode() not in git_objects(root)
    index = subprocess.run(["git", "ls-files", "-s"], cwd=root, capture_output=True,
                           check=True).stdout
    assert b"120000" not in index  # no link was staged either


def test_a_link_at_a_note_path_is_refused_and_never_committed(seeded: Store,
                                                             outside: Path) -> None:
    link = f"{NOTES}/k.md"
    os.symlink(outside / "secret.md", seeded.root / link)
    (seeded.root / NOTES / "ok.md").write_text("written natively\n")

    entries = {e.path: e for e in seeded.pending()}
    assert set(entries) == {link, f"{NOTES}/ok.md"}
    assert entries[link].refused == ("a symbolic link: memoryui never follows links; "
                                     "discard it")
    assert entries[f"{NOTES}/ok.md"].refused is None

    shas = seeded.commit_pending()
    assert len(shas) == 1
    assert [e.path for e in shas.refused] == [link]
    detail = seeded.commit(shas[0])
    assert [f.path for f in detail.files] == [f"{NOTES}/ok.md"]
    assert_never_in_git(seeded.root)

    with pytest.raises(InvalidName, match="symbolic link"):
        seeded.pending_versions(link)  # no diff is ever read through it
    # Still pending and still refused; asking for it by name commits nothing.
    assert [(e.path, bool(e.refused)) for e in seeded.pending()] == [(link, True)]
    again = seeded.commit_pending([link])
    assert list(again) == [] and [e.path for e in again.refused] == [link]
    assert_never_in_git(seeded.root)

    assert seeded.discard_pending([link]) == [link]
    assert not os.path.lexists(seeded.root / link)
    assert (outside / "secret.md").read_text() == SECRET  # the target is untouched
    assert seeded.pending() == []


def test_a_link_replacing_a_committed_folder_is_refused_and_discard_brings_it_back(
        seeded: Store, outside: Path) -> None:
    notes = seeded.root / NOTES
    (notes / "a.md").unlink()
    notes.rmdir()
    os.symlink(outside, notes)  # agents/ops-bot/memory/notes -> /tmp/.../outside

    entries = {e.path: e for e in seeded.pending()}
    assert set(entries) == {NOTES, f"{NOTES}/a.md"}
    assert "symbolic link" in entries[NOTES].refused
    assert entries[f"{NOTES}/a.md"].refused.startswith(f"inside {NOTES}, a symbolic link")
    assert seeded.read_folder("agents/ops-bot/memory") == [(MEM, "# Memory\n")]

    head = seeded.head()
    done = seeded.commit_pending()
    assert list(done) == [] and len(done.refused) == 2
    assert seeded.head() == head
    assert_never_in_git(seeded.root)

    assert seeded.discard_pending([NOTES]) == [NOTES]
    assert not notes.is_symlink()
    assert (notes / "a.md").read_text() == "note a\n"  # HEAD's version is back
    assert sorted(p.name for p in outside.iterdir()) == ["a.md", "secret.md"]
    assert (outside / "a.md").read_text() == SECRET
    assert seeded.pending() == []


def test_discarding_an_item_inside_a_linked_folder_removes_the_link(seeded: Store,
                                                                    outside: Path) -> None:
    notes = seeded.root / NOTES
    (notes / "a.md").unlink()
    notes.rmdir()
    os.symlink(outside, notes)
    assert seeded.discard_pending([f"{NOTES}/a.md"]) == [f"{NOTES}/a.md"]
    assert not notes.is_symlink() and (notes / "a.md").read_text() == "note a\n"
    assert (outside / "a.md").read_text() == SECRET
    assert seeded.pending() == []


def test_a_link_to_a_file_inside_the_workspace_is_refused_too(seeded: Store) -> None:
    os.symlink(seeded.root / MEM, seeded.root / f"{NOTES}/alias.md")
    [entry] = seeded.pending()
    assert entry.refused and "symbolic link" in entry.refused
    assert list(seeded.commit_pending()) == []
    assert f"{NOTES}/alias.md" not in catalogued(seeded)


def test_a_link_over_a_committed_file_keeps_the_committed_version(seeded: Store,
                                                                   outside: Path) -> None:
    path = seeded.root / NOTES / "a.md"
    path.unlink()
    os.symlink(outside / "secret.md", path)
    [entry] = seeded.pending()
    assert (entry.path, entry.status) == (f"{NOTES}/a.md", "modified")
    assert entry.refused
    assert list(seeded.commit_pending()) == []
    assert seeded.file_at(f"{NOTES}/a.md", "HEAD") == "note a\n"
    assert_never_in_git(seeded.root)
    seeded.discard_pending([f"{NOTES}/a.md"])
    assert not path.is_symlink() and path.read_text() == "note a\n"


def test_snapshot_command_commits_the_rest_and_reports_the_link(workspace: Store,
                                                                outside: Path) -> None:
    from django.core.management import call_command

    workspace.write(MEM, "# Memory\n", actor=Actor.agent("ops-bot"), tool="reflect")
    (workspace.root / NOTES).mkdir(parents=True)
    os.symlink(outside / "secret.md", workspace.root / NOTES / "k.md")
    os.symlink(outside, workspace.root / "agents" / "ops-bot" / "memory" / "daily")
    (workspace.root / MEM).write_text("# Memory\n\n- edited natively\n")

    out, err = io.StringIO(), io.StringIO()
    call_command("snapshot", stdout=out, stderr=err)
    assert "committed 1 file(s) in 1 commit(s)" in out.getvalue()
    assert "refused 2 item(s)" in err.getvalue()
    assert f"{NOTES}/k.md" in err.getvalue() and "symbolic link" in err.getvalue()
    assert workspace.file_at(MEM, "HEAD") == "# Memory\n\n- edited natively\n"
    assert_never_in_git(workspace.root)


def test_a_nested_repository_is_listed_refused_and_left_alone(seeded: Store) -> None:
    nested = seeded.root / NOTES / "sub"
    nested.mkdir()
    subprocess.run(["git", "init", "-q", str(nested)], check=True)
    (nested / "f.md").write_text("inside a nested repository\n")
    [entry] = seeded.pending()
    assert entry.path == f"{NOTES}/sub/" and "nested repository" in entry.refused
    assert list(seeded.commit_pending()) == []
    assert seeded.discard_pending([entry.path]) == []
    assert (nested / "f.md").read_text() == "inside a nested repository\n"
