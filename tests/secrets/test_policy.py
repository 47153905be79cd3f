"""The policy in the store's one write primitive: agents blocked, people flagged, the record."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from memoryui.secrets import scan_text
from memoryui.secrets.detector import digest
from memoryui.store import Actor, Store
from memoryui.store.errors import SecretFound
from tests.secrets.samples import AWS, GITHUB, STRIPE

PATH = "agents/ops-bot/memory/daily/2026-11-20.md"


def commits(store: Store) -> int:
    store.flush()
    out = subprocess.run(["git", "rev-list", "--count", "--all"], cwd=store.root,
                         capture_output=True, text=True)
    return int(out.stdout.strip() or 0) if out.returncode == 0 else 0


def saved_record(store: Store) -> dict:
    return json.loads((store.root / ".git" / "memoryui" / "secrets.json").read_text())


def test_an_agent_write_adding_a_secret_is_refused_and_nothing_is_written(store: Store) -> None:
    agent = Actor.agent("ops-bot")
    store.append(PATH, "- deployed\n", actor=agent, tool="t")
    before = commits(store)
    with pytest.raises(SecretFound) as err:
        store.append(PATH, f"- ok\n- the key is {AWS}\n", actor=agent, tool="t")
    assert str(err.value) == ("Refused: the text contains a secret (AWS Access Key) on line 3. "
                              "Nothing was written.")
    assert err.value.status == 422 and AWS not in str(err.value)
    assert store.read(PATH) == "- deployed\n"
    assert commits(store) == before and not store.git.has_uncommitted()
    assert store.secrets.flagged() == {}


def test_a_person_write_is_committed_and_flagged_until_the_secret_goes(store: Store) -> None:
    alice = Actor.user("alice")
    store.write(PATH, f"# notes\n\ntoken {GITHUB}\n", actor=alice, tool="editor")
    assert [(f.kind, f.line) for f in store.secrets.findings(PATH)] == [("GitHub Token", 3)]
    assert list(saved_record(store)) == [PATH]
    assert GITHUB not in (store.root / ".git" / "memoryui" / "secrets.json").read_text()
    # An agent appending clean text under an old secret is not blocked; the line stays right.
    store.write(PATH, f"# notes, longer\n\nmore\ntoken {GITHUB}\n", actor=alice, tool="editor")
    store.append(PATH, "- clean line\n", actor=Actor.agent("ops-bot"), tool="t")
    assert [(f.kind, f.line) for f in store.secrets.findings(PATH)] == [("GitHub Token", 4)]
    store.write(PATH, "# notes\n", actor=alice, tool="editor")
    assert store.secrets.flagged() == {} and saved_record(store) == {}


def test_rename_and_delete_keep_the_record_right(store: Store) -> None:
    alice = Actor.user("alice")
    store.write("notes/a.md", f"{STRIPE}\n", actor=alice, tool="editor")
    store.rename("notes/a.md", "notes/b.md", actor=alice, tool="editor")
    assert list(store.secrets.flagged()) == ["notes/b.md"]
    store.delete("notes/b.md", actor=alice, tool="editor")
    assert store.secrets.flagged() == {}


@pytest.mark.parametrize("mode,refused,flagged", [("flag", False, True), ("off", False, False)])
def test_the_mode_setting(tmp_path: Path, mode: str, refused: bool, flagged: bool) -> None:
    store = Store(tmp_path / "ws", secrets=mode)
    try:
        store.write(PATH, f"{AWS}\n", actor=Actor.agent("ops-bot"), tool="t")
        assert store.read(PATH) == f"{AWS}\n"
        assert bool(store.secrets.flagged()) is flagged
    finally:
        store.close()


def test_an_unknown_mode_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        Store(tmp_path / "ws", secrets="maybe")


def test_allow_list_and_pragma_let_a_write_through(store: Store) -> None:
    agent = Actor.agent("ops-bot")
    store.append(PATH, f"example {AWS}  # memoryui: allow-secret\n", actor=agent, tool="t")
    with pytest.raises(SecretFound):
        store.append(PATH, f"{STRIPE}\n", actor=agent, tool="t")
    store.secrets.allow.add(digest(STRIPE), kind="Stripe Access Key", by="admin")
    store.append(PATH, f"{STRIPE}\n", actor=agent, tool="t")
    assert store.secrets.flagged() == {}
    allow_file = store.root / ".git" / "memoryui" / "secrets-allow.json"
    assert STRIPE not in allow_file.read_text()


def test_pending_commits_flag_files_agents_wrote_natively(store: Store) -> None:
    store.write(PATH, "- start\n", actor=Actor.agent("ops-bot"), tool="t")
    (store.root / PATH).write_text(f"- start\n- aws {AWS}\n")
    done = store.commit_pending()
    assert done and store.read(PATH).endswith(f"{AWS}\n")  # on disk already: committed
    assert [(f.kind, f.line) for f in store.secrets.findings(PATH)] == [("AWS Access Key", 2)]


def test_the_record_survives_a_new_store_and_rebuilds(tmp_path: Path) -> None:
    store = Store(tmp_path / "ws")
    store.write(PATH, f"{AWS}\n", actor=Actor.user("alice"), tool="editor")
    store.close()
    again = Store(tmp_path / "ws")
    try:
        assert list(again.secrets.flagged()) == [PATH]
        (again.root / ".git" / "memoryui" / "secrets.json").unlink()
        assert again.secrets.rebuild((p, again.read(p) or "") for p in again.list_files()) == 1
        assert list(again.secrets.flagged()) == [PATH]
    finally:
        again.close()


def test_appends_to_a_flagged_file_keep_its_findings_and_add_new_ones(store: Store) -> None:
    bob = Actor.user("bob")
    store.append(PATH, f"# log\n- {AWS}\n- half", actor=bob, tool="t")
    store.append(PATH, f" line {GITHUB}\n- more\n", actor=bob, tool="t")
    store.append(PATH, f"- {STRIPE}\n", actor=bob, tool="t")
    assert [(f.kind, f.line) for f in store.secrets.findings(PATH)] == [
        ("AWS Access Key", 2), ("GitHub Token", 3), ("Stripe Access Key", 5)]
    assert store.secrets.findings(PATH) == scan_text(store.read(PATH))


def test_two_stores_on_one_workspace_share_the_record(tmp_path: Path) -> None:
    """Like two server workers: each sees what the other flagged and never drops it."""
    one, two = Store(tmp_path / "ws"), Store(tmp_path / "ws")
    try:
        assert one.secrets.flagged() == {} and two.secrets.flagged() == {}
        one.write("notes/a.md", f"{AWS}\n", actor=Actor.user("alice"), tool="editor")
        two.write("notes/b.md", f"{STRIPE}\n", actor=Actor.user("bob"), tool="editor")
        assert sorted(one.secrets.flagged()) == sorted(two.secrets.flagged()) == [
            "notes/a.md", "notes/b.md"]
    finally:
        one.close()
        two.close()
