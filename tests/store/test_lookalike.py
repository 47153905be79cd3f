"""A new name that differs from an existing one only in letter case or Unicode form (one
file on macOS and Windows) is refused with a 400 naming the existing file; writing to the
exact existing name stays allowed."""

from __future__ import annotations

import os
import unicodedata

import pytest

from memoryui.store import Actor, InvalidName, Store, lookalike
from memoryui.store.lookalike import existing_lookalike
from memoryui.store.revert import revert

NOTES = "agents/ops-bot/memory/notes"
BOT = Actor.agent("ops-bot")
NFC = unicodedata.normalize("NFC", "café")
NFD = unicodedata.normalize("NFD", "café")


def test_case_and_unicode_form_lookalikes_are_refused_naming_the_existing_file(
        store: Store) -> None:
    store.write(f"{NOTES}/sec.md", "one\n", actor=BOT, tool="write")
    store.write(f"{NOTES}/{NFC}.md", "two\n", actor=BOT, tool="write")
    for new, existing in [("Sec.md", "sec.md"), ("SEC.md", "sec.md"),
                          (f"{NFD}.md", f"{NFC}.md"), ("CAFÉ.md", f"{NFC}.md")]:
        with pytest.raises(InvalidName, match=f"looks like the existing {NOTES}/{existing}"):
            store.write(f"{NOTES}/{new}", "clash\n", actor=BOT, tool="write")
        assert not (store.root / NOTES / new).exists()
    # the exact names stay writable, and a name that only shares a prefix is new
    store.write(f"{NOTES}/sec.md", "one, edited\n", actor=BOT, tool="write")
    store.write(f"{NOTES}/{NFC}.md", "two, edited\n", actor=BOT, tool="write")
    store.write(f"{NOTES}/sec-2.md", "three\n", actor=BOT, tool="write")
    assert sorted(store.list_files(NOTES)) == [f"{NOTES}/{NFC}.md", f"{NOTES}/sec-2.md",
                                               f"{NOTES}/sec.md"]


def test_a_lookalike_folder_on_the_way_is_refused(store: Store) -> None:
    store.write(f"{NOTES}/a.md", "a\n", actor=BOT, tool="write")
    with pytest.raises(InvalidName, match="looks like the existing agents/ops-bot"):
        store.write("agents/Ops-Bot/memory/MEMORY.md", "x\n", actor=BOT, tool="write")
    assert sorted(p.name for p in (store.root / "agents").iterdir()) == ["ops-bot"]


def test_renames_are_checked_but_a_name_may_change_its_own_case(store: Store) -> None:
    store.write(f"{NOTES}/a.md", "a\n", actor=BOT, tool="write")
    store.write(f"{NOTES}/b.md", "b\n", actor=BOT, tool="write")
    with pytest.raises(InvalidName, match=f"looks like the existing {NOTES}/a.md"):
        store.rename(f"{NOTES}/b.md", f"{NOTES}/A.md", actor=BOT, tool="rename")
    store.rename(f"{NOTES}/a.md", f"{NOTES}/A.md", actor=BOT, tool="rename")
    assert sorted(store.list_files(NOTES)) == [f"{NOTES}/A.md", f"{NOTES}/b.md"]
    store.write("agents/ops-bot/memory/other/x.md", "x\n", actor=BOT, tool="write")
    with pytest.raises(InvalidName, match="looks like the existing"):
        store.rename_tree("agents/ops-bot/memory/other", "agents/ops-bot/memory/NOTES",
                          actor=BOT, tool="rename")
    store.rename_tree(NOTES, "agents/ops-bot/memory/Notes", actor=BOT, tool="rename")
    assert store.read("agents/ops-bot/memory/Notes/b.md") == "b\n"


def test_a_revert_does_not_bring_back_a_name_that_now_has_a_lookalike(store: Store) -> None:
    store.write(f"{NOTES}/runbook.md", "restart nginx\n", actor=BOT, tool="write")
    gone = store.delete(f"{NOTES}/runbook.md", actor=BOT, tool="delete").commit
    store.write(f"{NOTES}/Runbook.md", "restart nginx, then check\n", actor=BOT, tool="write")
    with pytest.raises(InvalidName, match=f"looks like the existing {NOTES}/Runbook.md"):
        revert(store, gone, actor=Actor.user("alice"))
    assert store.list_files(NOTES) == [f"{NOTES}/Runbook.md"]


def test_existing_lookalike_ignores_hidden_names_and_missing_folders(store: Store) -> None:
    store.write(f"{NOTES}/a.md", "a\n", actor=BOT, tool="write")
    assert existing_lookalike(store.root, "nowhere/at/all.md") is None
    assert existing_lookalike(store.root, f"{NOTES}/a.md") is None  # the name itself
    assert existing_lookalike(store.root, f"{NOTES}/A.md") == f"{NOTES}/a.md"
    assert existing_lookalike(store.root, ".GIT/config") is None


def test_a_folder_another_writer_makes_meanwhile_is_not_a_lookalike_of_itself(
        store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two agents' first writes into a new folder at once: the folder the other one makes
    between this check's look for the name and its listing of the parent is the very name
    (it was refused as its own look-alike, a 400 for an ordinary write)."""
    store.write(f"{NOTES}/a.md", "a\n", actor=BOT, tool="write")
    made = store.root / "agents" / "zulu"
    real = os.path.lexists

    def lexists(path: str) -> bool:
        if path == str(made) and not made.exists():
            made.mkdir()  # the other writer, just after this look
            return False
        return real(path)

    monkeypatch.setattr(lookalike.os.path, "lexists", lexists)
    assert existing_lookalike(store.root, "agents/zulu/memory/notes/b.md") is None

