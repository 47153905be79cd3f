"""Proposals: an agent's change to one curated file, kept as a branch until a person decides.

A proposal is the ref `refs/memoryui/proposals/<scope>/<id>`: commits authored by the
proposing agent (with the usual `Memoryui-*` trailers), each changing only its one file,
starting from the workspace commit that was current when the agent first wrote it (its
base, trailer `Proposal-Base`). The same agent writing the same file again extends its open
proposal. Nothing here touches the working tree: every other reader sees the approved file.

A decision moves the ref in one transaction: approval (`approving.py`) to
`refs/memoryui/approved/...` after its merge commit, rejection to `refs/memoryui/rejected/...`
with a commit that carries the reason. No commit is ever dropped, and a ref only moves
forward, so sync pushes and fetches them without force.
"""

from __future__ import annotations

import re
import subprocess
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field

import pygit2

from . import lookalike, names, walk
from .actors import Actor
from .appending import MAX_FILE_BYTES
from .errors import Conflicting, Missing, SecretFound, StoreError, TooLarge
from .gitcli import run_git
from .gitobjects import ZERO, tree_entry
from .locks import ProcessLock
from .records import apply_changes
from .workspace import Store

OPEN_PREFIX = "refs/memoryui/proposals/"
APPROVED_PREFIX = "refs/memoryui/approved/"
REJECTED_PREFIX = "refs/memoryui/rejected/"
PREFIXES = {"open": OPEN_PREFIX, "approved": APPROVED_PREFIX, "rejected": REJECTED_PREFIX}
ID_TRAILER = "Memoryui-Proposal"
PATH_TRAILER = "Proposal-Path"
BASE_TRAILER = "Proposal-Base"
ID_RE = re.compile(r"[0-9a-f]{12}")
_TRAILER_RE = re.compile(r"^([A-Za-z-]+): (.*)$", re.M)
MAX_COMMITS = 10_000  # commits of one proposal walked at most (a runaway branch)


class ProposalNotFound(Missing, StoreError):
    """No proposal has that id (or it belongs to another scope)."""


class ProposalClosed(Conflicting, StoreError):
    """The proposal was decided already; `state` is its state now."""

    def __init__(self, message: str, state: str):
        super().__init__(message)
        self.state = state


@dataclass
class Proposal:
    """One proposal as git holds it."""

    id: str
    scope: str  # the proposing agent's scope
    path: str
    base: str | None  # the workspace commit it started from
    tip: str
    state: str  # open | approved | rejected
    proposer: Actor
    created: float
    updated: float
    commits: list[str] = field(default_factory=list)  # the agent's (and curator's), newest first

    @property
    def ref(self) -> str:
        return ref_name(self.state, self.scope, self.id)


def ref_name(state: str, scope: str, pid: str) -> str:
    return f"{PREFIXES[state]}{scope}/{pid}"


def valid_id(pid: object) -> str:
    if not isinstance(pid, str) or not ID_RE.fullmatch(pid):
        raise ProposalNotFound(f"no proposal {str(pid)[:40]!r}: ids are 12 hex digits")
    return pid


def trailers_of(message: str) -> dict[str, str]:
    """The last value of each trailer in a commit message."""
    return {m.group(1): m.group(2).strip() for m in _TRAILER_RE.finditer(message)}


def _lock(store: Store) -> ProcessLock:
    lock = store.__dict__.get("_proposals_lock")
    if lock is None:
        lock = store.__dict__["_proposals_lock"] = ProcessLock(
            store.git.state_dir / "proposals.lock")
    return lock


# -- reading -------------------------------------------------------------------------------

def _refs(store: Store, prefix: str) -> list[tuple[str, str]]:
    """(ref name, tip sha) of the refs under `prefix`."""
    repo = store.git.repo
    out = []
    for name in repo.references:
        if name.startswith(prefix):
            ref = repo.references.get(name)
            if ref is not None:
                out.append((name, str(ref.target)))
    return out


def _load(store: Store, name: str, tip: str, state: str) -> Proposal | None:
    rest = name[len(PREFIXES[state]):]
    scope, _, pid = rest.partition("/")
    if not ID_RE.fullmatch(pid):
        return None
    repo = store.git.repo
    try:
        head = repo[tip].peel(pygit2.Commit)
    except (KeyError, ValueError):
        return None
    t = trailers_of(head.message)
    path = t.get(PATH_TRAILER)
    if not path or t.get(ID_TRAILER) != pid:
        return None
    base = t.get(BASE_TRAILER) or None
    commits: list[str] = []
    first = head
    proposer = None
    c: pygit2.Commit | None = head
    while c is not None and len(commits) < MAX_COMMITS:
        if str(c.id) == base or trailers_of(c.message).get(ID_TRAILER) != pid:
            break
        commits.append(str(c.id))
        first = c
        if trailers_of(c.message).get("Memoryui-Actor", "").startswith("agent:"):
            proposer = Actor("agent", c.author.name, c.author.email)
        c = c.parents[0] if c.parents else None
    return Proposal(pid, scope, path, base, tip, state,
                    proposer or Actor.agent(scope), float(first.author.time),
                    float(head.commit_time), commits)


