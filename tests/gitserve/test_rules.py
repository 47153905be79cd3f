"""What a host token may push, on real repositories: the paths each commit changes against
all its parents, the token's scopes and grants, and the name, type and size rules."""

from __future__ import annotations

from pathlib import Path

import pygit2

from memoryui.gitserve.rules import PushRules, changed_paths, first_refusal
from memoryui.store.layout import get_layout

SIG = pygit2.Signature("host", "host@example")
LAYOUT = get_layout("duragent")
RULES = PushRules(frozenset({"alpha"}), world=True, max_bytes=100)


def _commit(repo: pygit2.Repository, files: dict[str, tuple[int, bytes] | None],
            parents: list[str], base: str | None = None) -> str:
    """A commit of `base`'s tree (or the first parent's) with `files` set or removed."""
    index = pygit2.Index()
    start = base or (parents[0] if parents else None)
    if start is not None:
        index.read_tree(repo[start].peel(pygit2.Tree))
    for path, item in files.items():
        if item is None:
            index.remove(path)
        else:
            mode, data = item
            index.add(pygit2.IndexEntry(path, repo.create_blob(data), mode))
    tree = index.write_tree(repo)
    return str(repo.create_commit(None, SIG, SIG, "c", tree, parents))


def _file(text: str) -> tuple[int, bytes]:
    return (pygit2.enums.FileMode.BLOB, text.encode())


def test_a_merge_of_the_workspace_history_counts_only_what_the_host_changed(
        tmp_path: Path) -> None:
    repo = pygit2.init_repository(str(tmp_path), bare=True)
    base = _commit(repo, {"agents/alpha/memory/MEMORY.md": _file("a")}, [])
    theirs = _commit(repo, {"agents/bravo/memory/MEMORY.md": _file("b")}, [base])  # workspace
    mine = _commit(repo, {"agents/alpha/memory/notes/n.md": _file("n")}, [base])
    merge = _commit(repo, {"agents/alpha/memory/notes/n.md": _file("n")}, [mine, theirs],
                    base=theirs)
    assert [c.path for c in changed_paths(repo, repo[merge])] == []  # identical to a parent
    assert first_refusal(repo, LAYOUT, RULES, [mine, merge]) is None
    # A commit of bravo's file by this host is refused, naming path and commit.
    bad = _commit(repo, {"agents/bravo/memory/MEMORY.md": _file("mine now")}, [merge])
    refused = first_refusal(repo, LAYOUT, RULES, [bad])
    assert refused is not None and refused.line() == \
        f"'agents/bravo/memory/MEMORY.md' in commit {bad[:12]}: scope 'bravo' is not one " \
        "this host token pushes"


def test_deletions_and_a_folder_replaced_by_a_file_are_changes(tmp_path: Path) -> None:
    repo = pygit2.init_repository(str(tmp_path), bare=True)
    base = _commit(repo, {"agents/bravo/memory/notes/x.md": _file("x"),
                          "agents/alpha/memory/MEMORY.md": _file("a")}, [])
    gone = _commit(repo, {"agents/bravo/memory/notes/x.md": None}, [base])
    assert [(c.path, c.mode) for c in changed_paths(repo, repo[gone])] == \
        [("agents/bravo/memory/notes/x.md", None)]
    refused = first_refusal(repo, LAYOUT, RULES, [gone])
    assert refused is not None and "scope 'bravo'" in refused.reason


def test_grants_links_submodules_hidden_names_and_size(tmp_path: Path) -> None:
    repo = pygit2.init_repository(str(tmp_path), bare=True)
    base = _commit(repo, {"agents/alpha/memory/MEMORY.md": _file("a")}, [])
    cases = {
        "memory/world/net.md": (_file("ok"), None),
        "skills/deploy/SKILL.md": (_file("s"), "may not push skills (create it with --skills)"),
        "directives/tone.md": (_file("d"), "may not push directives"),
        "memory/MEMORY.md": (_file("g"), "may not push global"),
        "agents/alpha/memory/notes/link.md": ((pygit2.enums.FileMode.LINK, b"/etc/passwd"),
                                              "a symbolic link"),
        "agents/alpha/.gitattributes": (_file("* filter=x"), "hidden names are reserved"),
        "agents/alpha/memory/notes/big.md": (_file("x" * 101), "a file of 101 bytes, over the "
                                             "limit of 100 bytes (MEMORYUI_MAX_BODY"),
        "notes.txt": (_file("n"), "the duragent layout has no place for this path"),
    }
    for path, (item, expected) in cases.items():
        sha = _commit(repo, {path: item}, [base])
        refused = first_refusal(repo, LAYOUT, RULES, [sha])
        if expected is None:
            assert refused is None, path
        else:
            assert refused is not None and expected in refused.reason, (path, refused)
            assert refused.path == path
    skills = PushRules(frozenset(), skills=True, directives=True)
    ok = _commit(repo, {"skills/deploy/SKILL.md": _file("s"), "skills/deploy/run.sh": _file("r"),
                        "directives/tone.md": _file("d")}, [base])
    assert first_refusal(repo, LAYOUT, skills, [ok]) is None


def test_a_gitlink_is_refused(tmp_path: Path) -> None:
    repo = pygit2.init_repository(str(tmp_path), bare=True)
    base = _commit(repo, {"agents/alpha/memory/MEMORY.md": _file("a")}, [])
    builder = repo.TreeBuilder(repo[base].peel(pygit2.Tree))
    builder.insert("sub", pygit2.Oid(hex=base), pygit2.enums.FileMode.COMMIT)
    sha = str(repo.create_commit(None, SIG, SIG, "gitlink", builder.write(), [base]))
    refused = first_refusal(repo, LAYOUT, RULES, [sha])
    assert refused is not None and refused.path == "sub" and "submodule" in refused.reason


def test_a_merge_whose_tree_is_a_parents_changes_nothing(tmp_path: Path) -> None:
    """The host's pull of its own approved change: the merge takes the workspace's tree."""
    repo = pygit2.init_repository(str(tmp_path), bare=True)
    base = _commit(repo, {"agents/alpha/memory/MEMORY.md": _file("a")}, [])
    approved = _commit(repo, {"agents/alpha/memory/MEMORY.md": _file("b")}, [base])
    mine = _commit(repo, {"agents/alpha/memory/MEMORY.md": _file("b")}, [base])
    merge = _commit(repo, {}, [mine, approved], base=approved)
    assert [c.path for c in changed_paths(repo, repo[merge])] == []
    assert first_refusal(repo, LAYOUT, RULES, [mine, merge]) is None
