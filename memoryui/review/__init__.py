"""Review and promotion: the queue of daily entries, and what a lead decides about each.

The files stay the source of truth. A promotion is one commit on the target carrying a
`Promoted-From: <path>#<entry-id>` trailer per entry, and a dismissal (or putting an entry
back) is an empty commit with `Dismissed:` / `Reopened:` trailers, so the review state in
the database can be rebuilt from history. Undo is a new commit with a `Reverts: <sha>`
trailer, never a rewrite.

One job per module; all plain Python except `state`:
- `entries`  entry keys, parsing daily logs (cached), `Item`
- `sources`  finding the daily logs of a date range (layout + the store's walker)
- `queue`    filters, the paged queue, entries behind keys, neighbours
- `targets`  where entries can go (MEMORY.md, global, world topic, skill)
- `drafts`   the editor's starting text and the budget before/after
- `actions`  promote, dismiss, put back, undo
- `rebuild`  review state from `Promoted-From` / `Reverts` trailers
- `similar`  near-duplicate groups and "already known" (by wording)
- `meaning`  duplicates by meaning, related memories (the embedding model)
- `cues`     the details two statements of a fact disagree on (number, date, name, negation)
- `contradictions`  candidates on cards and file pages, and the lead's three choices
- `ledger`   the `Ledger` protocol: what the domain asks of the review state
- `state`    `OrmLedger`, the Django implementation (import it from views and commands)

Importing this package does not import Django.
"""

from .actions import (
    describe,
    dismiss,
    promote_entries,
    refuse_promoted,
    reopen,
    revert_text,
    undo,
)
from .drafts import (
    BudgetInfo,
    Draft,
    budget_info,
    default_message,
    fill_description,
    make_draft,
)
from .entries import Item, clear_caches, dom_id, entries_of, entry_key, items_of, parse_key
from .errors import AlreadyReviewed, OverBudget, ReviewError, UndoConflict
from .ledger import DISMISSED, PROMOTED, Decision, FoundPromotion, Ledger, PromotionRecord
from .queue import (
    DEFAULT_DAYS,
    MAX_ENTRIES,
    PAGE_SIZE,
    STATUSES,
    Filters,
    Queue,
    build_queue,
    neighbours,
    resolve,
    undecided_counts,
)
from .rebuild import RebuildStats, rebuild, scan
from .sources import DailyFile, daily_files
from .targets import TARGET_KINDS, Target, default_kind, existing_names, make_target, target_kinds

__all__ = [
    "DEFAULT_DAYS", "DISMISSED", "MAX_ENTRIES", "PAGE_SIZE", "PROMOTED", "STATUSES",
    "TARGET_KINDS", "AlreadyReviewed", "BudgetInfo", "DailyFile", "Decision", "Draft",
    "Filters", "FoundPromotion", "Item", "Ledger", "OverBudget", "PromotionRecord", "Queue",
    "RebuildStats", "ReviewError", "Target", "UndoConflict", "budget_info", "build_queue",
    "clear_caches", "daily_files", "default_kind", "default_message",
    "describe", "dismiss", "dom_id", "entries_of", "entry_key", "existing_names",
    "fill_description",
    "items_of", "make_draft", "make_target", "neighbours", "parse_key", "promote_entries",
    "rebuild", "refuse_promoted", "reopen", "resolve", "revert_text", "scan",
    "target_kinds", "undecided_counts", "undo",
]
