"""Search filters (scope, kind, dates, a scope token's visibility), checked before any backend
sees them: a bad filter is a QueryError naming the field, never a 500.

Dates are the store's (`memoryui.store.dates`: `YYYY-MM-DD` between DATE_MIN and DATE_MAX),
which keeps every date computation (month ends, the SQLite index's date tokens) finite.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass, field

from memoryui.store import Kind
from memoryui.store.dates import DATE_MAX, DATE_MIN, BadDate  # noqa: F401 - the search's range
from memoryui.store.dates import parse_date as store_date

from .query import QueryError

KINDS = tuple(k.value for k in Kind)


def parse_date(value: str | dt.date, field: str = "date") -> dt.date:
    """A filter date; QueryError (with `field`) when it is not one or out of range."""
    try:
        return store_date(value)
    except BadDate as exc:
        raise QueryError(str(exc), field=field) from None


@dataclass(frozen=True)
class Filters:
    scope: list[str] = field(default_factory=list)
    kind: list[str] = field(default_factory=list)
    date_from: dt.date | None = None
    date_to: dt.date | None = None
    visible_to: str | None = None  # a scope token: its own files plus the shared ones


def _as_list(value: str | Sequence[str] | None) -> list[str]:
    if not value:
        return []
    return [value] if isinstance(value, str) else [v for v in value if v]


def check_filters(*, scope: str | Sequence[str] | None = None,
                  kind: str | Sequence[str] | None = None,
                  date_from: str | dt.date | None = None, date_to: str | dt.date | None = None,
                  visible_to: str | None = None) -> Filters:
    """Validated filters, or a QueryError saying which one is wrong."""
    kinds = _as_list(kind)
    for k in kinds:
        if k not in KINDS:
            raise QueryError(f"unknown kind {k!r}; use one of {', '.join(KINDS)}", field="kind")
    first = parse_date(date_from, "date_from") if date_from else None
    last = parse_date(date_to, "date_to") if date_to else None
    if first and last and first > last:
        raise QueryError(f"The start date {first} is after the end date {last}.",
                         field="date_from")
    return Filters(_as_list(scope), kinds, first, last, visible_to)


def date_terms(first: dt.date, last: dt.date) -> list[str]:
    """Tokens covering [first, last]: whole months as month tokens, the rest as days."""
    terms: list[str] = []
    day = first
    while day <= last:
        month_end = (day.replace(day=28) + dt.timedelta(days=4)).replace(day=1) - \
            dt.timedelta(days=1)
        if day.day == 1 and month_end <= last:
            terms.append(f"m{day:%Y%m}")
            day = month_end + dt.timedelta(days=1)
        else:
            terms.append(f"d{day:%Y%m%d}")
            day += dt.timedelta(days=1)
    return terms
