"""The last-change map saved for a restart: a restart reads back what was saved (any path
git can hold), an earlier format still loads, and a damaged file is no file (the map is then
read from history), never a wrong one or an error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memoryui.store import Actor, Store, lastmap

HEAD = "0123456789abcdef0123456789abcdef01234567"
ODD = ["agents/ops-bot/memory/MEMORY.md", "notes/with space.md", "notes/tab\there.md",
       "notes/new\nline.md", "notes/ünïcode-日本.md", "notes/bad-\udcff-byte.md",
       "notes/quote\"and\\back.md"]


class C:
    def __init__(self, oid: bytes, time: int) -> None:
        self.oid, self.time = oid, time

    @classmethod
    def make(cls, _path: str, oid: bytes, time: int) -> C:
        return cls(oid, time)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, C) and (self.oid, self.time) == (other.oid, other.time)


def test_saved_paths_of_every_kind_read_back_exactly(tmp_path: Path) -> None:
    last = {p: C(bytes([i]) * 20, 1_700_000_000 + i) for i, p in enumerate(ODD)}
    lastmap.save(tmp_path, HEAD, last)
    head, back = lastmap.load(tmp_path, C.make)
    assert head == HEAD and back == last
    assert list(tmp_path.iterdir()) == [tmp_path / lastmap.FILE]  # no temporary left


def test_the_earlier_json_format_still_loads_and_a_save_replaces_it(tmp_path: Path) -> None:
    sha = "ab" * 20
    (tmp_path / lastmap.OLD_FILE).write_text(json.dumps(
        {"head": HEAD, "paths": {"a.md": [sha, 5], "b.md": {"sha": sha, "time": 7}}}))
    head, back = lastmap.load(tmp_path, C.make)
    assert head == HEAD
    assert back == {"a.md": C(bytes.fromhex(sha), 5), "b.md": C(bytes.fromhex(sha), 7)}
    lastmap.save(tmp_path, HEAD, back)
    assert not (tmp_path / lastmap.OLD_FILE).exists()
    assert lastmap.load(tmp_path, C.make) == (HEAD, back)


@pytest.mark.parametrize("damage", [
    lambda b: b[: len(b) // 2],  # cut short (a copy stopped mid-way)
    lambda b: b[: b.rindex(b"\0", 0, len(b) - 1) + 1],  # ... at the end of a record
    lambda b: b.replace(b"memoryui lastchange 2", b"memoryui lastchange 9"),
    lambda b: b.replace(b" 1700000000 ", b" soon "),
    lambda b: b.replace(b"0101", b"zz01", 1),  # not hex
    lambda b: b"",
])
def test_a_damaged_file_is_no_file(tmp_path: Path, damage) -> None:
    lastmap.save(tmp_path, HEAD, {p: C(b"\x01" * 20, 1_700_000_000) for p in ODD})
    path = tmp_path / lastmap.FILE
    path.write_bytes(damage(path.read_bytes()))
    assert lastmap.load(tmp_path, C.make) is None


def test_a_restart_takes_last_changes_from_the_saved_map(tmp_path: Path) -> None:
    """Commit times, authors and actors after a restart equal those read from git."""
    store = Store(tmp_path / "ws")
    store.write("agents/ops-bot/memory/notes/with space.md", "x\n", actor=Actor.agent("ops-bot"),
                tool="note")
    store.write("agents/ops-bot/memory/MEMORY.md", "# M\n", actor=Actor.user("alice"),
                tool="ui")
    before = {p: (c.sha, c.time, c["actor"]) for p, c in store.last_changes().items()}
    store.tree_model._save(force=True)
    store.close()
    again = Store(tmp_path / "ws")
    assert again.tree_model._load_saved()
    assert {p: (c.sha, c.time, c["actor"]) for p, c in again.last_changes().items()} == before
    assert before["agents/ops-bot/memory/notes/with space.md"][2] == "agent:ops-bot"
