"""False positives: a pragma on the line, or the admin's list of allowed values.

The list holds sha256 digests of allowed secret values (never the values), kept in
`.git/memoryui/secrets-allow.json`: per workspace, beside the record, never pushed.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
from pathlib import Path

ALLOW_PRAGMAS = ("memoryui: allow-secret", "pragma: allowlist secret")


def line_allowed(line: str) -> bool:
    """A line that carries `# memoryui: allow-secret` or detect-secrets' own pragma."""
    low = line.lower()
    return any(p in low for p in ALLOW_PRAGMAS)


def write_json(path: Path, data: object) -> None:
    """Write JSON atomically (a temporary file renamed over the old one)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=1, sort_keys=True)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read_json(path: Path, default: object) -> object:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return default


class AllowList:
    """Digests of secret values an admin allowed, with who allowed them and a note."""

    def __init__(self, path: Path):
        self.path = path
        self._lock = threading.Lock()
        self._cache: tuple[float, dict[str, dict]] | None = None

    def entries(self) -> dict[str, dict]:
        try:
            mtime = self.path.stat().st_mtime_ns
        except OSError:
            return {}
        cached = self._cache
        if cached and cached[0] == mtime:
            return cached[1]
        data = read_json(self.path, {})
        entries = data if isinstance(data, dict) else {}
        self._cache = (mtime, entries)
        return entries

    def digests(self) -> set[str]:
        return set(self.entries())

    def add(self, digest: str, *, kind: str, by: str, path: str = "") -> None:
        with self._lock:
            entries = dict(self.entries())
            entries[digest] = {"kind": kind, "by": by, "path": path}
            write_json(self.path, entries)

    def remove(self, digest: str) -> None:
        with self._lock:
            entries = dict(self.entries())
            if entries.pop(digest, None) is not None:
                write_json(self.path, entries)
