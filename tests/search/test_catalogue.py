"""The file catalogue on each backend: writes, commits, outside edits and a first fill."""

from __future__ import annotations

import os
import time

from memoryui.search import SearchIndex
from memoryui.search.catalogue import Catalogue
from memoryui.store import Actor, Kind, Store

from .helpers import ALICE, BOT, daily, git_as, note

MEM = "agents/ops-bot/memory/MEMORY.md"
WORLD = "memory/world/people.md"



def test_a_write_is_in_the_catalogue_with_its_place_size_and_commit(store, index):
    cat = index.catalogue
    assert cat.ensure(background=False)
    store.write(MEM, "# Memory\n", actor=BOT, tool="reflect")
    e = cat.entry(MEM)
    assert (e.scope, e.kind, e.name, e.size) == ("ops-bot", "memory", "", len("# Memory\n"))
    assert e.last["sha"] == store.head() and e.last["actor"] == "agent:ops-bot"
    store.write(WORLD, "# People\n", actor=ALICE, tool="edit")
    w = cat.entry(WORLD)
    assert (w.scope, w.kind, w.name) == ("", "world", "people")
    assert w.last["actor"] == "user:alice" and "people" in w.last["subject"]
    assert [e.path for e in cat.shared()] == [WORLD]
    assert [e.path for e in cat.scope("ops-bot")] == [MEM]


def test_a_write_not_yet_committed_shows_at_once_with_its_last_commit(tmp_path, index):
    s = Store(tmp_path / "deferred", commit_delay=3600)
    index.attach(s)
    cat = index.catalogue
    cat.ensure(background=False)
    s.write(MEM, "one\n", actor=BOT, tool="reflect")
    s.flush()
    first = s.head()
    s.write(MEM, "one and two\n", actor=BOT, tool="reflect")  # journaled, not committed
    e = cat.entry(MEM)
    assert e.size == len("one and two\n") and e.last["sha"] == first
    s.flush()
    cat.current()
    assert cat.entry(MEM).last["sha"] == s.head() != first
    s.close()


def test_deletes_renames_and_folders_leave_the_catalogue(store, index):
    cat = index.catalogue
    cat.ensure(background=False)
    a = note(store, "ops-bot", "a", "a\n")
    b = note(store, "ops-bot", "b", "b\n")
    store.rename(a, a.replace("/a.md", "/c.md"), actor=ALICE, tool="rename")
    assert {e.path for e in cat.scope("ops-bot")} == {b, a.replace("/a.md", "/c.md")}
    store.delete(b, actor=ALICE, tool="delete")
    store.delete_tree("agents/ops-bot", actor=ALICE, tool="delete")
    assert cat.scope("ops-bot") == [] and cat.count() == 0


def test_commits_made_by_hand_and_outside_edits_reach_it(store, index):
    cat = index.catalogue
    cat.ensure(background=False)
    note(store, "ops-bot", "first", "x\n")
    then = int(time.time()) - 86_400
    arrived = "agents/billing-agent/memory/notes/arrived.md"
    (store.root / arrived).parent.mkdir(parents=True)
    (store.root / arrived).write_text("from another instance\n")
    git_as(store.root, "add", arrived)
    git_as(store.root, "commit", "-q", "-m", "arrived", when=then)
    cat.current()  # a page: HEAD moved
    e = cat.entry(arrived)
    assert e.scope == "billing-agent" and e.last["time"] == then
    assert e.last["actor"] == "git:native"
    native = store.root / "agents/ops-bot/memory/notes/native.md"
    native.write_text("written natively\n")
    (store.root / arrived).write_text("edited by hand, longer than before\n")
    assert cat.entry(native.name) is None
    assert set(cat.scan()) >= {arrived, "agents/ops-bot/memory/notes/native.md"}
    assert cat.entry("agents/ops-bot/memory/notes/native.md").last is None
    assert cat.entry(arrived).size == len("edited by hand, longer than before\n")
    git_as(store.root, "checkout", "--", arrived)  # the edit undone: found again
    cat.scan()
    assert cat.entry(arrived).size == len("from another instance\n")


