"""What sync reports: a round's outcome, the status badge's facts, a file's state."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..actors import Actor
from .state import RefusedEntry, SyncConflict

SYNC_ACTOR = Actor("system", "sync", "sync@memoryui")  # author of sync merge commits
FILE_STATES = ("synced", "modified", "untracked", "conflict", "missing")


@dataclass
class RoundResult:
    ran: bool
    fetched: bool = False
    integrated: int = 0  # remote commits taken in
    pushed: bool = False
    conflicts: list[str] = field(default_factory=list)  # new or updated sync conflicts
    error: str | None = None  # masked
    attempts: int = 0
    published: list[str] = field(default_factory=list)
    paused: bool = False  # nothing pushed because a conflict is open

    def summary(self) -> str:
        """One line for `manage.py sync` and the log."""
        if not self.ran:
            return "sync: another round is running; nothing done"
        parts = []
        if self.integrated:
            parts.append(f"integrated {self.integrated} remote commit(s)")
        if self.published:
            parts.append(f"published {len(self.published)} file(s)")
        if self.pushed:
            parts.append("pushed")
        if self.conflicts:
            parts.append(f"{len(self.conflicts)} sync conflict(s): {', '.join(self.conflicts[:3])}")
        if self.paused:
            parts.append("publishing paused until the open sync conflicts are resolved")
        if self.attempts > 1:
            parts.append(f"{self.attempts - 1} push race(s) retried")
        if self.error:
            parts.append(f"FAILED: {self.error}")
        return "sync: " + ("; ".join(parts) if parts else "up to date")


@dataclass
class FileState:
    """A file's local version (HEAD) against the remote tip, in Dagu Git Sync's terms."""

    path: str
    state: str  # synced | modified | untracked (only local) | conflict | missing (only remote)
    local: str | None = None  # blob sha at HEAD
    remote: str | None = None  # blob sha at the remote tip


@dataclass
class SyncStatus:
    configured: bool
    url: str = ""  # masked
    branch: str | None = None
    push_mode: str = "auto"
    state: str = "off"  # off|synced|ahead|behind|diverged|conflict|failing
    last_fetch: float | None = None
    last_push: float | None = None
    last_round: float | None = None
    last_error: str | None = None  # masked
    last_error_at: float | None = None
    ahead: int = 0  # local commits the remote lacks
    behind: int = 0  # fetched remote commits not integrated yet
    unpublished: int = 0  # files whose local version differs from the remote tip
    conflicts: list[SyncConflict] = field(default_factory=list)
    publishing_paused: bool = False
    interval: float = 0.0
    refused: list[RefusedEntry] = field(default_factory=list)  # left out of remote commits

    @classmethod
    def off(cls) -> SyncStatus:
        return cls(configured=False)

    @property
    def label(self) -> str:
        """One short line for the badge's title."""
        if self.state == "off":
            return "sync is off (no MEMORYUI_REMOTE)"
        if self.state == "failing":
            return f"sync failing: {self.last_error}"
        if self.state == "conflict":
            n = len(self.conflicts)
            return f"{n} sync conflict{'s' if n != 1 else ''}: publishing paused"
        if self.state == "diverged":
            return f"{self.ahead} to push, {self.behind} to take in"
        if self.state == "behind":
            return f"{self.behind} remote commit{'s' if self.behind != 1 else ''} to take in"
        if self.state == "ahead":
            if self.push_mode == "manual":
                return f"{self.unpublished} file{'s' if self.unpublished != 1 else ''} to publish"
            return f"{self.ahead} commit{'s' if self.ahead != 1 else ''} to push"
        return "in sync with the remote"
