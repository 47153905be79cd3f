"""The writes a grouped commit is made of.

The committer makes one commit per author and message per tick, so an agent's
`remember` and `reflect` within the commit delay share a commit ("remember, reflect:
..."). That commit carries one `Memoryui-Write: <time> <tool> <path>` trailer per write,
in the order they were made, so the history, the activity feed and the commit page can
still tell each write apart (an audit asks which tool wrote which file, and when).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from dataclasses import dataclass

TRAILER = "Memoryui-Write"
_VALUE = re.compile(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,6})?Z) (\S+) (.+)")


@dataclass(frozen=True)
class Write:
    """One write of a grouped commit."""

    when: dt.datetime  # UTC
    tool: str
    path: str


def trailer_value(time: float, tool: str, path: str) -> str:
    """`<UTC time to the millisecond> <tool> <path>`; `path` already printable (one line)."""
    when = dt.datetime.fromtimestamp(time, tz=dt.UTC)
    tool = re.sub(r"\s+", "_", tool) or "-"
    return f"{when:%Y-%m-%dT%H:%M:%S}.{when.microsecond // 1000:03d}Z {tool} {path}"


def writes_of(trailers: Mapping[str, list[str]]) -> list[Write]:
    """The writes listed in a commit's trailers (none for a commit of one write, whose
    subject and trailers say it all); a value not in the shape is left out."""
    out = []
    for value in trailers.get(TRAILER, ()):
        m = _VALUE.fullmatch(value)
        if m is None:
            continue
        when = dt.datetime.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S.%fZ" if "." in m.group(1)
                                    else "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=dt.UTC)
        out.append(Write(when, m.group(2), m.group(3)))
    return out
