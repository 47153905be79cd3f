"""What the review domain needs to remember, and nothing about how: the `Ledger` protocol.

Decisions about entries (promoted, dismissed) and promotions live in a database; the
domain only talks to this protocol, so every other module of the package stays plain
Python. `memoryui.review.state.OrmLedger` is the one implementation (Django's ORM); views
and commands pass it in. The shapes it hands back are in `decisions`. A promotion is also
written to git (`Promoted-From` trailers), so the ledger's promotions can always be rebuilt
from history (`rebuild`).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from typing import Protocol

from .decisions import DISMISSED, PROMOTED, Decision, FoundPromotion, PromotionRecord, Ref
from .entries import Item

__all__ = ["DISMISSED", "PROMOTED", "Decision", "FoundPromotion", "Ledger", "PromotionRecord",
           "Ref"]

class Ledger(Protocol):
    """The review state store. Every method is one transaction."""

    def decisions_between(self, since: str, until: str) -> dict[Ref, Decision]:
        """Decisions about entries of daily logs dated since..until (ISO dates)."""
        ...

    def decisions_of(self, refs: Iterable[Ref]) -> dict[Ref, Decision]: ...

    def reserve(self, items: Sequence[Item], user: str) -> object:
        """Mark entries promoted before the write, so two leads cannot promote one entry
        twice; raises AlreadyReviewed. Returns a token for `release` / `record_promotion`."""
        ...

    def release(self, token: object) -> None:
        """The write failed: put the reserved entries back as they were."""
        ...

    def record_promotion(self, token: object, *, target_path: str, target_kind: str,
                         commit_sha: str, user: str) -> PromotionRecord: ...

    def dismiss(self, items: Sequence[Item], user: str) -> None:
        """Record a dismissal for each entry not decided yet; sets `item.state`."""
        ...

    def reopen(self, items: Sequence[Item]) -> None:
        """Forget the decisions about these entries (they are back in the queue)."""
        ...

    def promotion(self, pk: int) -> PromotionRecord | None: ...

    def recent(self, n: int) -> list[PromotionRecord]: ...

    def mark_undone(self, promo: PromotionRecord, *, undo_commit_sha: str, user: str) -> None:
        """The promotion was reverted: its entries are undecided again."""
        ...

    def local_time(self, when: dt.datetime) -> str:
        """`YYYY-MM-DD HH:MM` in the site's time zone (messages for a lead)."""
        ...

    def replace_promotions(self, found: list[FoundPromotion], *, dry_run: bool) -> int:
        """Replace every promotion and promoted entry with `found`; returns how many
        dismissals were kept (they are not in history)."""
        ...
