"""The editor on a full disk: a save answers what happened (507, nothing changed), and a
save that went through is never answered as a failure when only its commit must wait."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from memoryui.store import Actor, DiskFull, Store, version_of
from tests import fulldisk
from tests.fulldisk import Disk

small_disk = fulldisk.small_disk  # the fixture

MEM = "agents/ops-bot/memory/MEMORY.md"
OLD = "# ops-bot\n\n- deploys on Tuesday\n"


@pytest.fixture
def ws(small_disk: Disk, settings) -> Iterator[Store]:
    from memoryui.workspace import get_store, reset_store

    settings.MEMORYUI_WORKSPACE = small_disk.path / "ws"
    reset_store()
    store = get_store()
    store.write(MEM, OLD, actor=Actor.agent("ops-bot"), tool="reflect")
    yield store
    reset_store()


def test_an_emptying_save_on_a_full_disk_is_507_and_changes_nothing(
        ws: Store, small_disk: Disk, client_as) -> None:
    curator = client_as("curator")
    small_disk.fill()
    r = curator.post("/edit/" + MEM, {"text": "", "base": version_of(OLD), "message": ""})
    assert r.status_code == 507
    page = r.content.decode()
    assert "The disk is full" in page and "Nothing was changed." in page
    assert (ws.root / MEM).read_bytes() == OLD.encode()
    small_disk.free()
    ws.flush()
    assert [c.actor for c in ws.log(MEM)] == ["agent:ops-bot"] and ws.pending() == []


def test_a_save_whose_commit_must_wait_says_saved(
        ws: Store, client_as, monkeypatch: pytest.MonkeyPatch) -> None:
    """The file is written and journaled; the disk filled only before its commit: the
    person reads "Saved" (true), and the commit is made once there is room."""
    curator = client_as("curator")

    def full(*_a: object, **_k: object) -> dict:
        raise DiskFull()

    monkeypatch.setattr(ws, "flush", full)
    monkeypatch.setattr(ws.committer, "safe_flush", lambda: {})
    r = curator.post("/edit/" + MEM, {"text": "new\n", "base": version_of(OLD),
                                      "message": ""}, follow=True)
    assert r.status_code == 200
    assert f"Saved {MEM}." in r.content.decode()
    assert (ws.root / MEM).read_bytes() == b"new\n"
    monkeypatch.undo()
    ws.flush()
    assert [c.actor for c in ws.log(MEM)] == ["user:curator", "agent:ops-bot"]
