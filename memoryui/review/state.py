"""The review ledger in the database (Django ORM): the package's only Django module.

`OrmLedger` implements `memoryui.review.ledger.Ledger` over `memoryui.models.ReviewState`
(one row per decided entry, unique per path and entry id) and `Promotion`; `OrmVerdicts`
implements `memoryui.review.contradictions.Verdicts` over `ContradictionVerdict`. Views and
the `rebuild_review` command pass `LEDGER` (and `VERDICTS`) to the plain functions of the
package.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from typing import cast

from django.db import IntegrityError, transaction
from django.utils import timezone

from memoryui.models import ContradictionVerdict, Promotion, ReviewState

from .actions import describe
from .contradictions import Pair
from .entries import Item
from .errors import AlreadyReviewed
from .ledger import Decision, FoundPromotion, PromotionRecord, Ref

# What `reserve` hands to `release` / `record_promotion`: each row and its prior decision
# (None: the row was created by the reservation).
Reserved = list[tuple[ReviewState, tuple | None]]


class OrmLedger:
    """Review decisions and promotions as rows; each method is one transaction."""

    def decisions_between(self, since: str, until: str) -> dict[Ref, Decision]:
        rows = ReviewState.objects.filter(date__gte=since, date__lte=until
                                          ).select_related("promotion")
        return {(r.path, r.entry_id): r for r in rows}

    def decisions_of(self, refs: Iterable[Ref]) -> dict[Ref, Decision]:
        refs = set(refs)
        if not refs:
            return {}
        rows = ReviewState.objects.filter(
            path__in={p for p, _i in refs}, entry_id__in={i for _p, i in refs}
        ).select_related("promotion")
        return {(r.path, r.entry_id): r for r in rows if (r.path, r.entry_id) in refs}

    def reserve(self, items: Sequence[Item], user: str) -> Reserved:
        now = timezone.now()
        done: Reserved = []
        try:
            with transaction.atomic():
                rows = {(r.path, r.entry_id): r for r in ReviewState.objects.select_for_update()
                        .filter(path__in={it.path for it in items},
                                entry_id__in={it.entry.id for it in items})
                        .select_related("promotion")}
                for it in items:
                    row = rows.get(it.ref)
                    if row is not None and row.status == ReviewState.PROMOTED:
                        raise AlreadyReviewed(describe(self, row) + "; undo that promotion "
                                              "first")
                for it in items:
                    row = rows.get(it.ref)
                    if row is None:
                        row = ReviewState.objects.create(
                            path=it.path, entry_id=it.entry.id, scope=it.scope, date=it.date,
                            status=ReviewState.PROMOTED, reviewed_by=user, reviewed_at=now)
                        done.append((row, None))
                    else:  # a dismissed entry can still be promoted
                        prior = (row.status, row.reviewed_by, row.reviewed_at)
                        row.status, row.reviewed_by, row.reviewed_at = \
                            ReviewState.PROMOTED, user, now
                        row.save(update_fields=["status", "reviewed_by", "reviewed_at"])
                        done.append((row, prior))
        except IntegrityError:
            raise AlreadyReviewed("someone else is reviewing these entries right now; reload "
                                  "the queue") from None
        return done

    def release(self, token: object) -> None:
        reserved = cast(Reserved, token)  # what `reserve` returned
        with transaction.atomic():
            for row, prior in reserved:
                if prior is None:
                    row.delete()
                else:
                    row.status, row.reviewed_by, row.reviewed_at = prior
                    row.save(update_fields=["status", "reviewed_by", "reviewed_at"])

    def record_promotion(self, token: object, *, target_path: str, target_kind: str,
                         commit_sha: str, user: str) -> Promotion:
        reserved = cast(Reserved, token)  # what `reserve` returned
        with transaction.atomic():
            promo = Promotion.objects.create(target_path=target_path, target_kind=target_kind,
                                             commit_sha=commit_sha, created_by=user)
            ReviewState.objects.filter(pk__in=[row.pk for row, _p in reserved]).update(
                promotion=promo)
        return promo

    def dismiss(self, items: Sequence[Item], user: str) -> None:
        now = timezone.now()
        try:
            with transaction.atomic():
                for it in items:
                    if it.state is None:
                        it.state = ReviewState.objects.create(
                            path=it.path, entry_id=it.entry.id, scope=it.scope, date=it.date,
                            status=ReviewState.DISMISSED, reviewed_by=user, reviewed_at=now)
        except IntegrityError:
            raise AlreadyReviewed("someone else reviewed these entries just now; reload the "
                                  "queue") from None

    def reopen(self, items: Sequence[Item]) -> None:
        ReviewState.objects.filter(
            pk__in=[it.state.pk for it in items if isinstance(it.state, ReviewState)]).delete()

    def promotion(self, pk: int) -> Promotion | None:
        return Promotion.objects.filter(pk=pk).first()

    def recent(self, n: int) -> list[PromotionRecord]:
        return list(Promotion.objects.all()[:n])

    def mark_undone(self, promo: object, *, undo_commit_sha: str, user: str) -> None:
        assert isinstance(promo, Promotion)
        with transaction.atomic():
            ReviewState.objects.filter(promotion=promo).delete()
            promo.undo_commit_sha = undo_commit_sha
            promo.undone_by = user
            promo.undone_at = timezone.now()
            promo.save(update_fields=["undo_commit_sha", "undone_by", "undone_at"])

    def local_time(self, when: dt.datetime) -> str:
        return timezone.localtime(when).strftime("%Y-%m-%d %H:%M")

    def replace_promotions(self, found: list[FoundPromotion], *, dry_run: bool) -> int:
        with transaction.atomic():
            if not dry_run:
                ReviewState.objects.filter(status=ReviewState.PROMOTED).delete()
                Promotion.objects.all().delete()
                for f in found:
                    promo = Promotion.objects.create(
                        target_path=f.target_path, target_kind=f.target_kind,
                        commit_sha=f.commit_sha, created_by=f.created_by,
                        created_at=f.created_at, undo_commit_sha=f.undo_commit_sha,
                        undone_by=f.undone_by, undone_at=f.undone_at)
                    for (path, entry_id), scope, date in f.refs:
                        ReviewState.objects.filter(path=path, entry_id=entry_id).delete()
                        ReviewState.objects.create(
                            path=path, entry_id=entry_id, scope=scope, date=date,
                            status=ReviewState.PROMOTED, promotion=promo,
                            reviewed_by=f.created_by, reviewed_at=f.created_at)
            return ReviewState.objects.filter(status=ReviewState.DISMISSED).count()


class OrmVerdicts:
    """The lead's choices about contradiction candidates, one row per pair
    (`memoryui.review.contradictions.Verdicts`)."""

    def decided(self, pairs: Iterable[Pair]) -> dict[Pair, str]:
        pairs = set(pairs)
        if not pairs:
            return {}
        rows = ContradictionVerdict.objects.filter(
            entry_id__in={p[1] for p in pairs}, digest__in={p[3] for p in pairs})
        found = {(r.entry_path, r.entry_id, r.target_path, r.digest): r.choice for r in rows}
        return {p: c for p, c in found.items() if p in pairs}

    def record(self, pair: Pair, choice: str, user: str, commit_sha: str = "") -> None:
        path, entry_id, target, digest = pair
        ContradictionVerdict.objects.update_or_create(
            entry_path=path, entry_id=entry_id, target_path=target, digest=digest,
            defaults={"choice": choice, "decided_by": user, "commit_sha": commit_sha,
                      "decided_at": timezone.now()})


LEDGER = OrmLedger()
VERDICTS = OrmVerdicts()
