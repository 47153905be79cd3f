"""What served git runs for a push: `python -m memoryui.gitserve.hooks <hook>`.

`pre-receive` (the pushed objects still in git's quarantine): only the workspace branch
or `refs/for/<branch>` (not both at once), no delete, the token still active, every new
commit's changed paths within the host token's rules (rules.py) and its write policies
(pushpolicy.py; the database is read only when a policy other than `write` can apply, and
for every push to refs/for), and the push a fast-forward of the workspace's HEAD once the journaled agent writes are
committed; a push for review must propose something that can be proposed. A refusal is one
line on stderr (git shows it as `remote: ...`) and exit 1: git drops the quarantine, so no
object of the push is kept.

`proc-receive` (procreceive.py): git hands it every push that pre-receive let through. A
push to the branch is integrated into the workspace (integrate.py), or refused `fetch
first` when an agent's write came in since the pre-receive check; a push to
`refs/for/<branch>` becomes proposals. git itself moves no ref: the served ref never gets
ahead of the workspace.

The hook is told its workspace, layout, rules and token through the environment (app.py).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pygit2

from memoryui.gitserve.integrate import MOVED
from memoryui.gitserve.procreceive import NotProposed, planned, proc_receive
from memoryui.gitserve.pushpolicy import (
    Review,
    branch_refusal,
    for_ref,
    host_policies,
    is_review,
    new_commits,
    review,
    review_refusal,
    touched,
)
from memoryui.gitserve.rules import PushRules, changes, first_refusal
from memoryui.store.gitobjects import ZERO
from memoryui.store.layout import get_layout

if TYPE_CHECKING:
    from memoryui.store import Store

# What git gives a hook in quarantine; memoryui's own work on the store runs without it.
QUARANTINE_ENV = ("GIT_QUARANTINE_PATH", "GIT_OBJECT_DIRECTORY",
                  "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_DIR", "GIT_NAMESPACE",
                  "GIT_PUSH_OPTION_COUNT")


class Refusal(Exception):
    """One line for the pushing host."""


def _updates(stdin: str) -> list[tuple[str, str, str]]:
    out = []
    for line in stdin.splitlines():
        parts = line.split(" ", 2)
        if len(parts) == 3:
            out.append((parts[0], parts[1], parts[2]))
    return out


def _root() -> Path:
    return Path(os.environ["MEMORYUI_GIT_WORKSPACE"])


def _branch_ref(repo: pygit2.Repository) -> str:
    head = repo.references.get("HEAD")
    if head is not None and head.type == pygit2.enums.ReferenceType.SYMBOLIC:
        return str(head.target)
    return "refs/heads/main"


def _token_still_active() -> bool:
    """The pushing token, unless tokens changed since it was checked (then the database)."""
    stamp_file = os.environ.get("MEMORYUI_TOKEN_GENERATION_FILE", "")
    try:
        stamp = str(os.stat(stamp_file).st_mtime_ns) if stamp_file else "0"
    except OSError:
        stamp = "0"
    if stamp == os.environ.get("MEMORYUI_TOKEN_GENERATION", "0"):
        return True
    import django  # only when tokens changed meanwhile: a revocation must stop the push
    django.setup(set_prefix=False)
    from memoryui.models import Token
    return Token.objects.active().filter(pk=int(os.environ["MEMORYUI_PUSH_TOKEN_ID"]),
                                         is_host=True).exists()


def _clean_env() -> None:
    for key in QUARANTINE_ENV:
        os.environ.pop(key, None)


def _open_store() -> Store:
    from memoryui.store import Store  # (after the quarantine's environment is gone)
    return Store(_root(), os.environ.get("MEMORYUI_LAYOUT", "duragent"),
                 secrets=os.environ.get("MEMORYUI_SECRETS", "block"))


def pre_receive(stdin: str) -> None:
    root = _root()
    repo = pygit2.Repository(str(root / ".git"))
    quarantine = os.environ.get("GIT_QUARANTINE_PATH")
    if quarantine:
        repo.odb.add_disk_alternate(quarantine)
    branch = _branch_ref(repo)
    updates = _updates(stdin)
    reviews = [u for u in updates if is_review(u[2], branch)]
    for _old, new, ref in updates:
        if ref != branch and not is_review(ref, branch):
            raise Refusal(f"memoryui takes pushes to {branch} only, not {ref} (or to "
                          f"{for_ref(branch)}, which proposes the changes)")
        if new == ZERO:
            raise Refusal(f"deleting {ref} is never allowed")
    if reviews and len(reviews) != len(updates):
        raise Refusal(f"push to {branch} or to {for_ref(branch)}, not to both at once")
    if not _token_still_active():
        raise Refusal("the token was revoked during the push; nothing was applied")
    layout = get_layout(os.environ.get("MEMORYUI_LAYOUT", "duragent"))
    rules = PushRules.from_env(os.environ.get("MEMORYUI_PUSH_RULES", ""))
    limited = bool(reviews) or os.environ.get("MEMORYUI_PUSH_POLICIES") == "1"
    policies = host_policies(layout) if limited else None
    for old, new, ref in updates:
        if ref == branch and old != ZERO and not repo.descendant_of(new, old) and new != old:
            raise Refusal("non-fast-forward: fetch first, merge, and push again "
                          "(memoryui never takes a forced push)")
        commits = new_commits(repo, new)
        found = changes(repo, commits)  # read once for both checks
        refused = first_refusal(repo, layout, rules, commits, found)
        if refused is not None:
            raise Refusal(refused.line())
        if policies is None:
            continue
        seen = touched(repo, commits, found)
        if ref == branch:
            why = branch_refusal(repo, policies, seen, old, new, branch)
        else:
            tip = repo.references.get(branch)
            head = str(tip.resolve().target) if tip is not None else None
            proposed = review(repo, policies, seen, head, new)
            why = review_refusal(policies, seen, proposed, branch) or _unplannable(
                repo, proposed, head)
        if why is not None:
            raise Refusal(why)
    if reviews:
        return  # nothing moves: proc-receive makes the proposals
    _clean_env()
    store = _open_store()
    try:
        store.flush()  # what agents wrote so far is in HEAD: a push must build on it
        head = store.git.head()
    finally:
        store.close()
    for old, _new, _ref in updates:
        if (head or ZERO) != old:
            raise Refusal(MOVED)


def _unplannable(repo: pygit2.Repository, found: Review, head: str | None) -> str | None:
    """Why the files a push for review proposes cannot be proposals (not text, too large,
    a credential, overlapping a newer change), checked while the push is in quarantine."""
    _clean_env()
    store = _open_store()
    try:
        planned(store, repo, found, head)
    except NotProposed as exc:
        return str(exc)
    finally:
        store.close()
    return None


def main(argv: list[str]) -> int:
    hook = argv[1] if len(argv) > 1 else ""
    if hook == "proc-receive":  # a conversation with git, not one read of stdin
        _clean_env()
        talk = os.fdopen(os.dup(1), "wb")
        os.dup2(2, 1)  # a stray print (a library's warning) never breaks the protocol
        sys.stdout = sys.stderr
        return proc_receive(sys.stdin.buffer, talk, _open_store)
    stdin = sys.stdin.read()
    try:
        if hook == "pre-receive":
            pre_receive(stdin)
    except Refusal as exc:
        print(f"memoryui refused the push: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
