"""What every editor in the UI shares: who is writing, the text as submitted, the live
preview, and the conflict view when someone else saved first.

Browse's editor, review's promotion editor and sync's conflict view all build their
contexts here, so a preview or a conflict looks and behaves the same everywhere.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from django.http import HttpRequest

from memoryui.store import ABSENT, Actor, Conflict, Kind, Store, StoreError, version_of
from memoryui.store.merge import find_base, merge3
from memoryui.store.room import disk_is_full
from memoryui.web import hierarchy

from .conflicts import Names, conflict_sides, preview_html

EDITOR_NAMES = Names("your text", "the version you started from", "the current file", "conflict")

log = logging.getLogger("memoryui.web")

def actor_of(request: HttpRequest) -> Actor:
    """The one author identity of the signed-in person, for every commit they cause.

    `Actor.user(username, email)`: the trailer is `user:<username>`; the git email is the
    account's email, or `<username>@users.memoryui` when it has none.
    """
    user = request.user
    return Actor.user(user.get_username(), getattr(user, "email", "") or None)


def normalize_text(text: str) -> str:
    """Browsers submit textareas with CRLF line ends; memory files use LF."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def commit_of(store: Store, path: str, result_commit: str | None) -> str:
    """The commit a write landed in (with a commit delay: after flushing the batch); ""
    when the commit has to wait. The write itself is made and journaled by then, so a
    commit that fails (a disk that filled up since) never turns it into a refusal: a later
    flush (the committer's tick, the next write) commits it, and the person reads
    "Saved", which is true."""
    if result_commit:
        return result_commit
    try:
        store.flush()
    except Exception as exc:  # noqa: BLE001 - the write is made; its commit is retried
        if disk_is_full(store.git.git_dir, exc):
            log.warning("%s is saved; its commit waits for room on the disk", path)
        else:
            log.exception("%s is saved; its commit failed and is retried", path)
        return ""
    last = store.log(path, limit=1, with_files=False)
    return last[0].sha if last else ""


def preview_context(store: Store, text: str, *, path: str | None = None,
                    kind: Kind | str | None = None) -> dict:
    """The `_preview.html` context: rendered text, its size against the budget of its
    kind (from `kind`, or from `path`'s address) and where an agent's view is cut."""
    if kind is None and path:
        try:
            addr = store.address_of(path)
        except StoreError:
            addr = None
        kind = addr.kind if addr else None
    kind = Kind(kind) if kind else None
    size, lines = len(text.encode()), hierarchy.count_lines(text)
    budget = store.layout.budget(kind) if kind else None
    return {
        "html": preview_html(text),
        "cut": hierarchy.agent_cut(store.layout, kind, text),
        "budget": hierarchy.budget_view(budget, size, lines) if budget else None,
        "lines": lines, "size_text": hierarchy.fmt_bytes(size),
    }


@dataclass
class ConflictView:
    """A stale save (409): what to put back in the editor, and what the page explains.

    `text` is a three-way merge of their change and the user's when git can make one
    (with markers where both touched the same lines), else the user's own text; `base` is
    the version to save against next; `ctx` goes to the conflict template as `conflict`.
    """

    text: str
    base: str
    markers: bool
    ctx: dict = field(default_factory=dict)


def conflict_context(store: Store, path: str, *, mine: str, base: str,
                     exc: Conflict) -> ConflictView:
    """Nothing was written: their commits since `base`, both diffs, and a merge to start from.

    ctx keys: deleted, sides (the shared conflict component: diffs, and the texts with
    ids conflict-base / conflict-ours / conflict-theirs), base_known, commits
    (hierarchy.Change, newest first), merged, conflicts, clean, uncommitted (their change
    is not committed yet).
    """
    current = exc.current
    base_text, newer = find_base(store, path, base)
    merged, conflicts = None, 0
    if base_text is not None and current is not None:
        result = merge3(base_text, mine, current, store.git.state_dir)
        if result is not None:
            merged, conflicts = result.text, result.conflicts
    uncommitted = current is not None and (
        not newer or version_of(store.file_at(path, newer[0].sha)) != exc.version)
    ctx = {
        "deleted": current is None,
        "sides": conflict_sides(path, base_text, mine, current, EDITOR_NAMES,
                                base_known=base_text is not None,
                                open_texts=() if merged is not None else ("ours",)),
        "base_known": base_text is not None,
        "commits": [hierarchy.Change(c.sha, c.author, c.actor, c.time, c.subject)
                    for c in newer],
        "merged": merged is not None, "conflicts": conflicts,
        "clean": merged is not None and conflicts == 0, "uncommitted": uncommitted,
    }
    return ConflictView(merged if merged is not None else mine, exc.version or ABSENT,
                        conflicts > 0, ctx)
