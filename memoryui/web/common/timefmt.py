"""The one way the UI prints a time: relative ("3 hours ago") with the date past a month.

Used by the `ago` template filter (`{% load memoryui_browse %}`) and by anything that must
print the same text outside a template.
"""

from __future__ import annotations

import datetime as dt

from django.utils import timezone


def as_datetime(value: object) -> dt.datetime | None:
    """An aware datetime from a datetime (naive = UTC) or a Unix time; None otherwise."""
    if isinstance(value, dt.datetime):
        return value if timezone.is_aware(value) else value.replace(tzinfo=dt.UTC)
    if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
        return dt.datetime.fromtimestamp(value, tz=dt.UTC)
    return None


def ago(value: object, now: dt.datetime | None = None) -> str:
    """"just now", "5 minutes ago", "3 hours ago", "yesterday", "12 days ago", then
    "on 2026-01-05". Clock skew of up to a minute still reads "just now"."""
    when = as_datetime(value)
    if when is None:
        return ""
    seconds = ((now or timezone.now()) - when).total_seconds()
    if seconds < 0:
        return "in the future" if seconds < -60 else "just now"
    if seconds < 60:
        return "just now"
    for limit, size, unit in ((3600, 60, "minute"), (86400, 3600, "hour"),
                              (86400 * 30, 86400, "day")):
        if seconds < limit:
            n = int(seconds // size)
            if unit == "day" and n == 1:
                return "yesterday"
            return f"{n} {unit}{'s' if n != 1 else ''} ago"
    return f"on {when:%Y-%m-%d}"


def isotime(value: object) -> str:
    """ISO 8601, for `<time datetime=...>`."""
    when = as_datetime(value)
    return when.isoformat() if when else ""


def fulltime(value: object) -> str:
    """The exact time, for a `title` next to a relative one."""
    when = as_datetime(value)
    return f"{when:%Y-%m-%d %H:%M:%S} UTC" if when else ""
