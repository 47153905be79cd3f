"""The sync of one clone with one remote branch as the UI and the API see it: the rounds
(`rounds.Rounds`) and, through `curate`, the status, the per-file view, conflict resolution,
publishing and discarding."""

from __future__ import annotations

from ..actors import Actor
from . import curate
from .model import FileState, RoundResult, SyncStatus
from .rounds import Rounds


class Syncer(Rounds):
    """Sync of one workspace clone with one remote branch."""

    def status(self) -> SyncStatus:
        return curate.status(self)

    # -- curation (curate.py) ----------------------------------------------------------
    def file_states(self, *, include_synced: bool = False) -> list[FileState]:
        return curate.file_states(self, include_synced=include_synced)

    def compare_texts(self, path: str) -> tuple[str | None, str | None]:
        return curate.compare_texts(self, path)

    def conflict_texts(self, path: str) -> tuple[str | None, str | None, str | None]:
        return curate.conflict_texts(self, path)

    def resolve(self, path: str, text: str | None, *, actor: Actor, message: str | None = None,
                expect_theirs: str | None = None, expect: str | None = None) -> str:
        return curate.resolve(self, path, text, actor=actor, message=message,
                              expect_theirs=expect_theirs, expect=expect)

    def publish(self, paths: list[str] | None, *, actor: Actor, message: str) -> RoundResult:
        return curate.publish(self, paths, actor=actor, message=message)

    def discard(self, paths: list[str], *, actor: Actor) -> list[str]:
        return curate.discard(self, paths, actor=actor)
