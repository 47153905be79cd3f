"""Look-alike names: memoryui never creates a name that only differs from an existing one
in letter case or Unicode form.

`é.md` in NFC and in NFD, or `memory.md` beside `MEMORY.md`, are two files to Linux and
one to macOS and Windows, where a clone of the workspace then loses one of them. Every
write that creates a file (tools of each dialect, the files API, the UI's new file,
rename and promotion, a revert bringing a file back) asks `check_new`; writing to the
exact existing name stays allowed. The key (`names.lookalike_key`) is the one rule.
"""

from __future__ import annotations

import os
from pathlib import Path

from . import names, walk
from .errors import InvalidName


def existing_lookalike(root: Path | str, path: str, *, ignore: str | None = None
                       ) -> str | None:
    """The existing path (file or folder) that a new `path` would look like, or None.

    Only the first component of `path` that does not exist is compared (nothing exists
    below it), with its folder's entries: one listing per new file. `ignore`: a path
    (and what is below it) that does not count, the source of a rename.
    """
    parts = path.split("/")
    for i, part in enumerate(parts):
        folder = os.path.join(root, *parts[:i])
        if os.path.lexists(os.path.join(folder, part)):
            continue
        try:
            with os.scandir(folder) as it:
                entries = sorted(e.name for e in it if not walk.hidden(e.name))
        except (FileNotFoundError, NotADirectoryError):
            return None
        if part in entries:  # made meanwhile by another writer: the name itself
            continue
        key = names.lookalike_key(part)
        for name in entries:
            found = "/".join([*parts[:i], name])
            if names.lookalike_key(name) == key and not _under(found, ignore):
                return found
        return None
    return None


def check_new(root: Path | str, path: str, *, created: bool = True,
              ignore: str | None = None) -> str:
    """`path` as a name memoryui writes (`names.validate_relpath(write=True)`) and, when
    the write creates it, not a look-alike of an existing name (InvalidName, a 400,
    naming the existing one)."""
    names.validate_relpath(path, write=True)
    found = existing_lookalike(root, path, ignore=ignore) if created else None
    if found is not None:
        raise InvalidName(f"{path} looks like the existing {found}: names that differ only "
                          "in letter case or Unicode form are one file on macOS and Windows; "
                          f"use {found} or choose another name")
    return path


def _under(path: str, prefix: str | None) -> bool:
    return prefix is not None and (path == prefix or path.startswith(prefix + "/"))
