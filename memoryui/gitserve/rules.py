"""What a host token may push: the paths each new commit changes, against its rules.

Plain Python over git's raw log and pygit2. A path is changed by a commit when its entry differs from the
entry in every parent (a merge of the workspace's own history changes nothing the host did
not change), and each changed path must be one the host may write (its scopes; world
topics, the global memory, skills, directives only when granted) and one memoryui can hold:
a regular file (no symbolic link, no submodule), a name the store's name rules accept (no
hidden `.git*` name, no `..`, no control character) and no larger than the size limit. The
first offending path, in commit order, refuses the whole push.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pygit2

from memoryui.store import names
from memoryui.store.errors import InvalidName
from memoryui.store.gitcli import run_git
from memoryui.store.kinds import Kind
from memoryui.store.layout import Layout
from memoryui.store.sync.refuse import BLOB, EXEC, GITLINK, LINK, name_refusal

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


Changes = dict[str, list[Changed]]  # each commit's changed paths, by commit id


def changes(repo: pygit2.Repository, commits: Sequence[str]) -> Changes:
    """The paths each of `commits` changes against all its parents, from git's own raw log
    (`git log -c --raw`: a merge lists only what differs from every parent; a root commit
    every path), one git process for the whole push."""
    found: Changes = {sha: [] for sha in commits}
    if not commits:
        return found
    # cwd is the repository itself: a hook's GIT_DIR, when git sets it, is relative to it;
    # gitlinks are shown whatever the configuration says (they are what a push may not bring)
    out = run_git(Path(repo.path), "log", "--stdin", "--no-walk=unsorted", "--raw", "-z",
                  "-c", "--root", "--no-renames", "--no-abbrev", "--ignore-submodules=none",
                  "--no-color", "--no-show-signature", "--format=%x00commit %H",
                  input="\n".join(commits).encode() + b"\n")
    current: list[Changed] = []
    fields = iter(out.split(b"\0"))
    for field_ in fields:
        token = field_.lstrip(b"\n")
        if token.startswith(b"commit "):
            current = found.setdefault(token[7:].decode(), [])
        elif token.startswith(b":"):
            current.append(_changed(token, next(fields, b"")))
    return found


def _changed(meta: bytes, raw_path: bytes) -> Changed:
    """One raw line: `:<modes> <ids> <status>` (one colon and mode per parent, then the
    commit's own mode and id last) and the path."""
    parents = len(meta) - len(meta.lstrip(b":"))
    parts = meta.lstrip(b":").split()
    mode, oid = int(parts[parents], 8), parts[2 * parents + 1].decode()
    try:
        path = raw_path.decode("utf-8")
    except UnicodeDecodeError:
        return Changed(raw_path.decode("utf-8", "replace"), bad_name="a name that is not UTF-8")
    if mode == 0:
        return Changed(path)
    why = next(filter(None, map(name_refusal, path.split("/"))), None)
    return Changed(path, mode, pygit2.Oid(hex=oid), why)


def changed_paths(repo: pygit2.Repository, commit: pygit2.Commit) -> list[Changed]:
    """The paths `commit` changes against all its parents (a root commit: every path)."""
    return changes(repo, [str(commit.id)])[str(commit.id)]


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
                  commits: Sequence[str], found: Changes | None = None) -> Refused | None:
    """The first change in `commits` (oldest first) this token may not push."""
    found = found if found is not None else changes(repo, commits)
    for sha in commits:
        for change in found.get(sha, []):
            size = blob_size(repo, change.oid) if change.oid is not None and \
                change.mode in (BLOB, EXEC) else None
            why = path_refusal(layout, rules, change, size)
            if why is not None:
                return Refused(change.path, sha, why)
    return None
