"""`proc-receive`: a push to `refs/for/<branch>` becomes proposals instead of a ref update.

git runs this hook for the commands `receive.procReceiveRefs` names (`refs/for`) once
pre-receive has checked them (rules, policies, something to propose; hooks.py) and the
pushed objects are in the store. It speaks git's pkt-line protocol on stdin and stdout:
version, then the commands, then one report per proposal (`ok refs/for/main` with `option
refname refs/memoryui/proposals/<scope>/<id>`), or `ng refs/for/main <reason>`. No
`refs/for/...` ref is ever created, and nothing in the workspace changes until a lead
approves.

Each file whose content differs between the pushed tip and its merge-base with the
workspace's HEAD becomes one proposal (or extends the open proposal of its scope for that
file, as an agent's repeated write does) with the file's pushed content, three-way merged
with the workspace's version when that changed since the merge-base (overlapping changes
refuse the push: fetch, merge, push again). The proposal's commits are authored by the
pushed commit that last changes the file and carry the pushing token's name. The host reads
one `remote:` line per proposal with its id and the inbox's address; the server's process
announces new ones (the webhook) once the push is done (app.py).
"""

from __future__ import annotations

import os
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, BinaryIO

import pygit2

from memoryui.gitserve.integrate import Moved, integrate, tell_server
from memoryui.gitserve.pushpolicy import (
    Proposed,
    Review,
    host_policies,
    new_commits,
    review,
    touched,
)
from memoryui.store.actors import Actor
from memoryui.store.errors import StoreError
from memoryui.store.gitobjects import ZERO
from memoryui.store.merge import merge3

if TYPE_CHECKING:
    from memoryui.store import Store

TOOL = "git push"
LABELS = ("the workspace", "the version you started from", "your push")


class NotProposed(Exception):
    """One line saying why a push for review made no proposal."""


# -- git's pkt-line ------------------------------------------------------------------------

def read_packets(stream: BinaryIO) -> list[bytes]:
    """Packets up to the next flush, each without its trailing newline."""
    out: list[bytes] = []
    while True:
        size = stream.read(4)
        if len(size) < 4:
            raise EOFError("git closed the proc-receive protocol early")
        n = int(size, 16)
        if n == 0:
            return out
        out.append(stream.read(n - 4).rstrip(b"\n"))


def packet(text: str) -> bytes:
    data = text.encode() + b"\n"
    return f"{len(data) + 4:04x}".encode() + data


FLUSH = b"0000"


# -- the proposals -------------------------------------------------------------------------

@dataclass
class Made:
    id: str
    path: str
    ref: str
    old: str
    new: str
    created: bool


def _text(data: bytes | None) -> str | None:
    return None if data is None else data.decode("utf-8")


def _blob(repo: pygit2.Repository, sha: str | None, path: str) -> bytes | None:
    if not sha:
        return None
    try:
        obj = repo[sha].peel(pygit2.Tree)[path]
    except KeyError:
        return None
    return obj.data if isinstance(obj, pygit2.Blob) else None


def _proposed_text(store: Store, repo: pygit2.Repository, base: str | None, head: str | None,
                   f: Proposed) -> str | None:
    """The file as the proposal has it: the pushed version, merged with the workspace's
    when that moved on since the merge-base."""
    try:
        pushed = _text(repo[f.oid].peel(pygit2.Blob).data) if f.oid else None
        was, now = _text(_blob(repo, base, f.path)), _text(_blob(repo, head, f.path))
    except UnicodeDecodeError:
        raise NotProposed(f"{f.path!r} in commit {f.commit[:12]}: not UTF-8 text (memoryui "
                          "holds text only)") from None
    if now in (was, pushed):
        return pushed
    moved = (f"{f.path!r} changed in the workspace since the commit you started from, "
             "and the two changes overlap: fetch, merge and push again")
    if pushed is None or now is None:
        raise NotProposed(moved)
    merged = merge3(was or "", now, pushed, store.git.state_dir, LABELS)
    if merged is None or merged.conflicts:
        raise NotProposed(moved)
    return merged.text


def planned(store: Store, repo: pygit2.Repository, found: Review, head: str | None
            ) -> dict[str, str | None]:
    """Each proposed file's text (None: deleted), every one checked as an agent's proposal
    is (names, size, credentials) before any proposal is made; `repo` sees the push's
    objects (in pre-receive, git's quarantine)."""
    from memoryui.store import proposals
    texts = {f.path: _proposed_text(store, repo, found.base, head, f) for f in found.files}
    for f in found.files:
        text = texts[f.path]
        if text is None:
            continue
        current = proposals.open_for(store, f.scope or "", f.path)
        try:
            old = proposals.proposed(current, store) if current else _blob(repo, head, f.path)
            proposals._checked(store, f.path, text, _text(old), "agent")
        except (StoreError, UnicodeDecodeError) as exc:
            raise NotProposed(f"{f.path!r} in commit {f.commit[:12]}: {exc}") from None
    return texts


