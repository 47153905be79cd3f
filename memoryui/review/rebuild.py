"""Review state from history: promotions come back from their `Promoted-From` trailers.

History is read newest first, so an undo commit (`Reverts: <sha>`) is seen before the
promotion it reverts; a reverted promotion comes back as undone and leaves its entries
undecided. Dismissals come back from the empty commits that record them (`Dismissed:` /
`Reopened:` trailers, newest decision per entry); ones the ledger has that history does
not (made before dismissals were committed) are kept.

Plain Python: no Django (the ledger writes what this module finds).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from memoryui.store import Kind, Store, StoreError, promote
from memoryui.store.commitinfo import CommitInfo

from .errors import ReviewError
from .ledger import DISMISSED, FoundPromotion, Ledger
from .queue import resolve

# The tools that write decision commits: a trailer elsewhere is not trusted as one.
_DECISIONS = {promote.DISMISSED: "review-dismiss", promote.REOPENED: "review-reopen"}


@dataclass
class RebuildStats:
    promotions: int = 0
    undone: int = 0
    entries: int = 0
    dismissals_kept: int = 0
    dismissals_restored: int = 0
    skipped: list[str] = field(default_factory=list)
    # entry key -> (trailer, user) of the newest dismissal or reopening in history
    decisions: dict[str, tuple[str, str]] = field(default_factory=dict)


def _who(actor: str) -> str:
    """`user:alice` -> `alice` (the name the ledger records)."""
    return actor.split(":", 1)[-1]


def scan(store: Store) -> tuple[list[FoundPromotion], RebuildStats]:
    """Every promotion in history, newest first, with the entries still promoted by it.

    An entry promoted twice counts for the newest promotion that was not undone.
    """
    reverts: dict[str, CommitInfo] = {}
    commits = []
    decisions: dict[str, tuple[str, str]] = {}
    for c in store.log(limit=10**9, with_files=True):
        for name, tool in _DECISIONS.items():
            if tool in c.tools and c.actor_kind == "user" and not c.files:
                for key in c.trailers.get(name, []):
                    decisions.setdefault(key, (name, _who(c.actor)))
        for value in c.trailers.get(promote.REVERTS, []):
            full = value if len(value) == 40 else (store.resolve(value) or value)
            reverts.setdefault(full, c)
        sources = c.trailers.get(promote.PROMOTED_FROM)
        if sources:
            commits.append((c, sources, reverts.get(c.sha)))
    stats = RebuildStats(decisions=decisions)
    found: list[FoundPromotion] = []
    seen: set[tuple[str, str]] = set()
    for c, sources, reverted in commits:
        target = next((f.path for f in c.files if f.status != "D"), None)
        if target is None:
            stats.skipped.append(f"{c.short}: no target file")
            continue
        addr = store.address_of(target)
        promo = FoundPromotion(c.sha, target, addr.kind.value if addr else "", _who(c.actor),
                               c.when)
        found.append(promo)
        stats.promotions += 1
        if reverted is not None:
            stats.undone += 1
            promo.undo_commit_sha = reverted.sha
            promo.undone_by = _who(reverted.actor)
            promo.undone_at = reverted.when
            continue
        for value in sources:
            ref = promote.parse_promoted_from(value)
            src = store.address_of(ref[0]) if ref else None
            if ref is None or src is None or src.kind != Kind.DAILY:
                stats.skipped.append(f"{c.short}: {value!r} is not a daily entry")
                continue
            if ref in seen:
                continue
            seen.add(ref)
            stats.entries += 1
            promo.refs.append((ref, src.scope or "", src.name or ""))
    return found, stats


def rebuild(store: Store, ledger: Ledger, *, dry_run: bool = False) -> RebuildStats:
    """Replace the ledger's promotions with what history says, then restore dismissals
    (and their reopenings) from history; a dry run only counts."""
    found, stats = scan(store)
    stats.dismissals_kept = ledger.replace_promotions(found, dry_run=dry_run)
    keys = list(stats.decisions)
    items = []
    for i in range(0, len(keys), 200):  # resolve takes a bounded number of keys
        try:
            items += resolve(store, ledger, keys[i:i + 200], missing_ok=True)
        except (StoreError, ReviewError) as exc:
            stats.skipped.append(f"dismissals: {exc}")
    by_user: dict[str, list] = {}
    back = []
    for it in items:
        trailer, user = stats.decisions[it.key]
        if trailer == promote.DISMISSED and it.state is None:
            by_user.setdefault(user, []).append(it)
        elif trailer == promote.REOPENED and it.state is not None \
                and it.state.status == DISMISSED:
            back.append(it)
    stats.dismissals_restored = sum(len(v) for v in by_user.values())
    if not dry_run:
        for user, group in by_user.items():
            ledger.dismiss(group, user)
        if back:
            ledger.reopen(back)
    return stats
