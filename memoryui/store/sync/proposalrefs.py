"""Proposals travel with the workspace: each sync round fetches and pushes their refs.

`refs/memoryui/proposals/*` (open), `approved/*` and `rejected/*` are exchanged with the
remote under the same names, never forced: a proposal's ref only moves forward (an agent
extends it, a decision moves it to approved or rejected with one more commit). An open ref
a fetch brings back after this instance (or another) decided it is dropped here and deleted
on the remote, so every instance ends with the same inbox. A failure is logged and left to
the next round: the workspace's own sync never waits on it.
"""

from __future__ import annotations

import logging

from .. import proposals
from ..workspace import Store
from .transport import Transport

log = logging.getLogger("memoryui.sync")

NAMESPACES = (proposals.OPEN_PREFIX, proposals.APPROVED_PREFIX, proposals.REJECTED_PREFIX)


def exchange(store: Store, transport: Transport, push: bool) -> list[str]:
    """Fetch the remote's proposal refs, drop the decided ones, push ours (`push`);
    the ids of the open refs dropped."""
    url = transport.config.url
    specs = [f"{ns}*:{ns}*" for ns in NAMESPACES]
    proc = transport.run_git("fetch", "--no-tags", "--no-write-fetch-head", "--quiet",
                             "--no-auto-gc", "--no-recurse-submodules", "--", url, *specs)
    if proc.returncode != 0:
        log.warning("sync: proposals not fetched: %s", transport.describe("fetch", proc.stderr))
    dropped = proposals.settle(store)
    if not push:
        return [key.rsplit("/", 1)[-1] for key in dropped]
    # Deletions of open refs decided since (the remote still had them: the fetch brought
    # them back) go first, apart, so that one the remote lacks never fails the push.
    gone = [f":{proposals.OPEN_PREFIX}{key}" for key in dropped]
    for batch in ([*gone], specs):
        if not batch:
            continue
        proc = transport.run_git("push", "--porcelain", "--no-verify", "--", url, *batch)
        if proc.returncode != 0:
            log.warning("sync: proposals not pushed: %s",
                        transport.describe("push", proc.stdout + proc.stderr))
    return [key.rsplit("/", 1)[-1] for key in dropped]
