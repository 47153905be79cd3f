"""Dates read from input (query strings, forms, API arguments): one parser, bounded.

A date is `YYYY-MM-DD` from DATE_MIN to DATE_MAX: the bound keeps every computation on it
finite (the week before it, the day after, a month's end) and catches typos such as 0001 or
9999, which would otherwise overflow into a 500. Dates handed to git as history filters keep
to GIT_MIN..GIT_MAX: git silently ignores dates outside those years, dropping the filter.
"""

from __future__ import annotations

import datetime as dt
import re

from .errors import InvalidName

DATE_MIN = dt.date(1900, 1, 1)
DATE_MAX = dt.date(2999, 12, 31)
GIT_MIN = dt.date(1970, 1, 1)
GIT_MAX = dt.date(2099, 12, 31)
_DATE_RE = re.compile(r"\d{4}-\d{2}-\d{2}")


class BadDate(InvalidName):
    """Not a date, or one out of range (400); the message is a sentence for a person."""


def in_range(day: dt.date, *, earliest: dt.date = DATE_MIN,
             latest: dt.date = DATE_MAX) -> dt.date:
    if not earliest <= day <= latest:
        raise BadDate(f"{day.isoformat()} is out of range: use a date from "
                      f"{earliest.isoformat()} to {latest.isoformat()}.")
    return day


def parse_date(value: object, *, earliest: dt.date = DATE_MIN,
               latest: dt.date = DATE_MAX) -> dt.date:
    """The date `value` names, or BadDate saying why not."""
    if isinstance(value, dt.datetime):
        return in_range(value.date(), earliest=earliest, latest=latest)
    if isinstance(value, dt.date):
        return in_range(value, earliest=earliest, latest=latest)
    text = str(value).strip()
    try:
        if not _DATE_RE.fullmatch(text):
            raise ValueError(text)
        day = dt.date.fromisoformat(text)
    except ValueError:
        raise BadDate(f"{text[:40]!r} is not a date: use YYYY-MM-DD, like 2026-02-12."
                      ) from None
    return in_range(day, earliest=earliest, latest=latest)
