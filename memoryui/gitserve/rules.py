"""What a host token may push: the paths each new commit changes, against its rules.

Plain Python over pygit2. A path is changed by a commit when its entry differs from the
entry in every parent (a merge of the workspace's own history changes nothing the host did
not change), and each changed path must be one the host may write (its scopes; world
topics, the global memory, skills, directives only when granted) and one memoryui can hold:
a regular file (no symbolic link, no submodule), a name the store's name rules accept (no
hidden `.git*` name, no `..`, no control character) and no larger than the size limit. The
first offending path, in commit order, refuses the whole push.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import pygit2

from memoryui.store import names
from memoryui.store.errors import InvalidName
from memoryui.store.kinds import Kind
from memoryui.store.layout import Layout
from memoryui.store.sync.refuse import BLOB, EXEC, GITLINK, LINK, TREE, child, name_refusal

SHARED_GRANTS = {Kind.WORLD: "world", Kind.GLOBAL: "global", Kind.SKILL: "skills",
                 Kind.DIRECTIVE: "directives"}


@dataclass(frozen=True)
class PushRules:
    """A host token's rules: the scopes it pushes and the shared kinds it may change."""

    scopes: frozenset[str] = frozenset()
    world: bool = False
    global_: bool = False
    skills: bool = False
    directives: bool = False
    max_bytes: int = 1024 * 1024  # the largest file a push may bring (MEMORYUI_MAX_BODY)

    def grants(self) -> set[str]:
        return {name for name, on in (("world", self.world), ("global", self.global_),
                                      ("skills", self.skills), ("directives", self.directives))
                if on}

    def as_env(self) -> str:
        """One line for the hook's environment: `scopes|grants|max_bytes`."""
        return f"{','.join(sorted(self.scopes))}|{','.join(sorted(self.grants()))}|" \
               f"{self.max_bytes}"

    @classmethod
    def from_env(cls, text: str) -> PushRules:
        scopes, grants, limit = (text.split("|") + ["", "", ""])[:3]
        given = set(filter(None, grants.split(",")))
        return cls(frozenset(filter(None, scopes.split(","))), "world" in given,
                   "global" in given, "skills" in given, "directives" in given,
                   int(limit or 0) or cls.max_bytes)


@dataclass
class Refused:
    """Why a push is refused: the first offending path and the commit that brings it."""

    path: str
    commit: str
    reason: str

    def line(self) -> str:
        where = f"{self.path!r} in commit {self.commit[:12]}" if self.path else \
            f"commit {self.commit[:12]}"
        return f"{where}: {self.reason}"


@dataclass
class Changed:
    """One path a commit changes: its new mode and object (None when deleted)."""

    path: str
    mode: int | None = None
    oid: pygit2.Oid | None = None
    bad_name: str | None = field(default=None)  # a tree entry's name no rule can hold


def changed_paths(repo: pygit2.Repository, commit: pygit2.Commit) -> Iterator[Changed]:
    """The paths `commit` changes against all its parents (a root commit: every path)."""
    parents = [p.tree for p in commit.parents]
    yield from _walk(repo, commit.tree, parents, "")


def _names(tree: pygit2.Tree | None) -> list[bytes]:
    return [e.raw_name or b"" for e in tree] if tree is not None else []


def _is_tree(obj: pygit2.Object | None) -> bool:
    return obj is not None and int(obj.filemode) == TREE


def _same(a: pygit2.Object | None, b: pygit2.Object | None) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return a.id == b.id and _mode(a) == _mode(b)


def _mode(obj: pygit2.Object) -> int:
    """An entry's mode; a commit's root tree has none (it is no entry of a tree)."""
    return TREE if obj.filemode is None else int(obj.filemode)


