"""Where the queue's entries come from: the daily logs of every scope in a date range.

They are one query over the file catalogue (`memoryui.search.catalogue`: kind and name
indexed), whose files are the walker's: a symbolic link (a log, or a folder on the way to
it) is never listed, and hidden names are skipped. While a large workspace is catalogued
for the first time, folders come from the layout (`Layout.folder`) and files from the
store's walker, with the same rules. Plain Python: no Django.
"""

from __future__ import annotations

import datetime as dt
import os
import posixpath
from typing import NamedTuple

from memoryui.search.catalogue import Catalogue
from memoryui.store import Kind, Store, walk

from .entries import Stamp

ENUMERATE_DAYS = 62  # up to this range, stat candidate names instead of listing folders


class DailyFile(NamedTuple):
    path: str
    scope: str
    date: str
    stamp: Stamp  # (mtime, size): the parse cache's key


def daily_files(store: Store, since: dt.date, until: dt.date) -> list[DailyFile]:
    """Every daily log dated since..until, by scope and date: asked of the catalogue, or
    while it is first filled, found per scope folder (`_listed`)."""
    if not store.layout.supports(Kind.DAILY):
        return []
    lo, hi = since.isoformat(), until.isoformat()
    cat = Catalogue.ready(store)
    if cat is None:
        return _listed(store, since, until)
    return sorted((DailyFile(e.path, e.scope, e.name, (e.mtime, e.size))
                   for e in cat.of_kind(Kind.DAILY.value, first=lo, last=hi) if e.scope),
                  key=lambda f: (f.scope, f.date))


def _listed(store: Store, since: dt.date, until: dt.date) -> list[DailyFile]:
    """The daily logs found per scope folder. A short range looks up just the candidate
    names, with an lstat each (50 scopes x 7 days = 350 calls; never a listing of the
    whole tree for this); a long one walks each scope's daily folder once and keeps what
    the layout calls a daily log."""
    days = (until - since).days + 1
    lo, hi = since.isoformat(), until.isoformat()
    root = store.root
    out: list[DailyFile] = []
    for scope in store.scopes():
        folder = store.layout.folder(Kind.DAILY, scope)
        if not folder or walk.link_in_path(root, folder) is not None:
            continue
        if days > ENUMERATE_DAYS:
            for e in walk.walk(root, folder, depth=2):
                addr = store.address_of(e.path)
                if (addr is not None and addr.kind == Kind.DAILY and addr.scope == scope
                        and addr.name and lo <= addr.name <= hi):
                    out.append(DailyFile(e.path, scope, addr.name, (e.mtime, e.size)))
            continue
        for i in range(days):
            date = (since + dt.timedelta(days=i)).isoformat()
            path = _daily_path(store, scope, date)
            if posixpath.dirname(path) != folder and walk.link_in_path(root, path):
                continue
            try:
                st = os.lstat(root / path)
            except OSError:
                continue
            if walk.single(st):  # a symbolic or hard link is not a log
                out.append(DailyFile(path, scope, date, (st.st_mtime, st.st_size)))
    return out


_paths: dict[tuple[str, str, str], str] = {}


def _daily_path(store: Store, scope: str, date: str) -> str:
    """`store.path_for` of a daily log, remembered (the same names every request)."""
    key = (store.layout.key, scope, date)
    path = _paths.get(key)
    if path is None:
        if len(_paths) > 100_000:
            _paths.clear()
        path = _paths[key] = store.path_for(Kind.DAILY, scope, date)
    return path
