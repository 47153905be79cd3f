"""Reading the file catalogue: the queries the pages make (`catalogue.py` keeps it)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from memoryui.store import walk

from .catalogue_db import CatalogueDb

_FIELDS = "path, scope, kind, name, size, mtime_ns, sha, author, actor, time, subject"
_LAST = ("sha", "author", "actor", "time", "subject")


@dataclass(slots=True)
class Entry:
    """One file as the catalogue has it."""

    path: str
    scope: str  # its scope ("" for shared files and files outside the layout)
    kind: str  # its layout kind ("" for a file the layout does not know)
    name: str  # its name in the layout (a topic, a date), "" when none
    size: int
    mtime: float
    last: dict | None  # its last commit: sha, author, actor, time, subject (None: none yet)

    @classmethod
    def of(cls, row: tuple) -> Entry:
        path, scope, kind, name, size, mtime_ns, sha, author, actor, when, subject = row
        last = {"sha": sha, "author": author, "actor": actor, "time": int(when),
                "subject": subject} if sha else None
        return cls(path, scope, kind, name, int(size), mtime_ns / 1e9, last)


def stat_entry(root: Path, path: str) -> walk.Entry | None:
    """The walker's view of one path: a regular file with one name, reached without a
    symbolic link and with no hidden name on the way; None otherwise."""
    if not path or any(walk.hidden(part) for part in path.split("/")):
        return None
    try:
        st = os.lstat(root / path)
    except (OSError, ValueError):
        return None
    if not walk.single(st) or walk.link_in_path(root, path) is not None:
        return None
    return walk.Entry(path, st.st_size, st.st_mtime)


def _by_path(e: Entry) -> str:
    return e.path


class CatalogueReads:
    """The catalogue's queries, over its rows and its row per scope."""

    db: CatalogueDb

    @property
    def _t(self) -> str:
        return self.db.files

    def _select(self, where: str = "", params: tuple = ()) -> list[Entry]:
        """Rows by path, in Python: Postgres would sort by its collation, SQLite by bytes."""
        sql = f"SELECT {_FIELDS} FROM {self._t}"
        if where:
            sql += f" WHERE {where}"
        return sorted((Entry.of(r) for r in self.db.read(sql, params)), key=_by_path)

    def entries(self) -> list[Entry]:
        """Every file, by path."""
        return self._select()

    def entry(self, path: str) -> Entry | None:
        found = self._select("path = ?", (path,))
        return found[0] if found else None

    def scope(self, scope: str) -> list[Entry]:
        """A scope's files, by path."""
        return self._select("scope = ?", (scope,))

    def shared(self, *, other: bool = True) -> list[Entry]:
        """Files outside every scope (world topics, global memory, skills, directives), by
        path; `other`: with the files the layout does not know."""
        return self._select("scope = ''" if other else "scope = '' AND kind <> ''")

    def of_kind(self, kind: str, *, first: str = "", last: str = "") -> list[Entry]:
        """Files of one kind, by path; `first`..`last` bound their names (dates)."""
        where, params = "kind = ?", [kind]
        if first:
            where += " AND name >= ?"
            params.append(first)
        if last:
            where += " AND name <= ?"
            params.append(last)
        return self._select(where, tuple(params))

    def scope_totals(self) -> dict[str, tuple[int, int, int, int]]:
        """scope -> (files, bytes, daily logs, notes)."""
        return {s: (int(n), int(b), int(d), int(k)) for s, n, b, d, k in self.db.read(
            f"SELECT scope, files, size, daily, notes FROM {self.db.scopes}")}

    def scope_files(self, kinds: tuple[str, ...]) -> list[Entry]:
        """Every scope's files of these kinds (their MEMORY.md, scratchpads)."""
        marks = ", ".join("?" * len(kinds))
        return self._select(f"kind IN ({marks}) AND scope <> ''", kinds)

    def newest_daily(self) -> list[Entry]:
        """Each scope's newest daily log."""
        return self._select(f"path IN (SELECT newest_daily FROM {self.db.scopes})")

    def scope_lasts(self) -> dict[str, dict]:
        """scope -> the newest last commit of its files (a tie in time: the greater sha)."""
        return {s: dict(zip(_LAST, (sha, author, actor, int(when), subject), strict=True))
                for s, sha, author, actor, when, subject in self.db.read(
                    f"SELECT scope, {', '.join(_LAST)} FROM {self.db.scopes} WHERE sha <> ''")}

    def commit_times(self) -> dict[str, int]:
        """path -> the time of its last commit, for every file committed."""
        return dict(self.db.read(f"SELECT path, time FROM {self._t} WHERE sha <> ''"))

    def generations(self, *scopes: str) -> tuple[str, ...]:
        """The current generation of each scope named ("": the shared files; "*": the
        whole catalogue): a value is drawn anew by every transaction that changes one of
        its rows ("" when none was drawn yet)."""
        keys = [f"gen:{s}" for s in scopes]
        marks = ", ".join("?" * len(keys))
        found = dict(self.db.read(f"SELECT key, value FROM {self.db.meta} WHERE key IN "
                                  f"({marks})", keys))
        return tuple(found.get(k, "") for k in keys)

    def count(self) -> int:
        return int(self.db.read(f"SELECT count(*) FROM {self._t}")[0][0])

    def differing(self, root: Path, paths: list[str]) -> list[str]:
        """Those of `paths` whose row (or its absence) does not match the disk now."""
        rows: dict[str, tuple[int, int]] = {}
        for i in range(0, len(paths), 500):
            part = paths[i:i + 500]
            marks = ", ".join("?" * len(part))
            rows.update((p, (int(s), int(m))) for p, s, m in self.db.read(
                f"SELECT path, size, mtime_ns FROM {self._t} WHERE path IN ({marks})",
                tuple(part)))
        out = []
        for p in paths:
            e = stat_entry(root, p)
            if rows.get(p) != (None if e is None else (e.size, int(e.mtime * 1_000_000_000))):
                out.append(p)
        return out