def _walk(repo: pygit2.Repository, tree: pygit2.Tree | None,
          parents: Sequence[pygit2.Tree | None], prefix: str) -> Iterator[Changed]:
    """Paths below `prefix` whose entry in `tree` differs from the entry in every parent;
    subtrees equal to a parent's are never opened (the cost follows what changed)."""
    if any(_same(tree, p) if tree is not None and p is not None else tree is p
           for p in parents):
        return
    raw_names = sorted(set(_names(tree)).union(*(_names(p) for p in parents)))
    for raw in raw_names:
        try:
            name = raw.decode("utf-8")
        except UnicodeDecodeError:
            yield Changed(prefix + raw.decode("utf-8", "replace"), bad_name="a name that is "
                          "not UTF-8")
            continue
        new = child(tree, name)
        olds = [child(p, name) for p in parents]
        if any(_same(new, o) for o in olds):
            continue
        path = prefix + name
        if new is not None:
            why = name_refusal(name)
            if why is not None:
                yield Changed(path, int(new.filemode), new.id, why)
                continue
        new_file = None if _is_tree(new) else new
        old_files = [None if _is_tree(o) else o for o in olds]
        if (new_file is not None or any(o is not None for o in old_files)) and \
                not any(_same(new_file, o) for o in old_files):
            yield Changed(path, int(new_file.filemode) if new_file is not None else None,
                          new_file.id if new_file is not None else None)
        new_tree = repo[new.id].peel(pygit2.Tree) if new is not None and _is_tree(new) else None
        old_trees = [repo[o.id].peel(pygit2.Tree) if o is not None and _is_tree(o) else None
                     for o in olds]
        if new_tree is not None or any(t is not None for t in old_trees):
            yield from _walk(repo, new_tree, old_trees, path + "/")


def path_refusal(layout: Layout, rules: PushRules, change: Changed,
                 size: int | None) -> str | None:
    """Why this token may not make this change, None when it may."""
    if change.bad_name is not None:
        return change.bad_name
    path = change.path
    if change.mode is not None:  # added or changed (a deletion needs only the permission)
        if change.mode == LINK:
            return "a symbolic link (memoryui never follows or creates links)"
        if change.mode == GITLINK:
            return "a submodule (memoryui never checks out or fetches submodules)"
        if change.mode not in (BLOB, EXEC):
            return f"an entry of unknown type (mode {change.mode:o})"
    try:
        names.validate_relpath(path, write=change.mode is not None)
    except InvalidName as exc:
        return str(exc)
    if change.mode is not None and size is not None and size > rules.max_bytes:
        return (f"a file of {size} bytes, over the limit of {rules.max_bytes} bytes "
                "(MEMORYUI_MAX_BODY, the largest write memoryui takes)")
    return scope_refusal(layout, rules, path)


def scope_refusal(layout: Layout, rules: PushRules, path: str) -> str | None:
    """Whether the token's scopes and grants cover `path`."""
    scope = layout.scope_of(path)
    if scope is not None:
        if scope in rules.scopes:
            return None
        return f"scope {scope!r} is not one this host token pushes"
    if layout.is_shared(path):
        addr = layout.address(path)
        kind = addr.kind if addr is not None else Kind.SKILL  # a file inside a skill's folder
        grant = SHARED_GRANTS[kind]
        if grant in rules.grants():
            return None
        return f"this host token may not push {grant} (create it with --{grant})"
    return f"the {layout.key} layout has no place for this path"


def blob_size(repo: pygit2.Repository, oid: pygit2.Oid) -> int:
    """A blob's size from its header (a large file is not inflated to be measured)."""
    return int(repo.odb.read_header(oid)[1])


def first_refusal(repo: pygit2.Repository, layout: Layout, rules: PushRules,
                  commits: Sequence[str]) -> Refused | None:
    """The first change in `commits` (oldest first) this token may not push."""
    for sha in commits:
        commit = repo[sha].peel(pygit2.Commit)
        for change in changed_paths(repo, commit):
            size = blob_size(repo, change.oid) if change.oid is not None and \
                change.mode in (BLOB, EXEC) else None
            why = path_refusal(layout, rules, change, size)
            if why is not None:
                return Refused(change.path, sha, why)
    return None
