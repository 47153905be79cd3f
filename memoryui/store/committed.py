"""Which commit each journaled write went into, for a write acknowledged before its commit.

A write deferred to the committer is answered with its journal record id; the commit that
takes it is made later, by whichever process ticks. Each commit batch notes `<record id>
<commit sha>` lines here (`.git/memoryui/committed`), so any process turns a record id
into its commit with one file read, without flushing or searching history. The file is
rotated at ROTATE_AT bytes, keeping one previous generation (about 50,000 writes each).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

NAME = "committed"
ROTATE_AT = 4 * 1024 * 1024
RECORD_ID = re.compile(r"[0-9a-f]{32}")  # what the journal names a record (uuid4 hex)
_SHA = re.compile(rb"[0-9a-f]{40}")


def note(state_dir: Path, done: Mapping[str, str]) -> None:
    """Note record id -> commit sha for a batch just committed (the caller holds the commit
    lock, so one process writes at a time). A failure only leaves those writes unnoted."""
    if not done:
        return
    path = state_dir / NAME
    lines = "".join(f"{rid} {sha}\n" for rid, sha in done.items()).encode()
    try:
        try:
            if path.stat().st_size >= ROTATE_AT:
                os.replace(path, state_dir / f"{NAME}.1")
        except FileNotFoundError:
            pass
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            os.write(fd, lines)
        finally:
            os.close(fd)
    except OSError:
        pass  # (a full disk: the commit stands; its link falls back to the file's history)


def find(state_dir: Path, record_id: str) -> str | None:
    """The commit noted for a record id, or None (not committed yet, or forgotten)."""
    if not RECORD_ID.fullmatch(record_id):
        return None
    key = record_id.encode() + b" "
    for name in (NAME, f"{NAME}.1"):
        try:
            data = (state_dir / name).read_bytes()
        except FileNotFoundError:
            continue
        at = data.rfind(key)
        if at >= 0:
            sha = data[at + len(key):at + len(key) + 40]
            if _SHA.fullmatch(sha):
                return sha.decode()
    return None
