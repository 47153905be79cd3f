"""memoryui's threads carry their names to the OS, so `top -H` and `ps -L` tell the commit
tick, the search indexer and a request apart (the request pool: tests/test_handler.py) (to the OS every Python 3.11 thread is
"python" otherwise)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from memoryui.store import Actor, Store
from memoryui.store.committer import Committer
from memoryui.store.threadnames import named

TASKS = Path("/proc/self/task")
pytestmark = pytest.mark.skipif(not TASKS.exists(), reason="needs Linux's /proc")


def os_name(native_id: int) -> str:
    return (TASKS / str(native_id) / "comm").read_text().strip()


def test_a_thread_started_through_named_has_its_name_in_the_os() -> None:
    seen: list[str] = []
    thread = threading.Thread(
        target=named(lambda: seen.append(os_name(threading.get_native_id()))),
        name="memoryui-search-catch-up")
    thread.start()
    thread.join()
    assert seen == ["search-catch-up"]  # 15 bytes, the most the kernel keeps
    assert thread.name == "memoryui-search-catch-up"  # Python's name is left as it was


def test_the_commit_tick_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[str] = []
    ticked = threading.Event()
    original = Committer._tick

    def tick(self: Committer) -> dict[str, str]:
        seen.append(os_name(threading.get_native_id()))
        ticked.set()
        return original(self)
    monkeypatch.setattr(Committer, "_tick", tick)
    store = Store(tmp_path / "ws", commit_delay=0.01)
    try:
        store.append("agents/a/memory/daily/2026-11-27.md", "- hi\n", header="# d\n",
                     actor=Actor.agent("a"), tool="remember")
        assert ticked.wait(120)
    finally:
        store.close()
    assert seen[0] == "committer"
