"""Sync of the workspace with a git remote (docs/sync.md): plain Python, no Django.

One clone, one remote branch. `Syncer.round()` commits pending writes, fetches, integrates
(daily logs entry by entry, other files three-way, conflicts kept local and recorded) and
pushes without ever forcing. Module map: config (settings, masking), transport (git CLI),
daily (entry-wise merge), refuse (what is never taken from a remote), merging (the merge
tree), mergecommit (the integration's commit), worktree (files and index), state (state
file, arrivals), syncer (the round), curate (status, resolve, publish, discard),
bootstrap (clone or check), background (the server's thread).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from .background import start_background
from .bootstrap import bootstrap
from .config import (
    ConflictChanged,
    ConflictOpen,
    NoSuchConflict,
    RemoteConfig,
    SyncError,
    mask_secrets,
)
from .daily import merge_daily
from .model import SYNC_ACTOR, FileState, RoundResult, SyncStatus
from .state import ArrivedLog, SyncConflict
from .syncer import Syncer
from .transport import TransportError

if TYPE_CHECKING:
    from collections.abc import Iterable

    from ..workspace import Store

_arrived: dict[Path, ArrivedLog] = {}


def via_remote(store: Store, shas: Iterable[str]) -> set[str]:
    """Which of these commits arrived from the remote; works with or without a Syncer."""
    state_dir = store.git.state_dir
    log = _arrived.get(state_dir)
    if log is None:
        log = _arrived.setdefault(state_dir, ArrivedLog(state_dir))
    return set(shas) & log.all()


__all__ = [
    "SYNC_ACTOR", "ConflictChanged", "ConflictOpen", "FileState", "NoSuchConflict",
    "RemoteConfig", "RoundResult", "SyncConflict", "SyncError", "SyncStatus", "Syncer",
    "TransportError", "bootstrap", "mask_secrets", "merge_daily", "start_background",
    "via_remote",
]
