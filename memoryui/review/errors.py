"""Refusals of the review domain, as store errors so every caller maps them to a 4xx.

Plain Python: no Django.
"""

from __future__ import annotations

from memoryui.store.errors import Conflicting, StoreError


class ReviewError(StoreError):
    """Bad review input: a clear 400 with a message for the lead."""


class AlreadyReviewed(Conflicting, ReviewError):
    """Someone already decided about an entry (or is deciding right now)."""


class OverBudget(ReviewError):
    """The promotion would push the target past its framework budget, unconfirmed."""

    code = "over_budget"


class UndoConflict(Conflicting, ReviewError):
    """The promoted lines were edited since, so the promotion cannot be reverted by itself."""
