"""Where the queue's entries come from: the daily logs of every scope in a date range.

Folders come from the layout (`Layout.folder`) and files from the store's walker, so the
walker's rules hold here too: a symbolic link (a log, or a folder on the way to it) is never
followed, and hidden names are skipped. Plain Python: no Django.
"""

from __future__ import annotations

import datetime as dt
import os
import posixpath
from typing import NamedTuple

from memoryui.store import Kind, Store, walk

from .entries import Stamp

ENUMERATE_DAYS = 62  # up to this range, stat candidate names instead of listing folders


class DailyFile(NamedTuple):
    path: str
    scope: str
    date: str
    stamp: Stamp  # (mtime, size): the parse cache's key


def daily_files(store: Store, since: dt.date, until: dt.date) -> list[DailyFile]:
    """Every daily log dated since..until, found per scope folder.

    A short range looks up just the candidate names: in the tree model once it holds the
    listing, else with an lstat each (50 scopes x 7 days = 350 calls; never a listing of
    the whole tree for this); a long one walks each scope's daily folder once and keeps
    what the layout calls a daily log.
    """
    if not store.layout.supports(Kind.DAILY):
        return []
    days = (until - since).days + 1
    lo, hi = since.isoformat(), until.isoformat()
    root = store.root
    out: list[DailyFile] = []
    # Once the tree model holds the listing (the overview made it), a candidate is one dict
    # lookup rather than an lstat and a link check per folder (500 scopes: 0.3 s a request).
    tree = store.tree() if store.tree_model.listed and days <= ENUMERATE_DAYS else None
    for scope in store.scopes():
        folder = store.layout.folder(Kind.DAILY, scope)
        if not folder or (tree is None and walk.link_in_path(root, folder) is not None):
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
            if tree is not None:  # the tree model's files: regular, reached without links
                info = tree.get(path)
                if info is not None:
                    out.append(DailyFile(path, scope, date, (info.mtime, info.size)))
                continue
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
