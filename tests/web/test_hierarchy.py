"""The overview, the sidebar and scope pages are queries over the file catalogue: each write,
outside edit and commit made by hand shows at the next request, and what a catalogue kept
by changes shows equals what one filled afresh shows."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from memoryui.search.catalogue import Catalogue
from memoryui.search.catalogue_db import SqliteCatalogueDb
from memoryui.store import Actor, Store
from memoryui.web.hierarchy import build, scope_node, shared
from memoryui.web.hierarchy.model import Hierarchy

BOT = Actor.agent("ops-bot")


def summary(h: Hierarchy) -> dict:
    def items(lst):
        return [(i.path, i.size, i.last_raw["sha"] if i.last_raw else None) for i in lst]

    def item(i):
        return (i.path, i.size) if i else None

    return {
        "files": h.files, "size": h.size,
        "last": h.last_raw["sha"] if h.last_raw else None,
        "world": items(h.world), "skills": items(h.skills), "other": items(h.other),
        "directives": items(h.directives), "global": item(h.global_memory),
        "scopes": {name: (n.files, n.size, n.last_raw["sha"] if n.last_raw else None,
                          item(n.memory), item(n.newest_daily), n.daily_count, n.note_count)
                   for name, n in h.scopes.items()},
    }


def afresh(store: Store, tmp_path: Path) -> dict:
    """The overview from a catalogue filled from scratch."""
    kept = store.catalogue  # type: ignore[attr-defined]
    fresh = Catalogue(SqliteCatalogueDb(tmp_path / f"fresh-{len(os.listdir(tmp_path))}.sqlite3"))
    fresh.attach(store)
    fresh.ensure(background=False)
    try:
        return summary(build(store))
    finally:
        store.listeners.remove(fresh.changed)
        store.catalogue = kept  # type: ignore[attr-defined]
        fresh.close()


def test_the_kept_catalogue_equals_a_fresh_one_through_many_changes(store: Store,
                                                                    tmp_path: Path) -> None:
    store.write("agents/ops-bot/memory/MEMORY.md", "# M\n", actor=BOT, tool="reflect")
    store.write("memory/world/b.md", "# B\n", actor=Actor.user("alice"), tool="ui")
    first = summary(build(store))
    assert first["files"] == 2
    steps = [
        lambda: store.write("memory/world/a.md", "# A first\n", actor=BOT, tool="ui"),
        lambda: store.write("agents/ops-bot/memory/daily/2026-11-02.md", "- x\n", actor=BOT,
                            tool="remember"),
        lambda: store.write("agents/ops-bot/memory/daily/2026-11-01.md", "- y\n", actor=BOT,
                            tool="remember"),
        lambda: store.append("agents/ops-bot/memory/daily/2026-11-02.md", "- z\n", actor=BOT,
                             tool="remember"),
        lambda: store.write("agents/new-bot/memory/MEMORY.md", "# N\n",
                            actor=Actor.agent("new-bot"), tool="reflect"),
        lambda: store.write("memory/MEMORY.md", "# Global\n", actor=BOT, tool="ui"),
        lambda: store.rename("memory/world/b.md", "memory/world/c.md", actor=BOT, tool="ui"),
        lambda: store.delete("agents/new-bot/memory/MEMORY.md", actor=BOT, tool="ui"),
        lambda: store.delete("agents/ops-bot/memory/MEMORY.md", actor=BOT, tool="ui"),
    ]
    for step in steps:
        step()
        assert summary(build(store)) == afresh(store, tmp_path)
    last = build(store)
    assert "new-bot" not in last.scopes  # its folder is gone: so is the scope
    assert last.scopes["ops-bot"].newest_daily.name == "2026-11-02"


def test_native_edits_and_hand_commits_reach_the_overview(store: Store) -> None:
    store.write("agents/ops-bot/memory/MEMORY.md", "# M\n", actor=BOT, tool="reflect")
    build(store)
    (store.root / "memory/world").mkdir(parents=True)
    (store.root / "memory/world/native.md").write_text("# Native\n")
    env = {**os.environ, "GIT_AUTHOR_NAME": "Hand", "GIT_AUTHOR_EMAIL": "h@example.org",
           "GIT_COMMITTER_NAME": "Hand", "GIT_COMMITTER_EMAIL": "h@example.org"}
    subprocess.run(["git", "add", "-A"], cwd=store.root, check=True, env=env)
    subprocess.run(["git", "commit", "-qm", "by hand"], cwd=store.root, check=True, env=env)
    h = build(store)
    assert [i.path for i in h.world] == ["memory/world/native.md"]
    assert h.world[0].last.subject == "by hand"
    assert h.notice == ""


def test_the_sidebar_shows_each_change_to_the_shared_files_and_scopes(store: Store) -> None:
    store.write("agents/ops-bot/memory/MEMORY.md", "# M\n", actor=BOT, tool="reflect")
    assert shared(store).scope_names == ["ops-bot"]
    store.write("memory/world/people.md", "# People\n", actor=BOT, tool="world")
    assert [i.path for i in shared(store).world] == ["memory/world/people.md"]
    store.write("agents/new-bot/memory/MEMORY.md", "# N\n", actor=Actor.agent("new-bot"),
                tool="reflect")
    assert "new-bot" in shared(store).scope_names
    store.delete("memory/world/people.md", actor=Actor.user("alice"), tool="delete")
    assert shared(store).world == []


def test_a_scope_shows_each_write_outside_edit_and_deletion(store: Store) -> None:
    store.write("agents/ops-bot/memory/MEMORY.md", "# M\n", actor=BOT, tool="reflect")
    assert [i.path for i in scope_node(store, "ops-bot").daily] == []
    daily = "agents/ops-bot/memory/daily/2026-01-05.md"
    store.append(daily, "## 09:00\nnote\n", actor=BOT, tool="remember")
    assert [i.path for i in scope_node(store, "ops-bot").daily] == [daily]
    (store.root / "agents/ops-bot/memory/MEMORY.md").write_text("# M\n\nedited outside\n")
    Catalogue.of(store).scan()  # what a page's throttled scan does in the background
    node = scope_node(store, "ops-bot")
    assert node.memory.size == len("# M\n\nedited outside\n")
    store.delete(daily, actor=Actor.user("alice"), tool="delete")
    assert scope_node(store, "ops-bot").daily == []
    assert scope_node(store, "no-such-bot") is None
