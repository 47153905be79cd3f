"""A file's change and its journal record made to agree: a write that is refused leaves
the old file and no record.

The journal record is what becomes the commit; the file is what agents read. A file that
changed while its record could not be written (a full disk) would be answered as a failure,
yet read by agents and later committed under the wrong author as a pending change. So the
record is written while the change can still be taken back: between a new version's
synced temporary file and its rename, before a removed file's hidden name is let go, and
right after an in-place append, which is cut off again when the record fails.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from .appends import append_in_place
from .errors import InvalidName
from .files import atomic_write, temp_name, write_all


def append_line(path: Path, line: bytes, *, sync: bool = False) -> int:
    """Append one record (the caller holds the journal's lock), whole or not at all: a
    write cut short by a full disk is taken off again, so the next record never lands
    glued to a torn one (the committer would skip both). `sync`: on disk before return.
    Returns the file's size before the record (0: it is the first)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        size = os.fstat(fd).st_size
        try:
            write_all(fd, line)
            if sync:
                os.fsync(fd)
        except BaseException:
            os.ftruncate(fd, size)
            raise
    finally:
        os.close(fd)
    return size


def appended(fd: int, size: int, journal: Callable[[], None]) -> None:
    """Journal an append just made through `fd` to a file of `size` bytes; when that fails
    the file is cut back to `size` (the caller still holds the file's lock)."""
    try:
        journal()
    except BaseException:
        os.ftruncate(fd, size)
        raise


def write(full: Path, path: str, data: bytes, old: bytes | None,
          journal: Callable[[], None]) -> int | None:
    """`data` becomes the file at `full` (workspace path `path`, whose content was `old`)
    with `journal` run where a failure still leaves `old`. An append to `old` goes in
    place when it can: its descriptor is returned, for `appends.sync_appended` once the
    caller lets go of its locks; else the file is replaced whole (None: the caller syncs
    the folder)."""
    if old and data.startswith(old):
        fd = append_in_place(full, len(old), data[len(old):])
        if fd is not None:
            try:
                appended(fd, len(old), journal)
            except BaseException:
                os.close(fd)
                raise
            return fd
    try:
        # the file is synced inside, its folder by the caller, unlocked
        atomic_write(full, data, sync_folder=False, before_replace=journal)
    except (NotADirectoryError, FileExistsError):
        raise InvalidName(f"invalid path {path!r}: a file stands where a folder is "
                          "needed") from None
    return None


def remove(full: Path, journal: Callable[[], None]) -> None:
    """Remove the file at `full`, journaled: it is first renamed to a hidden temporary name
    (git ignores it), and renamed back when `journal` fails."""
    aside = full.with_name(temp_name(full.name))
    os.rename(full, aside)
    try:
        journal()
    except BaseException:
        os.rename(aside, full)
        raise
    aside.unlink()
