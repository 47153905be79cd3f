"""The last-change map saved for a restart: path -> (sha, time) as of a head.

One record a path, `<sha hex> <time> <path>` ended by NUL (a path may hold any byte but
NUL), after a line `memoryui lastchange 2 <head> <records>` (a file cut short between two
records is told from a whole one by the count). Read in one pass over the bytes: the
JSON it replaces (`lastchange.json`, still read when no newer file exists) went through
600k temporary objects at 200k paths, whose freed space stayed in the worker. Written in
chunks for the same reason. Nothing in the file is trusted beyond its shape: a file that
does not parse is no file (the map is computed from history instead).
"""

from __future__ import annotations

import binascii
import json
import os
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Protocol, TypeVar

FILE, OLD_FILE = "lastchange.nul", "lastchange.json"
MAGIC = b"memoryui lastchange 2 "
CHUNK = 1 << 16  # bytes gathered before each write

T = TypeVar("T")


class Change(Protocol):
    oid: bytes
    time: int


def save(state_dir: Path, head: str, last: Mapping[str, Change]) -> None:
    """Write the map atomically (a full disk keeps the old file: OSError to the caller)."""
    target = state_dir / FILE
    tmp = target.with_suffix(f".{threading.get_ident()}.tmp")
    try:
        with open(tmp, "wb") as fh:
            fh.write(MAGIC + b"%s %d\n" % (head.encode("ascii"), len(last)))
            buf: list[bytes] = []
            size = 0
            for path, c in last.items():
                rec = b"%s %d %s\0" % (binascii.hexlify(c.oid), c.time,
                                        path.encode("utf-8", "surrogateescape"))
                buf.append(rec)
                size += len(rec)
                if size >= CHUNK:
                    fh.write(b"".join(buf))
                    buf, size = [], 0
            fh.write(b"".join(buf))
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    (state_dir / OLD_FILE).unlink(missing_ok=True)


def load(state_dir: Path, make: Callable[[str, bytes, int], T]
         ) -> tuple[str, dict[str, T]] | None:
    """(head, path -> make(path, oid, time)) as saved, or None when there is none readable."""
    try:
        data = (state_dir / FILE).read_bytes()
    except FileNotFoundError:
        return _load_json(state_dir, make)
    except OSError:
        return None
    try:
        return _parse(data, make)
    except (ValueError, IndexError, UnicodeDecodeError):
        return None


def _parse(data: bytes, make: Callable[[str, bytes, int], T]) -> tuple[str, dict[str, T]]:
    nl = data.index(b"\n")
    if not data.startswith(MAGIC):
        raise ValueError("not a saved last-change map")
    head, count = data[len(MAGIC):nl].decode("ascii").split(" ")
    binascii.unhexlify(head)  # a sha, or ValueError
    out: dict[str, T] = {}
    unhex, find, end = binascii.unhexlify, data.index, len(data)
    pos = nl + 1
    while pos < end:
        sp1 = find(b" ", pos)
        sp2 = find(b" ", sp1 + 1)
        z = find(b"\0", sp2 + 1)
        path = data[sp2 + 1:z].decode("utf-8", "surrogateescape")
        out[path] = make(path, unhex(data[pos:sp1]), int(data[sp1 + 1:sp2]))
        pos = z + 1
    if len(out) != int(count):
        raise ValueError("a saved last-change map cut short")
    return head, out


def _load_json(state_dir: Path, make: Callable[[str, bytes, int], T]
               ) -> tuple[str, dict[str, T]] | None:
    """The earlier formats: {"head", "paths": {path: [sha, time]}} (or whole dicts)."""
    try:
        saved = json.loads((state_dir / OLD_FILE).read_text())
        paths, head = saved["paths"], str(saved["head"])
        out = {}
        for path, v in paths.items():
            if isinstance(v, list):
                out[path] = make(path, binascii.unhexlify(v[0]), int(v[1]))
            elif isinstance(v, dict):
                out[path] = make(path, binascii.unhexlify(v.get("sha", "")),
                                 int(v.get("time", 0) or 0))
        return head, out
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
