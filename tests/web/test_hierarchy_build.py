"""The overview's hierarchy is patched with what changed, never rebuilt per write, and the
patched one always equals a full build: counts, sizes, last changes, order."""

from __future__ import annotations

import importlib
import os
import subprocess

from memoryui.store import Actor, Store
from memoryui.web.hierarchy.model import Hierarchy

# The package re-exports the function `build`; the module itself is needed here.
build_mod = importlib.import_module("memoryui.web.hierarchy.build")

BOT = Actor.agent("ops-bot")


def summary(h: Hierarchy) -> dict:
    def items(lst):
        return [(i.path, i.size, (i.last_raw or {}).get("sha") if i.last_raw else None)
                for i in lst]
    return {
        "files": h.files, "size": h.size,
        "last": h.last_raw["sha"] if h.last_raw else None,
        "world": items(h.world), "skills": items(h.skills), "other": items(h.other),
        "directives": items(h.directives),
        "global": h.global_memory.path if h.global_memory else None,
        "scopes": {name: (n.files, n.size, n.last_raw["sha"] if n.last_raw else None,
                          n.memory.path if n.memory else None, items(n.daily), items(n.notes))
                   for name, n in h.scopes.items()},
    }


def test_patched_hierarchy_equals_a_full_build_through_many_changes(store: Store,
                                                                    monkeypatch) -> None:
    rebuilds = []
    real = build_mod._rebuild
    monkeypatch.setattr(build_mod, "_rebuild", lambda *a: rebuilds.append(1) or real(*a))
    store.write("agents/ops-bot/memory/MEMORY.md", "# M\n", actor=BOT, tool="reflect")
    store.write("memory/world/b.md", "# B\n", actor=Actor.user("alice"), tool="ui")
    first = build_mod.build(store)
    assert len(rebuilds) == 1

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
    prev = first
    for step in steps:
        step()
        patched = build_mod.build(store)
        assert patched is not prev  # a copy: pages rendering the old one never see it move
        prev = patched
        assert summary(patched) == summary(real(store))
    assert len(rebuilds) == 1  # never rebuilt in full along the way
    assert summary(first)["files"] == 2  # the first hierarchy is untouched (copy-on-write)
    assert "new-bot" not in prev.scopes  # its folder is gone: so is the scope


def test_native_edits_and_hand_commits_reach_the_overview(store: Store) -> None:
    store.write("agents/ops-bot/memory/MEMORY.md", "# M\n", actor=BOT, tool="reflect")
    build_mod.build(store)
    (store.root / "memory/world").mkdir(parents=True)
    (store.root / "memory/world/native.md").write_text("# Native\n")
    env = {**os.environ, "GIT_AUTHOR_NAME": "Hand", "GIT_AUTHOR_EMAIL": "h@example.org",
           "GIT_COMMITTER_NAME": "Hand", "GIT_COMMITTER_EMAIL": "h@example.org"}
    subprocess.run(["git", "add", "-A"], cwd=store.root, check=True, env=env)
    subprocess.run(["git", "commit", "-qm", "by hand"], cwd=store.root, check=True, env=env)
    h = build_mod.build(store)
    assert [i.path for i in h.world] == ["memory/world/native.md"]
    assert h.world[0].last.subject == "by hand"
    assert h.notice == ""


def test_the_sidebar_lists_shared_folders_again_only_after_a_change_there(store: Store
                                                                          ) -> None:
    """Every page's sidebar: an agent's daily write reuses the listing, a change to a
    world topic, a new scope or a deletion shows at once; a first page after a start never
    waits for the whole tree to be listed (that happens in the background)."""
    from memoryui.web.hierarchy.folders import shared

    store.write("agents/ops-bot/memory/MEMORY.md", "# M\n", actor=BOT, tool="reflect")
    assert shared(store).scope_names == ["ops-bot"]  # before any listing: read from the folders
    # listed in the background for the next pages
    assert store.tree_model.wait_for(lambda: store.tree_model.listed, 60)
    first = shared(store)
    store.append("agents/ops-bot/memory/daily/2026-01-05.md", "## 09:00\nnote\n", actor=BOT,
                 tool="remember")
    assert shared(store) is first  # nothing the sidebar shows changed
    store.write("memory/world/people.md", "# People\n", actor=BOT, tool="world")
    after = shared(store)
    assert [i.path for i in after.world] == ["memory/world/people.md"]
    store.write("agents/new-bot/memory/MEMORY.md", "# N\n", actor=Actor.agent("new-bot"),
                tool="reflect")
    assert "new-bot" in shared(store).scope_names
    store.delete("memory/world/people.md", actor=Actor.user("alice"), tool="delete")
    assert shared(store).world == []


def test_a_scope_is_listed_again_only_after_a_change_below_its_folder(store: Store) -> None:
    """Scope pages and the sidebar's open scope: a write elsewhere reuses the listing; a
    write, an outside edit, a deletion or a last change read later in the scope shows."""
    from memoryui.web.hierarchy.folders import scope_node

    store.write("agents/ops-bot/memory/MEMORY.md", "# M\n", actor=BOT, tool="reflect")
    store.tree()
    first = scope_node(store, "ops-bot")
    assert [i.path for i in first.daily] == []
    store.write("agents/other-bot/memory/MEMORY.md", "# O\n", actor=Actor.agent("other-bot"),
                tool="reflect")
    assert scope_node(store, "ops-bot") is first  # another scope's change
    daily = "agents/ops-bot/memory/daily/2026-01-05.md"
    store.append(daily, "## 09:00\nnote\n", actor=BOT, tool="remember")
    assert [i.path for i in scope_node(store, "ops-bot").daily] == [daily]
    (store.root / "agents/ops-bot/memory/MEMORY.md").write_text("# M\n\nedited outside\n")
    store.tree_model.touch("agents/ops-bot/memory/MEMORY.md")  # as the watcher reports it
    node = scope_node(store, "ops-bot")
    assert node.memory.size == len("# M\n\nedited outside\n")
    store.delete(daily, actor=Actor.user("alice"), tool="delete")
    assert scope_node(store, "ops-bot").daily == []
    assert scope_node(store, "no-such-bot") is None