def test_a_workspace_seen_first_is_filled_once_with_its_history(store, tmp_path):
    then = int(time.time()) - 5 * 86_400
    store.write(MEM, "# M\n", actor=BOT, tool="reflect", when=then)
    daily(store, "ops-bot", "2026-03-01", ("09:00", "one"))
    daily(store, "ops-bot", "2026-03-02", ("09:00", "two"))
    store.write(WORLD, "# P\n", actor=ALICE, tool="edit")
    idx = SearchIndex(tmp_path / "first.sqlite3", catch_up_interval=0, background=False)
    idx.attach(store)
    cat = idx.catalogue
    assert not cat.filled
    cat.ensure()
    cat.wait_for_fill(60)
    assert cat.filled and cat.count() == 4
    assert cat.entry(MEM).last["time"] == then
    assert cat.scope_totals() == {"ops-bot": (3, sum(
        e.size for e in cat.scope("ops-bot")), 2, 0)}
    assert [e.name for e in cat.newest_daily()] == ["2026-03-02"]
    assert [e.name for e in cat.of_kind(Kind.DAILY.value, first="2026-03-02")] == [
        "2026-03-02"]
    newest = max((e.last["time"], e.last["sha"]) for e in cat.scope("ops-bot"))
    assert cat.scope_lasts()["ops-bot"]["sha"] == newest[1]  # a tie in time: the greater sha
    idx.close()
    other = Store(tmp_path / "other")
    idx = SearchIndex(tmp_path / "first.sqlite3", catch_up_interval=0, background=False)
    idx.attach(other)  # another workspace: the catalogue starts afresh
    assert not idx.catalogue.filled and idx.catalogue.count() == 0
    idx.close()
    other.close()


def test_a_store_without_an_index_keeps_a_catalogue_of_its_own(store):
    from memoryui.search.catalogue import Catalogue

    cat = Catalogue.of(store)
    assert Catalogue.of(store) is cat
    cat.ensure(background=False)
    store.write(MEM, "# M\n", actor=Actor.agent("ops-bot"), tool="reflect")
    assert cat.entry(MEM).size == 4


def test_a_restart_finds_the_catalogue_filled_and_takes_in_what_came_meanwhile(
        store, tmp_path):
    idx = SearchIndex(tmp_path / "kept.sqlite3", catch_up_interval=0, background=False)
    idx.attach(store)
    idx.catalogue.ensure(background=False)
    store.write(MEM, "# M\n", actor=BOT, tool="reflect")
    idx.close()
    store.listeners.clear()  # the process ends
    later = "agents/ops-bot/memory/notes/later.md"
    (store.root / later).parent.mkdir(parents=True)
    (store.root / later).write_text("committed while no server ran\n")
    git_as(store.root, "add", later)
    git_as(store.root, "commit", "-q", "-m", "by hand")
    again = SearchIndex(tmp_path / "kept.sqlite3", catch_up_interval=0, background=False)
    again.attach(store)
    cat = again.catalogue
    assert cat.filled  # nothing to fill again after a start
    assert cat.current() and cat.entry(later).last["subject"] == "by hand"
    assert cat.entry(MEM).size == 4
    again.close()


def test_a_folder_moved_whole_is_listed_again_below_its_new_and_old_names(store, index):
    cat = index.catalogue
    cat.ensure(background=False)
    a = note(store, "ops-bot", "a", "a\n")
    b = note(store, "ops-bot", "b", "b\n")
    moved = store.root / "agents/billing-agent/memory/notes"
    moved.parent.mkdir(parents=True)
    os.rename(store.root / "agents/ops-bot/memory/notes", moved)
    store.notify(["agents/ops-bot/memory/notes", "agents/billing-agent/memory/notes"])
    assert cat.entry(a) is None and cat.entry(b) is None
    assert [e.path for e in cat.scope("billing-agent")] == [
        "agents/billing-agent/memory/notes/a.md", "agents/billing-agent/memory/notes/b.md"]
    assert cat.scope_totals()["billing-agent"][0] == 2 and "ops-bot" not in cat.scope_totals()


def test_an_outside_edit_undone_is_found_by_any_process(store, index, tmp_path):
    cat = index.catalogue
    cat.ensure(background=False)
    p = note(store, "ops-bot", "n", "as committed\n")
    (store.root / p).write_text("edited outside, longer\n")
    cat.scan()
    assert cat.entry(p).size == len("edited outside, longer\n")
    git_as(store.root, "checkout", "--", p)
    other = Catalogue(index.catalogue.db)  # another worker on the same database
    other.store = store
    other.scan()
    assert cat.entry(p).size == len("as committed\n")
