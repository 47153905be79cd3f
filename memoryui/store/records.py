"""What a commit is made of: the journal's records, how a tick groups them into commits and
words their messages, and the trees those commits get (plain data and libgit2 objects, no
working tree, no locks: `gitrepo` does the I/O around them)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

import pygit2

from .actors import Actor
from .writes import TRAILER as WRITE
from .writes import trailer_value


@dataclass
class Record:
    """One journaled write: enough to commit it later under its own author.

    `data`, when set, is the file's new content and `blob` only its id: the blob is made
    when the record is committed, and only for versions a commit keeps (the last of a path
    in each commit). Making a loose object per write (a temporary file created and renamed
    in .git/objects) costs a third of an agent's write's CPU. With `base` set, `data` is only
    what the write appended to the path's previous version of `base` bytes (a daily log's
    entry): the whole content in the journal at every append would cost each write the size
    of its file twice more (120 KB a `remember` late in a busy day), and the commit tick
    would parse megabytes of JSON (see `_rebuild`).

    An entry appended without reading its log (`appending.append_entry`) has no blob id
    (`blob` is ""): `crc` is the CRC-32 of the whole new version, chained from the
    previous entry's, and with `base` it is what the commit checks the version it
    rebuilds (or finds in the file) against before making its blob. Hashing the whole log
    for a blob id at every entry was most of an append's CPU late in a busy day (0.2 ms
    of SHA-1 at 400 KB, and growing).
    """

    path: str
    blob: str | None  # None = deleted
    actor: Actor
    tool: str
    message: str | None = None
    trailers: list[tuple[str, str]] = field(default_factory=list)
    time: float = 0.0
    id: str = ""
    data: bytes | None = field(default=None, repr=False)
    base: int | None = None  # set: `data` was appended to a previous version this long
    crc: int | None = None  # set (with blob ""): the new version's CRC-32, its blob made later

    def to_json(self) -> bytes:
        d = {"id": self.id, "path": self.path, "blob": self.blob, "actor": self.actor.as_dict(),
             "tool": self.tool, "message": self.message, "trailers": self.trailers,
             "time": self.time}
        if self.data is not None:
            d["data"] = self.data.decode("utf-8", "surrogateescape")
            if self.base is not None:
                d["base"] = self.base
            if self.crc is not None:
                d["crc"] = self.crc
        return (json.dumps(d, ensure_ascii=False) + "\n").encode("utf-8", "surrogateescape")

    @classmethod
    def from_json(cls, line: bytes) -> Record:
        d = json.loads(line.decode("utf-8", "surrogateescape"))
        data = d.get("data")
        return cls(d["path"], d["blob"], Actor.from_dict(d["actor"]), d["tool"], d["message"],
                   [tuple(t) for t in d["trailers"]], d["time"], d["id"],
                   None if data is None else data.encode("utf-8", "surrogateescape"),
                   d.get("base"), d.get("crc"))

    @property
    def group_key(self) -> tuple:
        return (self.actor, self.message, tuple(self.trailers))


def group_records(records: list[Record]) -> list[list[Record]]:
    """One commit per author and message; exact order when authors share a path."""
    owners: dict[str, set] = {}
    for r in records:
        owners.setdefault(r.path, set()).add(r.group_key)
    if any(len(k) > 1 for k in owners.values()):
        runs: list[list[Record]] = []
        for r in records:
            if runs and runs[-1][0].group_key == r.group_key:
                runs[-1].append(r)
            else:
                runs.append([r])
        return runs
    groups: dict[tuple, list[Record]] = {}
    for r in records:
        groups.setdefault(r.group_key, []).append(r)
    return list(groups.values())


OWN_TRAILER_LINE = re.compile(r"^(?=Memoryui-[A-Za-z-]*:)", re.M | re.I)


def _printable(path: str) -> str:
    if path.isprintable():
        return path
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii")
                   for c in path)


def commit_message(group: list[Record]) -> str:
    first = group[0]
    # A natively made name may hold newlines: shown escaped, it can never add a line
    # (a fake trailer such as `Memoryui-Actor: user:admin`) to the message.
    paths = list(dict.fromkeys(_printable(r.path) for r in group))
    tools = list(dict.fromkeys(r.tool for r in group))
    if first.message:
        subject, _, body = first.message.strip().partition("\n")
        # A given message cannot pose as memoryui's own trailers (`--grep` filters on them).
        subject, body = (OWN_TRAILER_LINE.sub(" ", t) for t in (subject, body.strip()))
    else:
        subject = f"{', '.join(tools)}: {paths[0]}"
        if len(paths) > 1:
            subject += f" (+{len(paths) - 1} more)"
        body = ""
    if len(paths) > 1:
        listing = "\n".join(f"- {p}" for p in paths)
        body = f"{body}\n\n{listing}" if body else listing
    trailers = [("Memoryui-Actor", first.actor.trailer)]
    trailers += [("Memoryui-Tool", t) for t in tools]
    for r in group:
        for key, value in r.trailers:
            if (key, value) not in trailers:
                trailers.append((key, value))
    if len(group) > 1:  # grouped writes stay told apart (writes.py)
        trailers += [(WRITE, trailer_value(r.time, r.tool, _printable(r.path))) for r in group]
    text = subject + "\n\n"
    if body:
        text += body + "\n\n"
    text += "\n".join(f"{k}: {v}" for k, v in trailers) + "\n"
    return text


def apply_changes(repo: pygit2.Repository, tree: pygit2.Tree | None,
                  changes: Mapping[str, str | tuple[str, int] | None]) -> pygit2.Oid:
    """A new tree: `tree` with files set or removed (None). A value is a blob sha (a regular
    file) or (blob sha, file mode); the commit engine and sync build trees with it."""
    oid = _apply(repo, tree, changes)
    return oid if oid is not None else repo.TreeBuilder().write()


def _apply(repo: pygit2.Repository, tree: pygit2.Tree | None,
           changes: Mapping[str, str | tuple[str, int] | None]) -> pygit2.Oid | None:
    tb = repo.TreeBuilder(tree) if tree is not None else repo.TreeBuilder()
    nested: dict[str, dict[str, str | tuple[str, int] | None]] = {}
    for path, item in changes.items():
        head, _, rest = path.partition("/")
        if rest:
            nested.setdefault(head, {})[rest] = item
        elif item is None:
            if tb.get(head) is not None:
                tb.remove(head)
        else:
            blob, mode = (item, pygit2.enums.FileMode.BLOB) if isinstance(item, str) else item
            tb.insert(head, pygit2.Oid(hex=blob), mode)
    for name, sub in nested.items():
        existing = tb.get(name)
        found = repo[existing.id] if existing is not None and existing.type_str == "tree" \
            else None
        new = _apply(repo, found if isinstance(found, pygit2.Tree) else None, sub)
        if new is None:
            if existing is not None:
                tb.remove(name)
        else:
            tb.insert(name, new, pygit2.enums.FileMode.TREE)
    if len(tb) == 0:
        return None
    return tb.write()
