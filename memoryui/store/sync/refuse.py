"""What memoryui never takes from a remote, and the tree it takes instead.

A remote commit may hold entries that would make git run code, read outside the workspace
or break the clone: submodules (`.gitmodules`, gitlinks), symbolic links, a `.git` or `..`
tree entry, a `.gitattributes` that rewrites file content (filters, end-of-line and
encoding conversions, `ident`), or a name memoryui's name rules refuse (control
characters, separators, over-long names). `scrub` returns the remote's tree without them
and lists each one left out: integration takes that tree, so a refused entry is never
checked out, staged or committed here, while the remote's commit stays an ancestor (its
history is never rewritten). The merge commit names every entry left out and the Sync
page lists them with the remote commit they came from.

Only subtrees that differ from a tree already taken in (`known`) are opened, so the cost
follows what the remote changed, not the size of the workspace.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

import pygit2

from ..names import MAX_COMPONENT_BYTES

BLOB = int(pygit2.enums.FileMode.BLOB)
EXEC = int(pygit2.enums.FileMode.BLOB_EXECUTABLE)
TREE = int(pygit2.enums.FileMode.TREE)
LINK = int(pygit2.enums.FileMode.LINK)
GITLINK = int(pygit2.enums.FileMode.COMMIT)

# Attributes with which git rewrites a file's bytes between the index and the disk (or
# runs a program on them): memoryui keeps every file byte-exact.
_REWRITING = re.compile(r"^(?:filter|eol|working-tree-encoding|text|crlf)(?:=|$)|^ident$")


@dataclass(frozen=True)
class Refusal:
    """One entry of a remote tree left out, and why."""

    path: str
    reason: str
    object: str  # the id of what was refused (blob, tree, link target, submodule commit)


def name_refusal(name: str) -> str | None:
    """Why a tree entry's name is refused, None when memoryui can hold it."""
    if name in ("", ".", ".."):
        return f"a tree entry named {name!r} would reach outside its folder"
    if "/" in name or "\\" in name:
        return "a name with a path separator"
    for ch in name:
        if unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp", "Cs"):
            return "a name with control or invisible characters"
    folded = name.lower().rstrip(". ")  # how Windows and macOS file systems see it
    if folded in (".git", "git~1"):
        return "a '.git' entry would write into the clone's own repository"
    if len(name.encode("utf-8", "surrogateescape")) > MAX_COMPONENT_BYTES:
        return "a name longer than memoryui allows"
    if name.strip() != name:
        return "a name with leading or trailing spaces"
    return None


def rewriting_attributes(text: str) -> bool:
    """Whether a `.gitattributes` text sets an attribute that rewrites file content."""
    for line in text.splitlines():
        tokens = line.split()
        if not tokens or tokens[0].startswith("#"):
            continue
        if any(_REWRITING.match(t) for t in tokens[1:]):
            return True
    return False


def _entry_refusal(repo: pygit2.Repository, entry: pygit2.Object) -> str | None:
    try:
        name = (entry.raw_name or b"").decode("utf-8")  # a tree's entries all have names
    except UnicodeDecodeError:
        return "a name that is not UTF-8"
    why = name_refusal(name)
    if why is not None:
        return why
    mode = int(entry.filemode)
    if mode == LINK:
        return "a symbolic link (memoryui never follows or creates links)"
    if mode == GITLINK:
        return "a submodule (memoryui never checks out or fetches submodules)"
    if mode == TREE:
        return None
    if mode not in (BLOB, EXEC):
        return f"an entry of unknown type (mode {mode:o})"
    folded = name.lower().rstrip(". ")
    if folded in (".gitmodules", "gitmod~1"):
        return "submodule configuration (.gitmodules)"
    if folded == ".gitattributes":
        blob = repo[entry.id]
        if isinstance(blob, pygit2.Blob) \
                and rewriting_attributes(blob.data.decode("utf-8", "replace")):
            return ".gitattributes that rewrites file content (filter, text, eol, ident, " \
                   "working-tree-encoding)"
    return None


def scrub(repo: pygit2.Repository, tree: pygit2.Tree,
          known: pygit2.Tree | None = None) -> tuple[str, list[Refusal]]:
    """`tree` without what memoryui refuses (its id), and what was left out.

    `known` is a tree taken in before: a subtree identical to its counterpart there is
    kept without a look inside.
    """
    refused: list[Refusal] = []
    oid = _scrub(repo, tree, known, "", refused)
    if oid is None:
        oid = repo.TreeBuilder().write()
    return str(oid), refused


def _scrub(repo: pygit2.Repository, tree: pygit2.Tree, known: pygit2.Tree | None, prefix: str,
           refused: list[Refusal]) -> pygit2.Oid | None:
    if known is not None and known.id == tree.id:
        return tree.id
    kept: list[tuple[str, pygit2.Oid, int]] = []
    changed = False
    for entry in tree:
        name = (entry.raw_name or b"").decode("utf-8", "replace")
        mode = int(entry.filemode)
        why = _entry_refusal(repo, entry)  # first: a name with '/' must not look up a path
        if why is not None:
            refused.append(Refusal(prefix + name, why, str(entry.id)))
            changed = True
            continue
        prior = child(known, name)
        if mode == TREE:
            inner = prior if isinstance(prior, pygit2.Tree) else None
            sub = _scrub(repo, repo[entry.id].peel(pygit2.Tree), inner, f"{prefix}{name}/",
                         refused)
            if sub is None:
                changed = True
                continue
            changed = changed or sub != entry.id
            kept.append((name, sub, mode))
        else:
            kept.append((name, entry.id, mode))
    if not changed:
        return tree.id
    if not kept:
        return None
    builder = repo.TreeBuilder()
    for name, oid, mode in kept:
        builder.insert(name, oid, mode)
    return builder.write()


def child(tree: pygit2.Tree | None, name: str) -> pygit2.Tree | pygit2.Blob | None:
    if tree is None:
        return None
    try:
        return tree[name]
    except KeyError:
        return None
