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
from memoryui.store.sync.refuse import BLOB, EXEC, GITLINK, LINK, TREE, name_refusal

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


Entries = dict[bytes, tuple[int, bytes]]  # a tree's raw name -> (mode, raw object id)
MAX_CACHED_TREES = 4096  # trees a push's check keeps parsed (consecutive commits share most)


class Trees:
    """Trees read straight from their raw objects, kept for the push: every commit of a
    push shares most subtrees with its parent, so each is parsed once, and no pygit2
    object or mode enum is made per entry (what made the check grow with folder sizes)."""

    def __init__(self, repo: pygit2.Repository) -> None:
        self.repo = repo
        self._parsed: dict[bytes, Entries] = {}

    def entries(self, oid: bytes | None) -> Entries:
        if oid is None:
            return {}
        found = self._parsed.get(oid)
        if found is None:
            if len(self._parsed) >= MAX_CACHED_TREES:
                self._parsed.clear()
            found = self._parsed[oid] = _parse(self.repo.odb.read(pygit2.Oid(raw=oid))[1],
                                               len(oid))
        return found


def _parse(data: bytes, size: int) -> Entries:
    """A raw tree object: `<octal mode> <name>NUL<id>` entries."""
    out: Entries = {}
    i, end = 0, len(data)
    while i < end:
        space = data.index(b" ", i)
        nul = data.index(b"\0", space)
        out[data[space + 1:nul]] = (int(data[i:space], 8), data[nul + 1:nul + 1 + size])
        i = nul + 1 + size
    return out


def changed_paths(repo: pygit2.Repository, commit: pygit2.Commit,
                  trees: Trees | None = None) -> Iterator[Changed]:
    """The paths `commit` changes against all its parents (a root commit: every path)."""
    trees = trees or Trees(repo)
    yield from _walk(trees, commit.tree_id.raw, [p.tree_id.raw for p in commit.parents], "")


def _walk(trees: Trees, tree: bytes | None, parents: Sequence[bytes | None],
          prefix: str) -> Iterator[Changed]:
    """Paths below `prefix` whose entry in `tree` differs from the entry in every parent;
    subtrees equal to a parent's are never opened (the cost follows what changed)."""
    if any(tree == p for p in parents):
        return
    mine, theirs = trees.entries(tree), [trees.entries(p) for p in parents]
    # a name can only be changed where it differs from the first parent (set operations
    # on the entries: a large folder with one new file costs one comparison in C)
    differ = {k for k, _v in mine.items() ^ theirs[0].items()} if theirs else set(mine)
    for raw in sorted(differ):
        new = mine.get(raw)
        olds = [t.get(raw) for t in theirs]
        if any(new == o for o in olds):
            continue
        try:
            name = raw.decode("utf-8")
        except UnicodeDecodeError:
            yield Changed(prefix + raw.decode("utf-8", "replace"), bad_name="a name that is "
                          "not UTF-8")
            continue
        path = prefix + name
        if new is not None:
            why = name_refusal(name)
            if why is not None:
                yield Changed(path, new[0], pygit2.Oid(raw=new[1]), why)
                continue
        new_file = None if new is None or new[0] == TREE else new
        old_files = [None if o is None or o[0] == TREE else o for o in olds]
        if (new_file is not None or any(o is not None for o in old_files)) and \
                not any(new_file == o for o in old_files):
            yield Changed(path, new_file[0] if new_file is not None else None,
                          pygit2.Oid(raw=new_file[1]) if new_file is not None else None)
        new_tree = new[1] if new is not None and new[0] == TREE else None
        old_trees = [o[1] if o is not None and o[0] == TREE else None for o in olds]
        if new_tree is not None or any(t is not None for t in old_trees):
            yield from _walk(trees, new_tree, old_trees, path + "/")


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
                  commits: Sequence[str], trees: Trees | None = None) -> Refused | None:
    """The first change in `commits` (oldest first) this token may not push."""
    trees = trees or Trees(repo)
    for sha in commits:
        commit = repo[sha].peel(pygit2.Commit)
        for change in changed_paths(repo, commit, trees):
            size = blob_size(repo, change.oid) if change.oid is not None and \
                change.mode in (BLOB, EXEC) else None
            why = path_refusal(layout, rules, change, size)
            if why is not None:
                return Refused(change.path, sha, why)
    return None
