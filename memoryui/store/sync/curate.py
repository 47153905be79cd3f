"""What a curator does with sync: read the state, resolve conflicts, publish, discard.

Publishing (both push modes) builds ONE commit on top of the remote tip holding the chosen
files' local versions, pushes it (never forced) and merges it back into local history, so
the remote gets exactly what was chosen and both histories stay connected. Discarding writes
the remote tip's version as a normal commit by the curator. Resolving commits the curator's
text with a `Resolves-Sync-Conflict` trailer and reopens publishing.
"""

from __future__ import annotations

import time

import pygit2

from ..actors import Actor
from ..gitcli import run_git
from ..gitobjects import ZERO
from ..records import apply_changes
from ..workspace import DELETE
from .config import ConflictChanged, ConflictOpen, NoSuchConflict, SyncError
from .merging import Item, flat_changes, item_at
from .model import FileState, RoundResult, SyncStatus
from .rounds import Rounds
from .state import State
from .transport import TransportError

MAX_PUBLISH_ATTEMPTS = 3


def _tree(syncer: Rounds, sha: str | None) -> pygit2.Tree | None:
    return syncer.git.repo[sha].peel(pygit2.Tree) if sha else None


def _blob_text(syncer: Rounds, sha: str | None) -> str | None:
    if sha is None:
        return None
    return syncer.git.repo[sha].peel(pygit2.Blob).data.decode("utf-8", "replace")


def _differences(syncer: Rounds, head: str | None, tip: str | None) -> dict[str, Item | None]:
    """path -> local (blob, mode), None where only the remote has it: what differs."""
    head_tree, tip_tree = _tree(syncer, head), _tree(syncer, tip)
    if head_tree is None:
        return {p: None for p in _all_paths(tip_tree)} if tip_tree is not None else {}
    return flat_changes(syncer.git.repo, tip_tree, head_tree)


def _all_paths(tree: pygit2.Tree | None, prefix: str = "") -> list[str]:
    out: list[str] = []
    if tree is None:
        return out
    for entry in tree:
        path = f"{prefix}{entry.name}"
        if isinstance(entry, pygit2.Tree):
            out += _all_paths(entry, path + "/")
        else:
            out.append(path)
    return out


# -- reading ------------------------------------------------------------------------------
def status(syncer: Rounds) -> SyncStatus:
    """The badge's facts: one state-file read and an ahead/behind count, cached until HEAD,
    the remote tip or the state file change (every page shows the badge)."""
    head, tip = syncer.store.head(), syncer.tracking_tip()
    key = (head, tip, syncer.states.stamp())
    cached = syncer.status_cache
    if cached is not None and cached[0] == key:
        return cached[1]
    result = _status(syncer, head, tip)
    syncer.status_cache = (key, result)
    return result


def _status(syncer: Rounds, head: str | None, tip: str | None) -> SyncStatus:
    state = syncer.states.read()
    cfg = syncer.config
    repo = syncer.git.repo
    ahead = behind = 0
    if head and tip:
        ahead, behind = repo.ahead_behind(head, tip)
    elif head:
        ahead = int(run_git(syncer.root, "rev-list", "--count", head, check=False) or 0)
    unpublished = len(_differences(syncer, head, tip)) if cfg.push == "manual" else 0
    conflicts = sorted(state.conflicts.values(), key=lambda c: c.path)
    if state.last_error:
        label = "failing"
    elif conflicts:
        label = "conflict"
    elif ahead and behind:
        label = "diverged"
    elif behind:
        label = "behind"
    elif (cfg.push == "manual" and unpublished) or (cfg.push == "auto" and ahead):
        label = "ahead"
    else:
        label = "synced"
    return SyncStatus(
        configured=True, url=cfg.display_url(), branch=syncer.branch_cached(),
        push_mode=cfg.push, state=label, last_fetch=state.last_fetch,
        last_push=state.last_push, last_round=state.last_round,
        last_error=cfg.mask(state.last_error) if state.last_error else None,
        last_error_at=state.last_error_at, ahead=ahead, behind=behind,
        unpublished=unpublished, conflicts=conflicts, publishing_paused=bool(conflicts),
        interval=cfg.interval, refused=state.refused)


