"""The one walker: what every reader of the working tree sees (and never sees)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memoryui.store import InvalidName, Store, walk


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A workspace-like tree with hidden names, links to files and folders outside it."""
    root = tmp_path / "ws"
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("secret\n")
    for rel, text in {"a/x.md": "1", "a/b/y.md": "22", "a-b/z.md": "333", "top.md": "4",
                      ".cache/config": "x", "a/.hidden.md": "x", ".env": "x"}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    os.symlink(outside / "secret.md", root / "a" / "link.md")
    os.symlink(outside, root / "a" / "linked-folder")
    return root


def test_walk_lists_regular_files_only_never_hidden_or_linked(tree: Path) -> None:
    found = {e.path: e.size for e in walk.walk(tree)}
    assert found == {"a/x.md": 1, "a/b/y.md": 2, "a-b/z.md": 3, "top.md": 1}


def test_links_are_reported_when_asked_never_entered(tree: Path) -> None:
    links = sorted(e.path for e in walk.walk(tree, links=True) if e.link)
    assert links == ["a/link.md", "a/linked-folder"]
    assert not any(e.path.startswith("a/linked-folder/") for e in walk.walk(tree, links=True))


def test_folders_depth_and_prefix(tree: Path) -> None:
    two_levels = [(e.path, e.folder) for e in walk.walk(tree, "a", depth=1, folders=True)]
    assert two_levels == [("a/b", True), ("a/x.md", False)]
    everything = [e.path for e in walk.walk(tree, folders=True)]
    assert everything.index("a/b") < everything.index("a/b/y.md")
    assert walk.subfolders(tree) == ["a", "a-b"]
    assert walk.subfolders(tree, "a") == ["b"]


def test_a_prefix_through_a_link_lists_nothing(tree: Path) -> None:
    assert list(walk.walk(tree, "a/linked-folder")) == []
    assert walk.subfolders(tree, "a/linked-folder") == []
    assert walk.link_in_path(tree, "a/linked-folder/secret.md") == "a/linked-folder"
    assert walk.link_in_path(tree, "a/b/y.md") is None


def test_read_nofollow_refuses_links_anywhere_on_the_path(tree: Path) -> None:
    assert walk.read_nofollow(tree, "a/b/y.md") == b"22"
    assert walk.read_nofollow(tree, "a/missing.md") is None
    assert walk.read_nofollow(tree, "nowhere/missing.md") is None
    assert walk.read_nofollow(tree, "top.md/under-a-file.md") is None  # no such folder
    for path in ("a/link.md", "a/linked-folder/secret.md"):
        with pytest.raises(InvalidName, match="symbolic link"):
            walk.read_nofollow(tree, path)
    with pytest.raises(InvalidName, match="folder"):
        walk.read_nofollow(tree, "a/b")


def test_the_store_lists_and_reads_through_the_walker(tree: Path) -> None:
    store = Store(tree)
    try:
        assert store.list_files() == ["a-b/z.md", "a/b/y.md", "a/x.md", "top.md"]
        assert store.list_files("a") == ["a/b/y.md", "a/x.md"]
        assert set(store.tree()) == {"a-b/z.md", "a/b/y.md", "a/x.md", "top.md"}
        assert store.read_folder("a") == [("a/x.md", "1")]
        with pytest.raises(InvalidName, match="symbolic link"):
            store.read_folder("a/linked-folder")
        with pytest.raises(InvalidName, match="symbolic link"):
            store.read("a/link.md")
    finally:
        store.close()


def test_scopes_are_real_folders_with_scope_names(tmp_path: Path) -> None:
    store = Store(tmp_path / "ws")
    try:
        for name in ("ops-bot", "writer", ".hidden", "bad name"):
            (store.root / "agents" / name).mkdir(parents=True)
        os.symlink(tmp_path, store.root / "agents" / "linked")
        (store.root / "agents" / "file-not-folder").write_text("x")
        assert store.scopes() == ["ops-bot", "writer"]
    finally:
        store.close()
