"""The tree of a sync merge, decided file by file.

Rules (docs/sync.md): a file only one side changed takes that side; daily logs changed on
both sides are merged entry by entry (daily.merge_daily); any other file changed on both
sides is a three-way merge (store/merge.py); a file that cannot merge (overlapping edits,
modified on one side and deleted on the other, added differently on both, binary, a link)
keeps OUR version and becomes a sync conflict. A file whose conflict is still open keeps our
version whatever the remote does, and its record follows the remote's newest version.
The remote's tree is taken without what memoryui refuses (refuse.py): then even a remote
commit memoryui could fast-forward to gets a commit of its own, which leaves those out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pygit2

from ..gitcli import run_git
from ..gitobjects import tree_entry
from ..layout import Kind, Layout
from ..merge import merge3
from ..records import apply_changes
from .config import SyncError
from .daily import merge_daily
from .refuse import Refusal, scrub
from .state import SyncConflict

BLOB = int(pygit2.enums.FileMode.BLOB)
EXEC = int(pygit2.enums.FileMode.BLOB_EXECUTABLE)
Item = tuple[str, int]  # (blob sha, file mode)
LABELS = ("local", "common base", "remote")

UNRELATED = (
    "the workspace's history and the remote's have no commit in common, so memoryui will not "
    "merge them. Either point MEMORYUI_WORKSPACE at an empty folder to start from a clone of "
    "the remote, or push this workspace to an empty remote repository (or unset "
    "MEMORYUI_REMOTE to keep working without sync)"
)


@dataclass
class Plan:
    """How to bring `theirs` into `ours`: a fast-forward, or a commit of `tree`, a merge
    (`ours` and `theirs` its parents) or, where `ours` is an ancestor of `theirs`, the
    remote's tree less what memoryui refuses (`theirs` its parent)."""

    ours: str | None
    theirs: str
    base: str | None
    fast_forward: bool
    tree: str  # the resulting tree
    changes: dict[str, Item | None] = field(default_factory=dict)  # applied to ours
    conflicts: dict[str, SyncConflict] = field(default_factory=dict)  # new or updated
    merged: list[str] = field(default_factory=list)  # paths merged from both sides
    refused: list[Refusal] = field(default_factory=list)  # left out of the remote's tree


def flat_changes(repo: pygit2.Repository, a: pygit2.Tree | None,
                 b: pygit2.Tree) -> dict[str, Item | None]:
    """path -> (blob, mode) in `b`, or None where `b` deleted it, for every path that differs."""
    diff = a.diff_to_tree(b) if a is not None else b.diff_to_tree(swap=True)
    out: dict[str, Item | None] = {}
    for d in diff.deltas:
        status = d.status
        if status == pygit2.enums.DeltaStatus.DELETED:
            out[d.old_file.path] = None
        else:
            out[d.new_file.path] = (str(d.new_file.id), int(d.new_file.mode))
    return out


def item_at(tree: pygit2.Tree | None, path: str) -> Item | None:
    entry = tree_entry(tree, path)
    if entry is None or entry.type_str == "tree":
        return None
    return (str(entry.id), int(entry.filemode))


def _text(repo: pygit2.Repository, item: Item | None) -> str | None:
    """The file's text, None when absent; ValueError when it is not UTF-8 text."""
    if item is None:
        return None
    blob = repo[item[0]]
    if not isinstance(blob, pygit2.Blob):
        raise ValueError("not a file")
    data = blob.data
    if b"\0" in data:
        raise ValueError("binary")
    return data.decode("utf-8")


def make_plan(repo: pygit2.Repository, layout: Layout | None, ours: str | None, theirs: str,
              open_conflicts: dict[str, SyncConflict], workdir: Path, now: float,
              allow_unrelated: bool = False, base: str | None = None,
              rescan: bool = False) -> Plan:
    """The merge of `theirs` into `ours` (`layout` tells daily logs apart; None where `ours`
    is None: nothing merges then). Unrelated histories merge from an empty base only
    when allowed: two clones that both started from an empty remote (bootstrap vetted it).
    `base`, when given, is a common ancestor the caller knows (the remote commit a previous
    attempt integrated): it spares walking `ours`'s history, which grows with the backlog.
    `rescan` inspects every entry of the remote's tree, not only those that differ from
    `ours` (a clone made before memoryui refused entries may hold some: they go now)."""
    ours_tree = repo[ours].peel(pygit2.Tree) if ours else None
    clean, refused = scrub(repo, repo[theirs].peel(pygit2.Tree), None if rescan else ours_tree)
    theirs_tree = repo[clean].peel(pygit2.Tree)
    if ours is None or ours in (theirs, base) or \
            (base is None and repo.descendant_of(theirs, ours)):
        return Plan(ours, theirs, ours, not refused, clean, refused=refused)
    if base is None:
        base_oid = repo.merge_base(ours, theirs)
        if base_oid is None and not allow_unrelated:
            raise SyncError(UNRELATED)
        base = str(base_oid) if base_oid is not None else None
    base_tree = repo[base].peel(pygit2.Tree) if base else None
    assert ours_tree is not None
    plan = Plan(ours, theirs, base, False, str(ours_tree.id), refused=refused)
    mine = flat_changes(repo, base_tree, ours_tree)
    for path, t in sorted(flat_changes(repo, base_tree, theirs_tree).items()):
        open_ = open_conflicts.get(path)
        if open_ is not None:
            if (t[0] if t else None) != open_.theirs:
                plan.conflicts[path] = SyncConflict(
                    path, open_.base, open_.ours, t[0] if t else None,
                    last_commit(repo, base or ours, theirs, path), open_.since)
            continue
        if path not in mine:
            plan.changes[path] = t
            continue
        o = mine[path]
        if o == t:
            continue
        b = item_at(base_tree, path)
        merged = _merge_file(repo, layout, path, b, o, t, workdir)
        if merged is None:
            plan.conflicts[path] = SyncConflict(
                path, b[0] if b else None, o[0] if o else None, t[0] if t else None,
                last_commit(repo, base or ours, theirs, path), now)
        else:
            plan.changes[path] = merged
            plan.merged.append(path)
    plan.tree = str(apply_changes(repo, ours_tree, plan.changes))
    return plan


def _merge_file(repo: pygit2.Repository, layout: Layout | None, path: str, b: Item | None,
                o: Item | None, t: Item | None, workdir: Path) -> Item | None:
    """The merged (blob, mode), or None when the file cannot merge."""
    if o is None or t is None:
        return None  # modified on one side, deleted on the other
    if o[1] not in (BLOB, EXEC) or t[1] not in (BLOB, EXEC):
        return None  # links and submodules are never merged
    try:
        bt, ot, tt = _text(repo, b), _text(repo, o), _text(repo, t)
    except (ValueError, UnicodeDecodeError):
        return None
    assert ot is not None and tt is not None
    addr = layout.address(path) if layout is not None else None
    if addr is not None and addr.kind == Kind.DAILY:
        text = merge_daily(bt, ot, tt)
    else:
        result = merge3(bt or "", ot, tt, workdir, LABELS)
        if result is None or result.conflicts:
            return None
        text = result.text
    return (str(repo.create_blob(text.encode())), o[1])


def last_commit(repo: pygit2.Repository, base: str | None, theirs: str, path: str) -> str:
    """The newest remote commit that changed the file (the tip when git cannot say)."""
    out = run_git(Path(repo.workdir or repo.path), "log", "-1", "--format=%H",
                  f"{base}..{theirs}" if base else theirs, "--", f":(literal){path}",
                  check=False)
    sha = out.decode().strip()
    return sha if len(sha) == 40 else theirs
