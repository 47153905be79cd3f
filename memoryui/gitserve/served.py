"""The repository git serves: the workspace's own, through a namespace, with memoryui's hooks.

`git http-backend` serves the workspace repository with `GIT_NAMESPACE` set, so clients see
and push `refs/namespaces/memoryui-git/refs/heads/<branch>`, a mirror of the workspace
branch, never the branch itself: git's own ref update cannot move the workspace's HEAD
behind the store's back. The mirror is set to HEAD before every request (a compare-and-swap
that gives way to a push holding it). A push's objects land in the workspace's own object
store (no copy), held in git's quarantine until the checks pass; the `proc-receive` hook
then moves the real branch and the working tree under the store's locks (integrate.py),
and the mirror after them.

Hooks run only here: every other git memoryui starts has `core.hooksPath=/dev/null`.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pygit2

from memoryui.store.gitcli import HARDENING, run_git
from memoryui.store.gitobjects import ZERO

NAMESPACE = "memoryui-git"
PACKAGE_HOME = Path(__file__).resolve().parents[2]  # the folder holding `memoryui`
HOOKS = ("pre-receive", "proc-receive")

# receive-pack's own rules on top of memoryui's: no deletes, no non-fast-forward (force is
# never possible), every received object checked by fsck (a malformed pack is refused).
SERVING = (
    ("receive.denyNonFastForwards", "true"),
    ("receive.denyDeletes", "true"),
    # the pushed ref is the namespaced mirror, never the checked-out branch itself, which
    # receive-pack's check for a non-bare repository does not see through
    ("receive.denyCurrentBranch", "ignore"),
    ("receive.fsckObjects", "true"),
    # every push that pre-receive lets through is handed to the proc-receive hook, so git
    # moves no ref itself: a push to the branch is integrated into the workspace (or refused
    # with a report when an agent wrote meanwhile, integrate.py), a push to refs/for/<branch>
    # becomes proposals and no ref of that name is ever created (procreceive.py)
    ("receive.procReceiveRefs", "refs/for"),
    ("receive.procReceiveRefs", "refs/heads"),
    ("receive.advertisePushOptions", "false"),
    ("receive.shallowUpdate", "false"),
    ("http.receivepack", "true"),
    ("http.uploadpack", "true"),
    ("http.getanyfile", "false"),
    ("uploadpack.allowFilter", "true"),
    ("core.logAllRefUpdates", "false"),
)


def mirror_ref(branch_ref: str) -> str:
    """The namespaced name of the branch clients see (`refs/heads/<branch>`)."""
    return f"refs/namespaces/{NAMESPACE}/{branch_ref}"


def hooks_dir(state_dir: Path) -> Path:
    """The hooks folder of served git (written once per interpreter path)."""
    folder = state_dir / "githooks"
    folder.mkdir(parents=True, exist_ok=True)
    for name in HOOKS:
        # git runs hooks in the repository: the hook finds memoryui where this process did
        script = (f'#!/bin/sh\nPYTHONPATH="{PACKAGE_HOME}${{PYTHONPATH:+:$PYTHONPATH}}" '
                  f'exec "{sys.executable}" -m memoryui.gitserve.hooks {name} "$@"\n')
        path = folder / name
        try:
            if path.read_text() == script:
                continue
        except FileNotFoundError:
            pass
        tmp = folder / f".{name}.tmp"
        tmp.write_text(script)
        tmp.chmod(0o755)
        tmp.replace(path)
    for stale in folder.iterdir():  # a hook an earlier version installed must not run
        if stale.name not in HOOKS and not stale.name.startswith("."):
            stale.unlink(missing_ok=True)
    return folder


def config_env(hooks: Path) -> dict[str, str]:
    """gitcli's hardening with memoryui's hooks in place of none, and the serving rules."""
    settings = tuple((k, str(hooks) if k == "core.hooksPath" else v) for k, v in HARDENING)
    settings += SERVING
    env = {"GIT_CONFIG_COUNT": str(len(settings)), "GIT_TERMINAL_PROMPT": "0",
           "LC_ALL": "C"}
    for i, (key, value) in enumerate(settings):
        env[f"GIT_CONFIG_KEY_{i}"], env[f"GIT_CONFIG_VALUE_{i}"] = key, value
    return env


def refresh_mirror(root: Path) -> str | None:
    """Point the served branch at the workspace's HEAD; the HEAD it serves (None: empty).

    A push holding the mirror's lock wins: this refresh then gives way (the push moves the
    mirror to the commit it made HEAD)."""
    repo = pygit2.Repository(str(root / ".git"))
    head_ref = repo.references.get("HEAD")
    branch = str(head_ref.target) if head_ref is not None and \
        head_ref.type == pygit2.enums.ReferenceType.SYMBOLIC else "refs/heads/main"
    served = mirror_ref(branch)
    ns_head = f"refs/namespaces/{NAMESPACE}/HEAD"
    current = repo.references.get(served)
    tip_ref = repo.references.get(branch)
    tip = str(tip_ref.resolve().target) if tip_ref is not None else None
    now = str(current.target) if current is not None else None
    if tip is not None and now != tip:
        try:
            run_git(root, "update-ref", "--no-deref", served, tip, now or ZERO)
        except subprocess.CalledProcessError:
            pass  # a push holds it, or another request refreshed it first
    symbolic = repo.references.get(ns_head)
    if symbolic is None or str(symbolic.target) != served:
        try:
            run_git(root, "symbolic-ref", ns_head, served)
        except subprocess.CalledProcessError:
            pass
    return tip
