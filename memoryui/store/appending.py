"""An entry appended to a log at the cost of the entry, for the write primitive
(`Writing.update` with `entry`).

What a read-modify-write would do, without decoding, re-encoding, line-counting and
comparing the whole log (at 400 KB, two thirds of an append's CPU, and growing all day).
The log is not read while its lognote holds (else once, for its CRC-32, which the commit
checks the rebuilt version against). An entry that crosses a memory page goes in by a new
file with the log copied in the kernel (`append_by_copy`). Where the primitive must decide
(a new or empty file, a NUL, a secret, a non-UTF-8 log, a second name) nothing is written
and it reads the file instead, with the same result.
"""

from __future__ import annotations

import functools
import os
import zlib
from pathlib import Path

from memoryui.secrets import Guard

from . import journaled, lognote, names, walk
from .actors import Actor
from .appends import append_at, append_by_copy, crosses_page, sync_appended, sync_replaced
from .gitrepo import GitRepo
from .records import Record

MAX_FILE_BYTES = 4 * 1024 * 1024


def append_entry(root: Path, git: GitRepo, secrets: Guard, path: str, text: str, *,
                 actor: Actor, tool: str, message: str | None,
                 trailers: list[tuple[str, str]], when: float | None) -> tuple[Record, int] | None:
    """Append `text` to the log at `path`, journaled and synced: its record and the log's
    new length, or None with nothing written."""
    if not text or "\x00" in text or not secrets.clean_tail(text):
        return None
    try:
        tail = text.encode()
    except UnicodeEncodeError:  # a lone surrogate: the primitive says where
        return None
    names.validate_relpath(path, write=True)  # links: refused by open_append, and
    with git.write_lock.shared(), git.path_lock(path) as lock:  # then by the primitive
        opened = walk.open_append(root, path)
        if opened is None:
            return None
        fd: int | None
        fd, st = opened
        folder = None  # set when the entry went in by a new file (append_by_copy)
        try:
            size = st.st_size
            # The log as the last entry left it (lognote), else read once; a log that
            # is empty, has no final newline or is not UTF-8 is left to the primitive.
            crc = lognote.read(lock, path, st)
            if crc is None:
                crc = lognote.crc_of_log(fd, size)
            if crc is None or size + len(tail) > MAX_FILE_BYTES:
                _not_appended(fd)
                return None
            crc = zlib.crc32(tail, crc)
            rec = Record(path, "", actor, tool, message, trailers, time=when or 0.0,
                         data=tail, base=size, crc=crc)
            journal = functools.partial(git.record, rec)  # (journaled.py: why here)
            if append_at(fd, st, size, tail):
                journaled.appended(fd, size, journal)
            else:
                if not crosses_page(st, size, tail):
                    _not_appended(fd)
                    return None
                opened_folder = walk.open_folder(root, path)
                if opened_folder is None:
                    _not_appended(fd)
                    return None
                folder, name = opened_folder
                new = append_by_copy(folder, name, fd, st, tail, journal)
                os.close(fd)
                fd = new
                if fd is None:
                    _not_appended(folder)
                    return None
            if tail.endswith(b"\n"):
                lognote.write(lock, path, os.fstat(fd), crc)
        except BaseException:
            for open_fd in (fd, folder):
                if open_fd is not None:
                    os.close(open_fd)
            raise
    if folder is None:
        sync_appended(fd)
    else:
        sync_replaced(fd, folder)
    return rec, size + len(tail)


def _not_appended(fd: int) -> None:
    """Nothing written: the descriptor is closed and the primitive takes the write."""
    os.close(fd)
