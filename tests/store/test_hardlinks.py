"""A hard link planted in the workspace (`ln secret agents/ops-bot/memory/notes/key.md`) is
never read, listed, committed or written through: pending changes list it as refused with
the reason, `snapshot` leaves it out, and discarding it removes that name only."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

from memoryui.store import Actor, InvalidName, Store
from tests.catalogued import catalogued
from tests.store.test_symlinks import (  # noqa: F401 (fixtures)
    MEM,
    NOTES,
    SECRET,
    assert_never_in_git,
    outside,
    seeded,
)

OTHER_MEM = "agents/dev-bot/memory/MEMORY.md"
OTHER = "# dev-bot's memory\n\n- the staging password rotates on Fridays\n"
REASON = ("a hard link (the file has another name, maybe outside its scope or the "
          "workspace): memoryui never reads or commits it; discard it")


@pytest.fixture
def two_scopes(seeded: Store) -> Store:  # noqa: F811
    seeded.write(OTHER_MEM, OTHER, actor=Actor.agent("dev-bot"), tool="reflect")
    return seeded


def test_a_hard_link_to_a_file_outside_is_refused_never_read_nor_committed(
        seeded: Store, outside: Path) -> None:  # noqa: F811
    key = f"{NOTES}/key.md"
    os.link(outside / "secret.md", seeded.root / key)
    (seeded.root / NOTES / "ok.md").write_text("written natively\n")

    entries = {e.path: e for e in seeded.pending()}
    assert set(entries) == {key, f"{NOTES}/ok.md"}
    assert entries[key].refused == REASON
    assert entries[f"{NOTES}/ok.md"].refused is None

    with pytest.raises(InvalidName, match="hard link"):
        seeded.read(key)
    with pytest.raises(InvalidName, match="hard link"):
        seeded.pending_versions(key)  # no diff is read through it either
    assert key not in seeded.list_files(NOTES)
    assert key not in catalogued(seeded)
    assert [p for p, _ in seeded.read_folder(NOTES)] == [f"{NOTES}/a.md", f"{NOTES}/ok.md"]

    done = seeded.commit_pending()
    assert [e.path for e in done.refused] == [key]
    assert [f.path for f in seeded.commit(done[0]).files] == [f"{NOTES}/ok.md"]
    again = seeded.commit_pending([key])  # asked for by name: still refused
    assert list(again) == [] and [e.path for e in again.refused] == [key]
    assert_never_in_git(seeded.root)

    assert seeded.discard_pending([key]) == [key]
    assert not os.path.lexists(seeded.root / key)
    assert (outside / "secret.md").read_text() == SECRET  # the target is untouched
    assert seeded.pending() == []


def test_a_hard_link_to_another_scopes_memory_is_refused_by_both_names(
        two_scopes: Store) -> None:
    alias = f"{NOTES}/theirs.md"
    os.link(two_scopes.root / OTHER_MEM, two_scopes.root / alias)

    [entry] = two_scopes.pending()
    assert (entry.path, entry.refused) == (alias, REASON)
    for path in (alias, OTHER_MEM):  # neither name is read while they share the file
        with pytest.raises(InvalidName, match="hard link"):
            two_scopes.read(path)
    assert list(two_scopes.commit_pending()) == []
    assert two_scopes.file_at(alias, "HEAD") is None

    assert two_scopes.discard_pending([alias]) == [alias]
    assert not os.path.lexists(two_scopes.root / alias)
    assert two_scopes.read(OTHER_MEM) == OTHER  # the other scope's file is whole again


def test_a_write_over_a_hard_link_is_refused_and_never_reaches_the_target(
        seeded: Store, outside: Path) -> None:  # noqa: F811
    path = seeded.root / NOTES / "a.md"
    path.unlink()
    os.link(outside / "secret.md", path)
    bot = Actor.agent("ops-bot")
    with pytest.raises(InvalidName, match="hard link"):
        seeded.write(f"{NOTES}/a.md", "overwritten\n", actor=bot, tool="write")
    with pytest.raises(InvalidName, match="hard link"):
        seeded.append(f"{NOTES}/a.md", "- appended\n", actor=bot, tool="write")
    with pytest.raises(InvalidName, match="hard link"):
        seeded.rename(f"{NOTES}/a.md", f"{NOTES}/b.md", actor=bot, tool="write")
    assert (outside / "secret.md").read_text() == SECRET
    assert seeded.file_at(f"{NOTES}/a.md", "HEAD") == "note a\n"
    assert_never_in_git(seeded.root)

    seeded.discard_pending([f"{NOTES}/a.md"])  # HEAD's version comes back, on its own
    assert os.stat(path).st_nlink == 1 and path.read_text() == "note a\n"
    assert (outside / "secret.md").read_text() == SECRET


def test_snapshot_command_reports_the_hard_link_and_commits_the_rest(
        workspace: Store, outside: Path) -> None:  # noqa: F811
    from django.core.management import call_command

    workspace.write(MEM, "# Memory\n", actor=Actor.agent("ops-bot"), tool="reflect")
    (workspace.root / NOTES).mkdir(parents=True)
    os.link(outside / "secret.md", workspace.root / NOTES / "key.md")
    (workspace.root / MEM).write_text("# Memory\n\n- edited natively\n")

    out, err = io.StringIO(), io.StringIO()
    call_command("snapshot", stdout=out, stderr=err)
    assert "committed 1 file(s) in 1 commit(s)" in out.getvalue()
    assert f"{NOTES}/key.md" in err.getvalue() and "hard link" in err.getvalue()
    assert workspace.file_at(MEM, "HEAD") == "# Memory\n\n- edited natively\n"
    assert_never_in_git(workspace.root)
