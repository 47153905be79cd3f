"""The one walker: what every reader of the working tree sees (and never sees)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memoryui.store import InvalidName, Store, walk
from tests.catalogued import catalogued


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


def _outcome(read, root: Path, path: str) -> object:
    try:
        found = read(root, path)
    except InvalidName as exc:
        return ("refused", str(exc))
    return None if found is None else (found[0], found[1].st_ino, found[1].st_size)


def test_one_call_reads_answer_as_component_by_component_reads(tree: Path) -> None:
    """Reads take one `openat2` call (RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH) where Linux
    has it, and fall back to opening each component; both give the same bytes, stat, None
    or refusal for every kind of path."""
    os.mkfifo(tree / "a" / "pipe.md")
    (tree / "empty.md").write_text("")
    big = "line\n" * 50_000
    (tree / "a" / "big.md").write_text(big)
    os.symlink("nowhere", tree / "a" / "dangling.md")
    cases = ["a/x.md", "a/b/y.md", "top.md", "empty.md", "a/big.md", "a/.hidden.md",
             "missing.md", "a/missing/y.md", "top.md/under.md", "a/link.md",
             "a/linked-folder/secret.md", "a/dangling.md", "a", "a/b", "a/pipe.md"]
    for path in cases:
        slow = _outcome(walk._read_by_components, tree, path)
        assert _outcome(walk.read_stat_nofollow, tree, path) == slow, path
    assert _outcome(walk.read_stat_nofollow, tree, "a/big.md")[0] == big.encode()
    assert _outcome(walk.read_stat_nofollow, tree, "a/link.md")[0] == "refused"
    assert walk.read_stat_nofollow(tree, "a/missing/y.md") is None
    if walk._openat2 is not None:  # where Linux has it, a plain file takes the one call
        assert walk._read_openat2(tree, "a/b/y.md")[0] == b"22"
        assert walk._read_openat2(tree, "a/link.md") is walk._SLOW


def test_the_store_lists_and_reads_through_the_walker(tree: Path) -> None:
    store = Store(tree)
    try:
        assert store.list_files() == ["a-b/z.md", "a/b/y.md", "a/x.md", "top.md"]
        assert store.list_files("a") == ["a/b/y.md", "a/x.md"]
        assert set(catalogued(store)) == {"a-b/z.md", "a/b/y.md", "a/x.md", "top.md"}
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
