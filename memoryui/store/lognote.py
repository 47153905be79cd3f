"""What an entry's writer knows about a log without reading it: the note on its path lock.

An agent's entry goes at the end of its daily log. Checking the log before it (it ends in
a newline, it is UTF-8) and naming the new version cost a read and a hash of the whole
log at every entry: late in a busy day most of an append's CPU, and growing. The writer
of an entry leaves a note in the file of the path lock it holds (`ProcessLock.note`): the
log's path, the stat of the file right after the entry (device, inode, size, mtime,
ctime) and the CRC-32 of its whole content. The next writer of that log, in any process,
takes the same lock; when the file's stat is still the noted one, nothing has touched it
since, so the checks hold and the new version's CRC-32 is chained from the noted one
without reading a byte. Anything else (another path under the same lock, a change from
outside memoryui, a rewrite, a torn note) is a miss, and the writer reads the log once.

The stat is git's own test for "unchanged" (its index trusts it the same way); a change
that kept size, inode and both stamps would still be caught when the entry is committed,
which checks the version it rebuilds against the CRC-32 (`GitRepo._rebuild`).
"""

from __future__ import annotations

import hashlib
import os
import struct
import zlib

from .locks import ProcessLock

_NOTE = struct.Struct("<8sQQQqqI")  # path digest, dev, ino, size, mtime_ns, ctime_ns, crc
SIZE = _NOTE.size + 4  # and the CRC-32 of those, so a torn note is a miss


def _digest(path: str) -> bytes:
    return hashlib.blake2b(path.encode("utf-8", "surrogateescape"), digest_size=8).digest()


def _stamp(st: os.stat_result) -> tuple[int, int, int, int, int]:
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


def read(lock: ProcessLock, path: str, st: os.stat_result) -> int | None:
    """The CRC-32 of the log's content, if the lock's note is about this path and the file
    still has the noted stat (the caller holds the lock); None otherwise."""
    try:
        raw = lock.note(SIZE)
    except OSError:
        return None
    if len(raw) != SIZE or zlib.crc32(raw[:-4]) != int.from_bytes(raw[-4:], "little"):
        return None
    digest, *stamp, crc = _NOTE.unpack(raw[:-4])
    if digest != _digest(path) or tuple(stamp) != _stamp(st):
        return None
    return crc


def write(lock: ProcessLock, path: str, st: os.stat_result, crc: int) -> None:
    """Note a log that ends in a newline and is UTF-8, as `st` and `crc` say it is now."""
    body = _NOTE.pack(_digest(path), *_stamp(st), crc)
    try:
        lock.set_note(body + zlib.crc32(body).to_bytes(4, "little"))
    except OSError:
        pass  # no note: the next entry reads the log


def crc_of_log(fd: int, size: int) -> int | None:
    """The CRC-32 of a log read through `fd`, if it is one an entry may go after in place
    (not empty, ends in a newline, UTF-8); None otherwise."""
    if size <= 0:
        return None
    data = os.pread(fd, size, 0)
    while len(data) < size:
        more = os.pread(fd, size - len(data), len(data))
        if not more:
            return None
        data += more
    if not data.endswith(b"\n"):
        return None
    if not data.isascii():
        try:
            data.decode()
        except UnicodeDecodeError:
            return None
    return zlib.crc32(data)