def propose_push(store: Store, new: str, say: list[str]) -> list[Made]:
    """The proposals a push for review of `new` makes; `say` gets the lines for the host."""
    repo = store.git.repo
    head = store.git.head()
    policies = host_policies(store.layout)  # (Django is set up from here on)
    from memoryui.models import Token
    from memoryui.proposing import inbox_url, recorded
    from memoryui.store import proposals
    found = review(repo, policies, touched(repo, new_commits(repo, new)), head, new)
    texts = planned(store, repo, found, head)
    token = Token.objects.get(pk=int(os.environ.get("MEMORYUI_PUSH_TOKEN_ID", "0")))
    name = os.environ.get("MEMORYUI_PUSH_TOKEN_NAME", "") or f"token {token.pk}"
    origin = os.environ.get("MEMORYUI_PUSH_ORIGIN", "")
    made = []
    kept = False  # an open proposal has the pushed version already
    for f in found.files:
        commit = repo[f.commit].peel(pygit2.Commit)
        actor = Actor("agent", commit.author.name, commit.author.email)
        before = proposals.open_for(store, f.scope or "", f.path)
        subject = commit.message.strip().splitlines()[0] if commit.message.strip() else None
        try:
            p, created = proposals.propose(
                store, scope=f.scope or "", path=f.path, text=texts[f.path], actor=actor,
                tool=TOOL, message=subject,
                trailers=[("Memoryui-Pushed-By", name), ("Pushed-Commit", f.commit)])
        except StoreError as exc:
            raise NotProposed(f"{f.path!r} in commit {f.commit[:12]}: {exc}") from None
        if p is None:
            say.append(f"{f.path}: the workspace has this version already; nothing to propose")
            continue
        if before is not None and before.tip == p.tip:
            say.append(f"{f.path}: proposal {p.id} has this version already")
            kept = True
            continue
        recorded(p, created, token, store, webhook=False)
        url = inbox_url(p.id)
        url = url if "://" in url else origin + url
        say.append(f"{'proposed' if created else 'updated proposal'} {p.id} for {f.path} "
                   f"(via git push, {name}): {url}")
        made.append(Made(p.id, f.path, p.ref, before.tip if before else ZERO, p.tip, created))
    for path in found.daily:
        say.append(f"{path}: daily logs are never proposals; it reaches the workspace with a "
                   "push to the branch")
    if not made and not kept:
        raise NotProposed("nothing to propose: the pushed files are as the workspace has "
                          "them")
    return made


def _integrated(store: Store, old: str, new: str, ref: str, errors: list[str]) -> list[str]:
    """The report for a push to the workspace branch: `ok` once it is HEAD, or `ng` (git
    shows `[remote rejected] ... (fetch first: ...)`) when the workspace moved meanwhile."""
    try:
        integrate(store, old, new)
    except Moved as exc:
        return [f"ng {ref} {exc}"]
    except Exception as exc:  # noqa: BLE001 - the host gets one line, the server's log the rest
        errors.append(traceback.format_exc())
        return [f"ng {ref} memoryui could not integrate the push ({type(exc).__name__})"]
    return [f"ok {ref}"]


def _proposed(store: Store, new: str, ref: str, created: list[str], errors: list[str]
              ) -> list[str]:
    """The reports for a push for review: one per proposal made or extended."""
    say: list[str] = []
    failure = ""
    try:
        made = propose_push(store, new, say)
    except NotProposed as exc:
        made, failure = [], str(exc)
    except Exception as exc:  # noqa: BLE001 - the host gets one line, the server's log the rest
        errors.append(traceback.format_exc())
        made, failure = [], (f"memoryui could not make the proposals "
                             f"({type(exc).__name__}); those listed above were made")
    for line in say:  # (a failure after some proposals: the host sees which)
        print(f"memoryui: {line}", file=sys.stderr)
    if not made:
        return [f"ng {ref} {failure}" if failure else f"ok {ref}"]
    reports = []
    for m in made:
        reports += [f"ok {ref}", f"option refname {m.ref}", f"option old-oid {m.old}",
                    f"option new-oid {m.new}"]
        if m.created:
            created.append(m.id)
    return reports


def proc_receive(stdin: BinaryIO, stdout: BinaryIO, open_store: Callable[[], Store]) -> int:
    """Speak git's proc-receive protocol; 0 once every command has its report."""
    read_packets(stdin)  # version=1 and the features git offers (none is needed)
    stdout.write(packet("version=1") + FLUSH)
    stdout.flush()
    commands = [line.decode().split(" ", 2) for line in read_packets(stdin)]
    store = open_store()
    reports: list[str] = []
    created: list[str] = []
    errors: list[str] = []
    try:
        store.flush()  # what agents wrote so far is in HEAD: proposals start from it
        branch = store.git.branch_ref()
        for old, new, ref in commands:
            reports += (_integrated(store, old, new, ref, errors) if ref == branch
                        else _proposed(store, new, ref, created, errors))
    finally:
        store.close()
    sys.stderr.flush()
    stdout.write(b"".join(packet(r) for r in reports) + FLUSH)
    stdout.flush()
    if created or errors:  # (a branch push that landed told it already: integrate.py)
        tell_server({"proposals": created, "error": "\n".join(errors)})
    return 0
