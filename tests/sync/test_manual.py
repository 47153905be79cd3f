"""Manual publishing: fetched changes come in, local ones wait for a curator (Dagu's model)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from memoryui.store.sync import ConflictOpen
from tests.sync.conftest import ALICE
from tests.sync.helpers import DAY, at, reflect, remember
from tests.sync_fixtures import fsck_clean, git, is_ancestor, tip


def show(bare: Path, path: str) -> str | None:
    out = subprocess.run(["git", "show", f"main:{path}"], cwd=bare, capture_output=True,
                         text=True)
    return out.stdout if out.returncode == 0 else None


def states(syncer) -> dict[str, str]:
    return {f.path: f.state for f in syncer.file_states()}


def test_manual_mode_publishes_only_what_a_curator_chooses(instance, native, file_url,
                                                           bare) -> None:
    host = native(file_url)
    shared = host.reflect("# Memory\n\n- v1\n")
    old_note = "agents/native-bot/memory/notes/old.md"
    host.write(old_note, "an old note\n")
    host.commit()
    host.push()
    a = instance("a", file_url, push="manual")
    assert a.file_states() == []
    assert {f.path: f.state for f in a.file_states(include_synced=True)} == {
        shared: "synced", old_note: "synced"}

    reflect(a.store, "native-bot", "# Memory\n\n- v2 from memoryui\n")
    daily = remember(a.store, "ops", "an agent's entry", at(9, 0))
    a.store.delete(old_note, actor=ALICE, tool="delete")
    before = tip(bare)
    r = a.round(blocking=True)
    assert (r.error, r.pushed) == (None, False)
    assert tip(bare) == before  # nothing leaves without a curator
    assert states(a) == {shared: "modified", daily: "untracked", old_note: "missing"}
    st = a.status()
    assert (st.state, st.unpublished, st.push_mode) == ("ahead", 3, "manual")
    assert a.compare_texts(shared) == ("# Memory\n\n- v1\n", "# Memory\n\n- v2 from memoryui\n")

    # Fetched changes are still integrated.
    host.remember("host entry", at(9, 5))
    host_commit = host.commit()
    host.push()
    assert a.round(blocking=True).integrated == 1
    assert "host entry" in a.store.read(host.daily_path(DAY))

    r = a.publish([daily], actor=ALICE, message="publish the ops entry")
    assert (r.pushed, r.published, r.error) == (True, [daily], None)
    assert show(bare, daily) == a.store.read(daily)
    assert show(bare, shared) == "# Memory\n\n- v1\n"  # not chosen: not published
    published = tip(bare)
    assert git(bare, "log", "-1", "--format=%an|%s", published).strip() == \
        "alice|publish the ops entry"
    assert git(bare, "log", "-1", "--format=%P", published).split() == [host_commit]
    assert is_ancestor(a.store.root, published, a.store.head())  # history stays connected
    assert states(a) == {shared: "modified", old_note: "missing"}

    r = a.publish(None, actor=ALICE, message="publish the rest")
    assert sorted(r.published) == sorted([shared, old_note])
    assert show(bare, shared) == "# Memory\n\n- v2 from memoryui\n"
    assert show(bare, old_note) is None
    assert a.file_states() == []
    assert a.status().state == "synced"
    host.pull()
    assert host.read(daily) == a.store.read(daily)
    fsck_clean(bare)
    fsck_clean(a.store.root)


def test_discard_brings_files_back_to_the_remote_version(instance, native, file_url,
                                                         bare) -> None:
    host = native(file_url)
    mem = host.reflect("# Memory\n\n- the remote's text\n")
    host.commit()
    host.push()
    a = instance("a", file_url, push="manual")
    reflect(a.store, "native-bot", "# Memory\n\n- an agent's unreviewed claim\n")
    extra = "agents/native-bot/memory/notes/draft.md"
    a.store.write(extra, "draft\n", actor=ALICE, tool="edit")
    assert states(a) == {mem: "modified", extra: "untracked"}

    changed = a.discard([mem, extra], actor=ALICE)
    assert sorted(changed) == sorted([mem, extra])
    assert a.store.read(mem) == "# Memory\n\n- the remote's text\n"
    assert not a.store.exists(extra)
    assert a.file_states() == []
    last = git(a.store.root, "log", "-1", "--format=%an|%B", "--", mem)
    assert last.startswith("alice|") and "Memoryui-Tool: sync-discard" in last
    fsck_clean(a.store.root)


def test_a_conflicted_file_is_never_published(instance, native, file_url, bare) -> None:
    host = native(file_url)
    mem = host.reflect("# Memory\n\n- base\n")
    host.commit()
    host.push()
    a = instance("a", file_url, push="manual")
    host.reflect("# Memory\n\n- theirs\n")
    host.commit()
    host.push()
    reflect(a.store, "native-bot", "# Memory\n\n- ours\n")
    other = remember(a.store, "ops", "unrelated entry", at(10, 0))
    assert a.round(blocking=True).conflicts == [mem]
    assert states(a)[mem] == "conflict"
    with pytest.raises(ConflictOpen):
        a.publish([mem], actor=ALICE, message="force it")
    r = a.publish(None, actor=ALICE, message="everything that can go")
    assert r.published == [other]  # the rest still flows while the conflict is open
    assert show(bare, mem) == "# Memory\n\n- theirs\n"

    # Discarding a conflicted file resolves it with the remote's version.
    assert a.discard([mem], actor=ALICE) == [mem]
    assert a.store.read(mem) == "# Memory\n\n- theirs\n"
    assert a.status().conflicts == []
    assert a.file_states() == []
    fsck_clean(bare)
