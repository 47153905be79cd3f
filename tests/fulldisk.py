"""A disk that fills up, for tests of what memoryui answers on ENOSPC.

A small tmpfs mounted for the test gives the real thing (libgit2 and git fail too). Where
nothing can be mounted (no root, no mount rights), the fallback makes the file system
full at the os level for Python's own writes under the folder: `os.write`/`os.pwrite`
raise ENOSPC and `os.statvfs` reports no free space.
"""

from __future__ import annotations

import errno
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest


class Disk:
    def __init__(self, path: Path, mounted: bool, monkeypatch: pytest.MonkeyPatch) -> None:
        self.path, self.mounted, self._mp = path, mounted, monkeypatch
        self._filler: Path | None = None
        self._full = False
        if not mounted:
            self._patch()

    def fill(self) -> None:
        """Take every free byte (a filler file), or turn on the injected ENOSPC."""
        if not self.mounted:
            self._full = True
            return
        self._filler = self.path / "filler"
        fd = os.open(self._filler, os.O_WRONLY | os.O_CREAT, 0o600)
        chunk = b"\0" * 65536
        try:
            while True:
                try:
                    os.write(fd, chunk)
                except OSError as exc:
                    assert exc.errno == errno.ENOSPC
                    if len(chunk) == 1:
                        return
                    chunk = chunk[: len(chunk) // 2]
        finally:
            os.close(fd)

    def free(self) -> None:
        self._full = False
        if self._filler is not None:
            self._filler.unlink()
            self._filler = None

    def _under(self, fd: int) -> bool:
        try:
            return os.readlink(f"/proc/self/fd/{fd}").startswith(str(self.path))
        except OSError:
            return False

    def _patch(self) -> None:
        write, pwrite, statvfs = os.write, os.pwrite, os.statvfs

        def full_write(fd: int, data: object) -> int:
            if self._full and self._under(fd):
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            return write(fd, data)

        def full_pwrite(fd: int, data: object, offset: int) -> int:
            if self._full and self._under(fd):
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            return pwrite(fd, data, offset)

        def full_statvfs(path: object) -> os.statvfs_result:
            st = statvfs(path)
            if self._full and str(Path(os.fsdecode(path)).resolve()).startswith(str(self.path)):
                return os.statvfs_result((st.f_bsize, st.f_frsize, st.f_blocks, 0, 0,
                                          st.f_files, st.f_ffree, st.f_favail, st.f_flag,
                                          st.f_namemax))
            return st

        self._mp.setattr(os, "write", full_write)
        self._mp.setattr(os, "pwrite", full_pwrite)
        self._mp.setattr(os, "statvfs", full_statvfs)


@pytest.fixture
def small_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Disk]:
    """An 8 MiB tmpfs mounted for this test, or the injected fallback where mounting is
    not allowed."""
    mount = tmp_path / "disk"
    mount.mkdir()
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(mount)],
                          capture_output=True, text=True)
    disk = Disk(mount.resolve(), proc.returncode == 0, monkeypatch)
    try:
        yield disk
    finally:
        if disk.mounted:
            subprocess.run(["umount", "-l", str(mount)], check=False)
