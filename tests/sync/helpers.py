"""Writing memory the way the frameworks do, from memoryui's side."""

from __future__ import annotations

import datetime as dt

from memoryui.store import Actor, Kind, Store

DAY = dt.date(2026, 2, 12)


def at(hh: int, mm: int, day: dt.date = DAY) -> dt.datetime:
    return dt.datetime.combine(day, dt.time(hh, mm))


def remember(store: Store, scope: str, text: str, when: dt.datetime) -> str:
    """What tools/duragent.py's remember writes: the header once, `\\n## HH:MM\\n\\n{text}\\n`."""
    day = when.date().isoformat()
    path = store.path_for(Kind.DAILY, scope, day)
    store.append(path, f"\n## {when:%H:%M}\n\n{text}\n", header=f"# {day}\n",
                 actor=Actor.agent(scope), tool="remember")
    return path


def reflect(store: Store, scope: str, text: str) -> str:
    path = store.path_for(Kind.MEMORY, scope)
    store.write(path, text, actor=Actor.agent(scope), tool="reflect")
    return path