def file_states(syncer: Rounds, *, include_synced: bool = False) -> list[FileState]:
    """Each file's local version (HEAD) against the remote tip, sorted by path."""
    syncer.store.sync()
    head, tip = syncer.store.head(), syncer.tracking_tip()
    state = syncer.states.read()
    conflicts = state.conflicts
    refused = {e.path for e in state.refused}
    tip_tree = _tree(syncer, tip)
    out: dict[str, FileState] = {}
    for path, local in _differences(syncer, head, tip).items():
        if _under(path, refused):
            continue  # left out of the remote's tree: the Sync page lists it as refused
        remote = item_at(tip_tree, path)
        kind = "untracked" if remote is None else "missing" if local is None else "modified"
        out[path] = FileState(path, kind, local[0] if local else None,
                              remote[0] if remote else None)
    for path in conflicts:
        local = item_at(_tree(syncer, head), path)
        remote = item_at(tip_tree, path)
        out[path] = FileState(path, "conflict", local[0] if local else None,
                              remote[0] if remote else None)
    if include_synced:
        head_tree = _tree(syncer, head)
        for path in _all_paths(head_tree):
            if path not in out:
                blob = item_at(head_tree, path)
                sha = blob[0] if blob else None
                out[path] = FileState(path, "synced", sha, sha)
    return [out[p] for p in sorted(out)]


def _under(path: str, entries: set[str]) -> bool:
    """Whether the path is one of the entries or inside one of them."""
    if not entries:
        return False
    parts = path.split("/")
    return any("/".join(parts[:i]) in entries for i in range(1, len(parts) + 1))


def compare_texts(syncer: Rounds, path: str) -> tuple[str | None, str | None]:
    """(remote tip's text, local HEAD's text) of a file, for a diff; None where absent."""
    syncer.store.abspath(path)  # the store's name rules: a clear 400 for a bad path
    syncer.store.sync()
    remote = item_at(_tree(syncer, syncer.tracking_tip()), path)
    local = item_at(_tree(syncer, syncer.store.head()), path)
    return (_blob_text(syncer, remote[0]) if remote else None,
            _blob_text(syncer, local[0]) if local else None)


def conflict_texts(syncer: Rounds, path: str) -> tuple[str | None, str | None, str | None]:
    """(base, ours, theirs) of an open conflict; ours is the file as it is NOW on disk."""
    rec = syncer.conflict(path)
    if rec is None:
        raise NoSuchConflict(f"{path} has no open sync conflict")
    return _blob_text(syncer, rec.base), syncer.store.read(path), _blob_text(syncer, rec.theirs)


# -- resolving ----------------------------------------------------------------------------
def resolve(syncer: Rounds, path: str, text: str | None, *, actor: Actor,
            message: str | None = None, expect_theirs: str | None = None,
            expect: str | None = None) -> str:
    """Commit the curator's resolution (None deletes the file); the next round publishes."""
    store = syncer.store
    with syncer.lock:
        rec = syncer.conflict(path)
        if rec is None:
            raise NoSuchConflict(f"{path} has no open sync conflict")
        if expect_theirs and expect_theirs != rec.theirs_commit:
            raise ConflictChanged(
                f"the remote changed {path} again (now {rec.theirs_commit[:8]}); "
                "reload the merge view and merge the newest version")
        msg = message or f"sync: resolve the conflict in {path}"
        trailers = [("Resolves-Sync-Conflict", rec.theirs_commit)]
        if text is None and not store.exists(path):
            res = None
        elif text is None:
            res = store.update(path, lambda _old: DELETE, actor=actor, tool="sync-resolve",
                               message=msg, expect=expect, trailers=trailers)
        else:
            res = store.write(path, text, actor=actor, tool="sync-resolve", message=msg,
                              expect=expect, trailers=trailers)
        store.flush()
        if res is not None and res.changed:
            sha = store.commit_for(res) or ""  # (committed by the flush above)
        else:  # the curator kept the local text: record the decision anyway
            sha = syncer.git.empty_commit(actor, msg, trailers, "sync-resolve")

        def clear(s: State) -> None:
            s.conflicts.pop(path, None)
        syncer.states.update(clear)
        return sha