def get(store: Store, pid: str, scope: str | None = None) -> Proposal:
    """A proposal by id in any state (ProposalNotFound when there is none)."""
    valid_id(pid)
    if scope is not None:  # direct lookups: no listing of every ref
        names.validate_scope(scope)
        repo = store.git.repo
        for state in PREFIXES:
            ref = repo.references.get(ref_name(state, scope, pid))
            found = None if ref is None else _load(store, ref.name, str(ref.target), state)
            if found is not None:
                return found
        raise ProposalNotFound(f"no proposal {pid}")
    for state, prefix in PREFIXES.items():
        for name, tip in _refs(store, prefix):
            if name.endswith("/" + pid) and (scope is None or name == prefix + f"{scope}/{pid}"):
                found = _load(store, name, tip, state)
                if found is not None:
                    return found
    raise ProposalNotFound(f"no proposal {pid}")


def list_proposals(store: Store, state: str = "open", scope: str | None = None,
                   path: str | None = None) -> list[Proposal]:
    """Proposals in one state, oldest first (optionally one scope's, one file's)."""
    prefix = PREFIXES[state] + (f"{scope}/" if scope else "")
    out = []
    for name, tip in _refs(store, prefix):
        found = _load(store, name, tip, state)
        if found is not None and (path is None or found.path == path):
            out.append(found)
    out.sort(key=lambda p: (p.created, p.id))
    return out


def open_for(store: Store, scope: str, path: str) -> Proposal | None:
    """The agent's open proposal for a file, if it has one."""
    found = list_proposals(store, "open", scope, path)
    return found[-1] if found else None


def text_at(store: Store, sha: str | None, path: str) -> bytes | None:
    """The file's bytes at a commit (None: no such file, or no commit)."""
    if not sha:
        return None
    try:
        tree = store.git.repo[sha].peel(pygit2.Tree)
    except (KeyError, ValueError):
        return None
    obj = tree_entry(tree, path)
    return obj.data if isinstance(obj, pygit2.Blob) else None


def proposed(p: Proposal, store: Store) -> bytes | None:
    """What the proposal makes of its file (None: it deletes it)."""
    return text_at(store, p.tip, p.path)


def own_text(store: Store, agent: str, path: str) -> bytes | None:
    """What the agent sees of a file it proposed a change to: its proposal's bytes; None
    when it has no open proposal there (it sees the approved file), or its proposal deletes
    the file (see `own_version`)."""
    found = own_version(store, agent, path)
    return None if found is None else found[1]


def own_version(store: Store, agent: str, path: str) -> tuple[Proposal, bytes | None] | None:
    """(the agent's open proposal, its bytes or None for a deletion), or None."""
    p = open_for(store, agent, path)
    return None if p is None else (p, proposed(p, store))


# -- proposing -------------------------------------------------------------------------------

def _message(subject: str, actor: Actor, tool: str, extra: Iterable[tuple[str, str]],
             body: str = "") -> str:
    trailers = [("Memoryui-Actor", actor.trailer), ("Memoryui-Tool", tool), *extra]
    text = subject + "\n\n" + (body.strip() + "\n\n" if body.strip() else "")
    return text + "\n".join(f"{k}: {v}" for k, v in trailers) + "\n"


def _commit(store: Store, parent: str | None, tree: pygit2.Oid, actor: Actor,
            message: str, when: float | None = None) -> str:
    sig = pygit2.Signature(actor.name, actor.email, int(when or time.time()), 0)
    oid = store.git.repo.create_commit(None, sig, sig, message, tree,
                                       [pygit2.Oid(hex=parent)] if parent else [])
    return str(oid)


def _move(store: Store, updates: list[tuple[str, str, str]]) -> None:
    """Ref updates (name, new or ZERO to delete, old or ZERO) in one compare-and-swap."""
    lines = "".join(f"update {name} {new} {old}\n" if new != ZERO else
                    f"delete {name} {old}\n" for name, new, old in updates)
    try:
        run_git(store.root, "update-ref", "--stdin", input=lines.encode())
    except subprocess.CalledProcessError as exc:
        raise ProposalClosed("the proposal changed meanwhile; look at it again ("
                             + exc.stderr.decode(errors="replace").strip()[:200] + ")",
                             "open") from None


def _checked(store: Store, path: str, text: str, old: str | None, kind: str) -> bytes:
    lookalike.check_new(store.root, path, created=old is None)
    data = names.validate_text(text, old).encode()
    if len(data) > MAX_FILE_BYTES:
        raise TooLarge(f"{path} would be {len(data)} bytes; the limit is {MAX_FILE_BYTES} bytes")
    store.secrets.check(path, old, text, kind, SecretFound)
    return data


