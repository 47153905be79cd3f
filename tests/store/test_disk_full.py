"""A full disk is a clear DiskFull (507 "the workspace disk is full"), the old file stays
intact, and writes work again once there is room. Real ENOSPC from a tiny tmpfs."""

from __future__ import annotations

import errno
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from memoryui.store import Actor, DiskFull, Store

MEM = "agents/ops-bot/memory/MEMORY.md"
DAILY = "agents/ops-bot/memory/daily/2026-03-01.md"
BOT = Actor.agent("ops-bot")


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 2 MiB tmpfs mounted for this test (needs root; skipped with the reason otherwise)."""
    mount = tmp_path / "disk"
    mount.mkdir()
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.skip("cannot mount a small tmpfs to produce a real ENOSPC "
                    f"(needs root and mount rights): {proc.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def fill(disk: Path) -> Path:
    """Take every free byte with a filler file; returns it so a test can free the space."""
    filler = disk / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        chunk = b"\0" * 65536
        while True:
            try:
                os.write(fd, chunk)
            except OSError as exc:
                assert exc.errno == errno.ENOSPC
                if len(chunk) == 1:
                    return filler
                chunk = chunk[: len(chunk) // 2]
    finally:
        os.close(fd)


def test_disk_full_is_a_clear_error_and_the_old_file_stays(small_disk: Path) -> None:
    store = Store(small_disk / "ws")
    try:
        store.write(MEM, "# Memory\n\n- the old fact\n", actor=BOT, tool="reflect")
        store.append(DAILY, "\n## 09:00\n\nfirst\n", header="# 2026-03-01\n", actor=BOT,
                     tool="remember")
        head = store.head()
        filler = fill(small_disk)

        big = "# Memory\n\n" + "".join(f"- fact {i}: {os.urandom(8).hex()}\n"
                                        for i in range(3000))
        with pytest.raises(DiskFull) as info:
            store.write(MEM, big, actor=BOT, tool="reflect")
        assert str(info.value) == "the workspace disk is full"
        assert (info.value.status, info.value.code) == (507, "insufficient_storage")
        with pytest.raises(DiskFull):
            store.append(DAILY, "\n## 10:00\n\n" + big, actor=BOT, tool="remember")

        assert store.read(MEM) == "# Memory\n\n- the old fact\n"
        assert store.read(DAILY) == "# 2026-03-01\n\n## 09:00\n\nfirst\n"
        leftovers = [p.name for p in (store.root / MEM).parent.rglob(".*")]
        assert leftovers == []  # no temp file left behind
        assert store.head() == head

        filler.unlink()
        store.write(MEM, big, actor=BOT, tool="reflect")
        assert store.read(MEM) == big
        assert store.head() != head and store.pending() == []
    finally:
        store.close()