# -- publishing and discarding ------------------------------------------------------------
def publish(syncer: Rounds, paths: list[str] | None, *, actor: Actor,
            message: str) -> RoundResult:
    """Push the chosen files' local versions as one commit on the remote tip."""
    if paths is not None:
        for p in paths:
            syncer.store.abspath(p)
    result = RoundResult(ran=True)
    with syncer.lock:
        for attempt in range(1, MAX_PUBLISH_ATTEMPTS + 1):
            result.attempts = attempt
            tip = syncer.fetch_and_integrate(result)
            conflicts = syncer.states.read().conflicts
            blocked = sorted(set(paths or []) & set(conflicts))
            if blocked:
                raise ConflictOpen(f"{', '.join(blocked)}: resolve the sync conflict before "
                                   "publishing")
            head = syncer.store.head()
            if head is None:
                return result
            diffs = _differences(syncer, head, tip)
            chosen = [p for p in (paths if paths is not None else sorted(diffs))
                      if p in diffs and p not in conflicts]
            if not chosen:
                return result
            commit = head if tip is None else _publish_commit(
                syncer, tip, {p: diffs[p] for p in chosen}, actor, message)
            outcome = syncer.transport.push(commit, syncer.branch())
            if outcome.rejected:
                continue
            if not outcome.ok:
                raise TransportError(outcome.message)
            syncer._set_tracking(commit)
            syncer.integrate(commit, result, exclude={commit})
            result.pushed, result.published = True, chosen
            now = time.time()

            def pushed(s: State, t: float = now) -> None:
                s.last_push = t
            syncer.states.update(pushed)
            return result
        raise SyncError(f"the remote kept moving: publishing was rejected "
                        f"{MAX_PUBLISH_ATTEMPTS} times; try again")


def _publish_commit(syncer: Rounds, tip: str, changes: dict[str, Item | None], actor: Actor,
                    message: str) -> str:
    repo = syncer.git.repo
    tree = apply_changes(repo, _tree(syncer, tip), changes)
    sig = pygit2.Signature(actor.name, actor.email, int(time.time()), 0)
    subject = (message or "").strip() or f"publish {len(changes)} file(s)"
    listing = "\n".join(f"- {p}" for p in changes)
    text = (f"{subject}\n\n{listing}\n\nMemoryui-Actor: {actor.trailer}\n"
            "Memoryui-Tool: sync-publish\n")
    return str(repo.create_commit(None, sig, sig, text, tree, [pygit2.Oid(hex=tip)]))


def discard(syncer: Rounds, paths: list[str], *, actor: Actor) -> list[str]:
    """Bring files back to the remote tip's version as commits by the curator."""
    store = syncer.store
    for p in paths:
        store.abspath(p)
    changed: list[str] = []
    with syncer.lock:
        store.sync()
        tip = syncer.tracking_tip()
        tip_tree = _tree(syncer, tip)
        conflicts = syncer.states.read().conflicts
        for path in paths:
            remote = item_at(tip_tree, path)
            text = _blob_text(syncer, remote[0]) if remote else None
            if path in conflicts:
                _base, _ours, theirs = conflict_texts(syncer, path)
                resolve(syncer, path, theirs, actor=actor,
                        message=f"sync: discard the local version of {path}")
                changed.append(path)
                continue
            msg = f"sync: discard local changes to {path}"
            trailers = [("Discarded-To", tip or ZERO)]
            if text is None:
                if not store.exists(path):
                    continue
                res = store.update(path, lambda _old: DELETE, actor=actor, tool="sync-discard",
                                   message=msg, trailers=trailers)
            else:
                res = store.write(path, text, actor=actor, tool="sync-discard", message=msg,
                                  trailers=trailers)
            if res.changed:
                changed.append(path)
        store.flush()
    return changed