def propose(store: Store, *, scope: str, path: str, text: str | None, actor: Actor, tool: str,
            trailers: Iterable[tuple[str, str]] = (), message: str | None = None
            ) -> tuple[Proposal | None, bool]:
    """Make `text` (None: delete) the agent's proposed version of `path`: its open
    proposal there is extended, else a new one starts from the current commit.

    Returns (the proposal, True when it is new); (None, False) when the text is what the
    workspace holds already and no proposal is open (nothing to propose)."""
    names.validate_scope(scope)
    names.validate_relpath(path)
    with _lock(store):
        current = open_for(store, scope, path)
        if current is None:
            disk = walk.read_nofollow(store.root, path)
            if disk != text_at(store, store.head(), path):
                store.sync()  # a journaled write of the file: base on its commit
            base = store.head()
            old = text_at(store, base, path)
            parent, tree, pid = base, store.git.head_tree(), uuid.uuid4().hex[:12]
        else:
            base, parent, pid = current.base, current.tip, current.id
            old = proposed(current, store)
            tree = store.git.repo[parent].peel(pygit2.Tree)
        old_text = None if old is None else old.decode("utf-8", "replace")
        if text == old_text:
            return current, False
        blob = None
        if text is not None:
            data = _checked(store, path, text, old_text, "agent")  # (a token's write)
            blob = store.git.create_blob(data)
        new_tree = apply_changes(store.git.repo, tree, {path: blob})
        extra = [*[(str(k), str(v)) for k, v in trailers], (ID_TRAILER, pid),
                 (PATH_TRAILER, path), (BASE_TRAILER, base or "")]
        subject = (message or f"{tool}: {path}").strip().splitlines()[0][:200]
        sha = _commit(store, parent, new_tree, actor,
                      _message(f"Propose {subject}", actor, tool, extra))
        name = ref_name("open", scope, pid)
        _move(store, [(name, sha, current.tip if current else ZERO)])
        found = _load(store, name, sha, "open")
        assert found is not None
        return found, current is None


def amend(store: Store, p: Proposal, text: str | None, actor: Actor) -> Proposal:
    """A curator's edit on top of an open proposal, as the curator (an edited approval)."""
    with _lock(store):
        fresh = get(store, p.id, p.scope)
        if fresh.state != "open":
            raise ProposalClosed(f"proposal {p.id} is {fresh.state} already", fresh.state)
        old = proposed(fresh, store)
        old_text = None if old is None else old.decode("utf-8", "replace")
        if text == old_text:
            return fresh
        blob = None
        if text is not None:
            blob = store.git.create_blob(_checked(store, p.path, text, old_text, "user"))
        tree = apply_changes(store.git.repo, store.git.repo[fresh.tip].peel(pygit2.Tree),
                             {p.path: blob})
        extra = [(ID_TRAILER, p.id), (PATH_TRAILER, p.path), (BASE_TRAILER, p.base or "")]
        sha = _commit(store, fresh.tip, tree, actor,
                      _message(f"Edit proposal {p.id}: {p.path}", actor, "approve", extra))
        _move(store, [(fresh.ref, sha, fresh.tip)])
        done = _load(store, fresh.ref, sha, "open")
        assert done is not None
        return done


def reject(store: Store, pid: str, *, actor: Actor, reason: str = "",
           scope: str | None = None) -> Proposal:
    """Close an open proposal without merging it: a commit on its branch records who and why,
    and the ref moves to `refs/memoryui/rejected/...` (its commits are kept)."""
    with _lock(store):
        p = get(store, pid, scope)
        if p.state != "open":
            raise ProposalClosed(f"proposal {pid} is {p.state} already", p.state)
        tree = store.git.repo[p.tip].peel(pygit2.Tree).id
        extra = [(ID_TRAILER, p.id), (PATH_TRAILER, p.path), (BASE_TRAILER, p.base or ""),
                 ("Rejected-by", f"{actor.name} <{actor.email}>")]
        sha = _commit(store, p.tip, tree, actor,
                      _message(f"Reject proposal {p.id}: {p.path}", actor, "reject", extra,
                               body=reason[:2000]))
        closed = ref_name("rejected", p.scope, p.id)
        _move(store, [(closed, sha, ZERO), (p.ref, ZERO, p.tip)])
        done = _load(store, closed, sha, "rejected")
        assert done is not None
        return done


def close_approved(store: Store, p: Proposal) -> None:
    """Move an approved proposal's ref out of the open ones (its merge commit holds it)."""
    _move(store, [(ref_name("approved", p.scope, p.id), p.tip, ZERO), (p.ref, ZERO, p.tip)])


def settle(store: Store) -> list[str]:
    """Drop open refs whose proposal is decided under another ref (a fetch from a remote can
    bring an old open ref back after another instance decided it); their `scope/id`."""
    decided = {name[len(prefix):] for prefix in (APPROVED_PREFIX, REJECTED_PREFIX)
               for name, _tip in _refs(store, prefix)}
    dropped = []
    with _lock(store):
        for name, tip in _refs(store, OPEN_PREFIX):
            key = name[len(OPEN_PREFIX):]
            if key in decided:
                try:
                    _move(store, [(name, ZERO, tip)])
                    dropped.append(key)
                except ProposalClosed:
                    continue
    return dropped
