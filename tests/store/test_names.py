"""Hostile names are refused with a clear error before any file is touched."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memoryui.store import Actor, InvalidName, Kind, Store
from memoryui.store.names import sanitize_world_topic, validate_note_name, validate_scope

HOSTILE_PATHS = [
    "", ".", "..", "../x.md", "../../etc/passwd", "a/../../b.md", "a/./b.md", "a//b.md",
    "/etc/passwd", "/abs/x.md", "C:\\x.md", "C:/x.md", "a\\b.md", "..\\x.md", "a\x00b.md",
    "x\n.md", "x\r.md", "x\x1b.md", "x\u202e.md", ".git/config", ".git/hooks/pre-commit",
    "agents/.git/x.md", ".hidden.md", "agents/x/.env", "a/" + "x" * 300 + ".md",
    "y" * 1100, " leading.md", "trailing.md ", "agents/ /x.md", "dir/", "x.md/",
    "agents/../..", "memory/world/../../../x.md",
]
HOSTILE_SCOPES = ["", "..", "a/b", "a\\b", "a b", "a.b", "x" * 65, "a\x00", "ä", "-/x", "*",
                  "a:b", "%2e%2e"]
HOSTILE_NOTES = ["", "  ", ".md", "a/b", "a\\b", "a.b", "..", "../x", "x" * 300, "a\x00b",
                 "-rf"]


def snapshot(root: Path) -> set[str]:
    return {str(p) for p in root.parent.rglob("*") if ".git" not in p.parts}


@pytest.mark.parametrize("path", HOSTILE_PATHS)
def test_hostile_paths_are_refused_and_nothing_is_written(store: Store, path: str) -> None:
    before = snapshot(store.root)
    with pytest.raises(InvalidName) as info:
        store.write(path, "pwned\n", actor=Actor.agent("x"), tool="t")
    assert str(info.value)
    with pytest.raises(InvalidName):
        store.read(path)
    assert snapshot(store.root) == before
    assert store.head() is None


@pytest.mark.parametrize("scope", HOSTILE_SCOPES)
def test_hostile_scopes_are_refused(store: Store, scope: str) -> None:
    with pytest.raises(InvalidName, match="scope"):
        store.path_for(Kind.DAILY, scope, "2026-01-01")
    with pytest.raises(InvalidName):
        validate_scope(scope)


@pytest.mark.parametrize("name", HOSTILE_NOTES)
def test_hostile_note_names_are_refused(store: Store, name: str) -> None:
    with pytest.raises(InvalidName):
        store.path_for(Kind.NOTE, "ops-bot", name)
    with pytest.raises(InvalidName):
        validate_note_name(name)


@pytest.mark.parametrize("date", ["2026-13-01", "2026-02-30", "26-01-01", "2026/01/01",
                                  "../2026-01-01", "2026-01-01.md", ""])
def test_bad_dates_are_refused(store: Store, date: str) -> None:
    with pytest.raises(InvalidName, match="date"):
        store.path_for(Kind.DAILY, "ops-bot", date)


def test_count_of_hostile_names_is_meaningful() -> None:
    assert len(HOSTILE_PATHS) + len(HOSTILE_SCOPES) + len(HOSTILE_NOTES) >= 30


def test_symlink_out_of_the_workspace_is_refused(store: Store, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("secret\n")
    (store.root / "agents").mkdir()
    os.symlink(outside, store.root / "agents" / "evil")
    with pytest.raises(InvalidName, match="symbolic link"):
        store.write("agents/evil/secret.md", "overwritten\n", actor=Actor.agent("x"), tool="t")
    with pytest.raises(InvalidName, match="symbolic link"):
        store.read("agents/evil/secret.md")
    assert (outside / "secret.md").read_text() == "secret\n"


def test_symlinked_file_is_refused(store: Store, tmp_path: Path) -> None:
    target = tmp_path / "target.md"
    target.write_text("keep\n")
    os.symlink(target, store.root / "link.md")
    with pytest.raises(InvalidName):
        store.write("link.md", "x", actor=Actor.agent("x"), tool="t")
    assert target.read_text() == "keep\n"


@pytest.mark.parametrize("topic,expected", [
    ("My Topic!", "my-topic-"), ("../x", "---x"), ("Café", "café"), ("a_b-C", "a_b-c"),
    ("people", "people"),
])
def test_world_topics_are_sanitized_like_duragent(topic: str, expected: str) -> None:
    assert sanitize_world_topic(topic) == expected


def test_empty_world_topic_is_an_error_not_dot_md() -> None:
    with pytest.raises(InvalidName, match="empty"):
        sanitize_world_topic("")
