"""What a lead decided about daily-log entries, as the review domain reads it: decisions,
promotions (from the ledger, or found in history), and the constants that name them."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Protocol

PROMOTED, DISMISSED = "promoted", "dismissed"

Ref = tuple[str, str]  # (daily log path, entry id)


class PromotionRecord(Protocol):
    """One promotion: its commit on the target, and its undo if any."""

    pk: int
    target_path: str
    target_kind: str
    commit_sha: str
    created_by: str
    created_at: dt.datetime
    undo_commit_sha: str
    undone_by: str
    undone_at: dt.datetime | None


class Decision(Protocol):
    """What a lead decided about one entry."""

    path: str
    entry_id: str
    scope: str
    date: str
    status: str  # PROMOTED or DISMISSED
    reviewed_by: str
    reviewed_at: dt.datetime

    @property
    def promotion(self) -> PromotionRecord | None: ...


@dataclass
class FoundPromotion:
    """A promotion as history tells it: a commit with `Promoted-From` trailers."""

    commit_sha: str
    target_path: str
    target_kind: str
    created_by: str
    created_at: dt.datetime
    refs: list[tuple[Ref, str, str]] = field(default_factory=list)  # (ref, scope, date)
    undo_commit_sha: str = ""
    undone_by: str = ""
    undone_at: dt.datetime | None = None
