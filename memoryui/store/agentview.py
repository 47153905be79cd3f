"""The workspace as one agent sees it through its tools, under its write policies.

`AgentStore` stands in for the `Store` in a tool's context: for a path whose policy is
`propose` a write becomes (or extends) the agent's proposal (`proposals.propose`) and a
read answers the agent's proposed version, so multi-step tools keep working; `read` refuses
every write; `write` (and every path outside the layout's curated kinds) goes straight to
the store. Everyone else reads the store itself and sees the approved files.

Which policy holds for a path is the caller's rule (`policy(path)`), so this module stays
plain Python; `on_proposed(proposal, created)` hears of each proposal made or extended.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterable
from typing import Any

from . import proposals
from .actors import Actor
from .errors import StoreError
from .proposals import Proposal
from .workspace import DELETE, Store, WriteResult, version_of
from .writing import Shorthands

WRITE, PROPOSE, READ = "write", "propose", "read"


class WriteRefused(StoreError):
    """The write policy lets this agent only read the file."""

    code = "forbidden"
    status = 403


class AgentStore(Shorthands):
    """A `Store` seen by agent `scope`: its proposals read back, its writes proposed.

    `scope` "" (an admin token acting for no scope): its write of a scope's file extends
    that scope's proposal, and it reads the approved files; a shared file cannot be
    proposed without a scope, so that write is refused."""

    def __init__(self, store: Store, scope: str, policy: Callable[[str], str],
                 on_proposed: Callable[[Proposal, bool], None] | None = None) -> None:
        self.store = store
        self.scope = scope
        self.policy = policy
        self.on_proposed = on_proposed
        self._policies: dict[str, str] = {}

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)

        self.last_proposal: Proposal | None = None  # the one the last write made or extended

    def policy_of(self, path: str) -> str:
        found = self._policies.get(path)
        if found is None:
            found = self._policies[path] = self.policy(path)
        return found

    def proposer(self, path: str) -> str:
        """The scope whose proposal a write of `path` is ("" when there is none)."""
        return self.scope or self.store.layout.scope_of(path) or ""

    # -- reads -------------------------------------------------------------------------------
    def _own(self, path: str) -> tuple[Proposal, bytes | None] | None:
        """The agent's proposal for `path`; a caller acting for no scope reads what
        everyone reads (its writes still go to the owning scope's proposal)."""
        if not self.scope or self.policy_of(path) != PROPOSE:
            return None
        return proposals.own_version(self.store, self.scope, path)

    def read_bytes(self, path: str) -> bytes | None:
        own = self._own(path)
        return self.store.read_bytes(path) if own is None else own[1]

    def read(self, path: str) -> str | None:
        data = self.read_bytes(path)
        return None if data is None else data.decode("utf-8", "replace")

    def read_versioned(self, path: str) -> tuple[str | None, str | None]:
        data = self.read_bytes(path)
        return (None, None) if data is None else (data.decode("utf-8", "replace"),
                                                  version_of(data))

    def exists(self, path: str) -> bool:
        own = self._own(path)
        return self.store.exists(path) if own is None else own[1] is not None

    def _open_here(self, folder: str) -> list[tuple[Proposal, bytes | None]]:
        """The agent's open proposals (under its propose policy) for files in `folder`."""
        out = []
        if not self.scope:
            return []
        for p in proposals.list_proposals(self.store, "open", self.scope):
            in_folder = p.path == folder or p.path.startswith(folder + "/") if folder else True
            if in_folder and self.policy_of(p.path) == PROPOSE:
                out.append((p, proposals.proposed(p, self.store)))
        return out

    def read_folder(self, prefix: str, suffix: str = ".md") -> list[tuple[str, str]]:
        folder = prefix.strip("/")
        found = dict(self.store.read_folder(prefix, suffix))
        for p, data in self._open_here(folder):
            if posixpath.dirname(p.path) != folder or not p.path.endswith(suffix):
                continue
            if data is None:
                found.pop(p.path, None)
            else:
                found[p.path] = data.decode("utf-8", "replace")
        return sorted(found.items())

    def list_files(self, prefix: str = "") -> list[str]:
        folder = prefix.strip("/")
        found = set(self.store.list_files(prefix))
        for p, data in self._open_here(folder):
            (found.discard if data is None else found.add)(p.path)
        return sorted(found)

    # -- writes ------------------------------------------------------------------------------
    def _refuse(self, path: str) -> None:
        policy = self.policy_of(path)
        if policy == READ:
            raise WriteRefused(f"{path} is read-only for this agent (write policy: read)")
        if policy == PROPOSE and not self.proposer(path):
            raise WriteRefused(f"changes to {path} are proposals: act for a scope (an admin "
                               "token names it) to propose one")

    def update(self, path: str, fn: Callable[[str | None], object], *, actor: Actor,
               tool: str, message: str | None = None, expect: str | None = None,
               trailers: Iterable[tuple[str, str]] = (), when: float | None = None,
               entry: str | None = None) -> WriteResult:
        self._refuse(path)
        if self.policy_of(path) != PROPOSE:
            return self.store.update(path, fn, actor=actor, tool=tool, message=message,
                                     expect=expect, trailers=trailers, when=when, entry=entry)
        old_bytes = self.read_bytes(path)
        old = None if old_bytes is None else old_bytes.decode("utf-8", "replace")
        self.store._check_expect(path, old, old_bytes, expect)
        new = fn(old)
        if new is None or (new is not DELETE and new == old):
            return WriteResult(path, old_bytes, False)
        if new is not DELETE and not isinstance(new, str):
            raise TypeError("update functions return str, None or DELETE")
        text = None if new is DELETE else str(new)
        p, created = proposals.propose(self.store, scope=self.proposer(path), path=path,
                                       text=text, actor=actor, tool=tool, trailers=trailers,
                                       message=message)
        self.last_proposal = p
        if p is not None and self.on_proposed is not None:
            self.on_proposed(p, created)
        data = None if text is None else text.encode()
        return WriteResult(path, data, True, created=old is None, deleted=text is None)

    def delete(self, path: str, *, actor: Actor, tool: str, message: str | None = None,
               expect: str | None = None, missing_ok: bool = False,
               trailers: Iterable[tuple[str, str]] = ()) -> WriteResult:
        self._refuse(path)
        if self.policy_of(path) != PROPOSE:
            return self.store.delete(path, actor=actor, tool=tool, message=message,
                                     expect=expect, missing_ok=missing_ok, trailers=trailers)
        return super().delete(path, actor=actor, tool=tool, message=message, expect=expect,
                              missing_ok=missing_ok, trailers=trailers)

    def _whole(self, paths: Iterable[str]) -> None:
        """Renames and folder moves are never proposals: refused unless every path is
        written directly."""
        for path in paths:
            self._refuse(path)
            if self.policy_of(path) == PROPOSE:
                raise WriteRefused(f"{path} takes proposals only: a rename or move of it "
                                   "cannot be proposed; write the new file instead")

    def rename(self, old: str, new: str, **kw: Any) -> WriteResult:
        self._whole([old, new])
        return self.store.rename(old, new, **kw)

    def delete_tree(self, folder: str, **kw: Any) -> Any:
        self._whole(self.store.list_files(folder))
        return self.store.delete_tree(folder, **kw)

    def rename_tree(self, old: str, new: str, **kw: Any) -> Any:
        moved = self.store.list_files(old)
        self._whole(moved + [new + p[len(old):] for p in moved])
        return self.store.rename_tree(old, new, **kw)
