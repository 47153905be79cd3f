"""The index stays current: every write, restore, pending commit, outside edit and git
operation is found, with the time git gives it, and nothing is ever read through a link."""

from __future__ import annotations

import os
import subprocess
import time

from memoryui.search import SearchIndex
from memoryui.store import Store
from tests.search.helpers import ALICE, BOT, daily, git_as, note, paths

DAY = 86400


def test_writes_deletes_renames_and_restores_update_the_index(store, index):
    p = note(store, "ops-bot", "disk", "The disk on db-3 is nearly full.\n")
    assert paths(index.search("nearly full")) == [p]

    res = store.write(p, "The disk on db-3 was resized.\n", actor=BOT, tool="test")
    assert index.search("nearly full").hits == []
    assert paths(index.search("resized")) == [p]

    first_commit = store.log(p)[-1].sha
    store.restore(p, first_commit, actor=ALICE)
    assert paths(index.search("nearly full")) == [p]
    assert res.changed

    moved = store.path_for("note", "ops-bot", "disk-db3")
    store.rename(p, moved, actor=BOT, tool="test")
    assert paths(index.search("nearly full")) == [moved]

    store.delete(moved, actor=BOT, tool="test")
    assert index.search("nearly full").hits == []
    assert index.count() == 0


def test_appends_are_searchable_at_once(store, index):
    path = daily(store, "ops-bot", "2026-02-12", ("09:00", "first entry about redis"))
    daily(store, "ops-bot", "2026-02-12", ("10:00", "second entry about memcached"))
    assert paths(index.search("memcached")) == [path]
    assert paths(index.search("redis")) == [path]


def test_deferred_commits_are_searchable_before_they_are_committed(tmp_path):
    s = Store(tmp_path / "ws", commit_delay=30)
    idx = SearchIndex(tmp_path / "s.db", catch_up_interval=0, background=False)
    idx.attach(s)
    path = s.path_for("note", "ops-bot", "quick")
    s.write(path, "lightning fast\n", actor=BOT, tool="test")
    assert paths(idx.search("lightning")) == [path]
    s.close()


def test_an_outside_change_is_picked_up(store, index):
    p = note(store, "ops-bot", "edited", "original wording\n")
    full = store.root / p
    full.write_text("rewritten by hand in vim\n")
    (store.root / "agents/ops-bot/memory/notes/native.md").write_text("written natively\n")
    assert set(paths(index.search("rewritten OR natively"))) == {
        p, "agents/ops-bot/memory/notes/native.md"}
    assert index.search("original").hits == []
    full.unlink()
    assert index.search("rewritten").hits == []


def test_catch_ups_miss_no_outside_change(store, index):
    """Every outside change, a folder moved whole included, is found: the file catalogue
    scans for them, and the index is compared with it."""
    kept = note(store, "ops-bot", "kept", "steady wording\n")
    edited = note(store, "ops-bot", "edited", "original wording\n")
    gone = note(store, "ops-bot", "gone", "soon deleted\n")
    index.catch_up()  # matches the whole workspace
    notes = store.root / "agents/ops-bot/memory/notes"
    (store.root / edited).write_text("rewritten by hand\n")
    (notes / "native.md").write_text("written natively\n")
    (store.root / gone).unlink()
    assert sorted(index.catch_up()) == sorted([edited, gone,
                                               "agents/ops-bot/memory/notes/native.md"])
    assert set(paths(index.search("rewritten OR natively OR steady", catch_up=False))) == {
        edited, kept, "agents/ops-bot/memory/notes/native.md"}
    assert index.search("original OR deleted", catch_up=False).hits == []
    assert index.catch_up() == []  # nothing changed since

    # a folder removed and another arriving whole (as `mv` or `cp -r` do)
    moved = store.root / "agents/billing-agent/memory/notes"
    moved.parent.mkdir(parents=True, exist_ok=True)
    os.rename(notes, moved)
    found = index.catch_up()
    assert "agents/billing-agent/memory/notes/kept.md" in found and kept in found
    assert paths(index.search("steady", catch_up=False)) == [
        "agents/billing-agent/memory/notes/kept.md"]


def test_catch_up_is_throttled(store, tmp_path):
    idx = SearchIndex(tmp_path / "t.db", catch_up_interval=3600, background=False)
    idx.attach(store)
    note(store, "ops-bot", "a", "alpha\n")
    idx.search("alpha")  # first use: builds
    (store.root / "agents/ops-bot/memory/notes/b.md").write_text("bravo\n")
    assert idx.search("bravo").hits == []  # not yet: the scan ran moments ago
    assert idx.catch_up() == ["agents/ops-bot/memory/notes/b.md"]
    assert len(idx.search("bravo").hits) == 1


def test_committing_or_discarding_pending_changes_updates_the_index(store, index):
    p = note(store, "ops-bot", "pend", "the committed text\n")
    (store.root / p).write_text("an outside edit\n")
    index.catch_up()
    assert paths(index.search("outside edit")) == [p]
    store.discard_pending([p])
    assert index.search("outside edit").hits == []
    assert paths(index.search("committed text")) == [p]

    (store.root / p).write_text("another outside edit\n")
    store.commit_pending()
    assert paths(index.search("another")) == [p]


# -- symbolic links: never followed, never read ---------------------------------------------


def test_a_link_to_a_file_outside_the_workspace_is_never_indexed(store, index, tmp_path):
    secret = tmp_path / "outside" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text("xylophonist-credentials-7731\n")
    notes = store.root / "agents/ops-bot/memory/notes"
    note(store, "ops-bot", "plain", "an ordinary note\n")
    (notes / "k.md").symlink_to(secret)
    (store.root / "agents/ops-bot/linked").symlink_to(secret.parent, target_is_directory=True)
    assert index.catch_up() == []  # neither link is a file of the workspace
    assert index.search("xylophonist").hits == []
    index.update(["agents/ops-bot/memory/notes/k.md", "agents/ops-bot/linked/secret.txt"])
    assert index.search("xylophonist").hits == []
    index.rebuild()
    assert index.search("xylophonist").hits == []
    assert index.count() == 1


def test_a_file_replaced_by_a_link_leaves_the_index(store, index, tmp_path):
    p = note(store, "ops-bot", "swap", "quartzite before the swap\n")
    assert paths(index.search("quartzite")) == [p]
    outside = tmp_path / "elsewhere.md"
    outside.write_text("quartzite outside\n")
    (store.root / p).unlink()
    (store.root / p).symlink_to(outside)
    index.catch_up()
    assert index.search("quartzite").hits == []
    store.notify([p])  # a listener told about the path must not read through the link
    assert index.search("quartzite").hits == []


# -- when a file changed: git's time, not the checkout's -------------------------------------


def test_a_backdated_write_shows_its_commit_time(store, index):
    then = int(time.time()) - 20 * DAY
    p = note(store, "ops-bot", "old", "twenty days of quiet\n", when=then)
    [hit] = index.search("quiet").hits
    assert hit.path == p and hit.recency == then
    assert hit.date == time.strftime("%Y-%m-%d", time.gmtime(then))


def test_a_write_is_indexed_with_its_commit_time_without_asking_git(store, index,
                                                                   monkeypatch):
    """The store knows the time it commits a write with; asking git means catching up with
    every new commit, in every worker, for every write (a fifth of a busy server's CPU)."""
    from memoryui.search.documents import DocReader

    asked: list[int] = []
    real = DocReader._last_commit_time
    monkeypatch.setattr(DocReader, "_last_commit_time",
                        lambda self, p: asked.append(1) or real(self, p))
    then = int(time.time()) - 5 * DAY
    p = note(store, "ops-bot", "ibis", "ibis sightings\n", when=then)
    daily(store, "ops-bot", "2026-02-12", ("09:00", "an ibis again"))
    [hit] = index.search("sightings").hits
    assert hit.path == p and hit.recency == then
    assert hit.recency == int(subprocess.run(["git", "-C", str(store.root), "log", "-1",
                                              "--format=%at", "--", p], capture_output=True,
                                             text=True).stdout)
    assert {h.path for h in index.search("ibis").hits} == {p, store.path_for(
        "daily", "ops-bot", "2026-02-12")}
    assert asked == []


def test_a_fresh_index_takes_change_times_from_git_not_the_checkout(store, tmp_path):
    then = int(time.time()) - 20 * DAY
    p = note(store, "ops-bot", "memo", "# Memo\n\nnarwhal migration\n", when=then)
    os.utime(store.root / p, (time.time(), time.time()))  # as a fresh clone leaves it
    idx = SearchIndex(tmp_path / "fresh.sqlite3", catch_up_interval=0, background=False)
    idx.attach(store)
    [hit] = idx.search("narwhal").hits  # the first search builds the index
    assert hit.recency == then
    assert paths(idx.search("narwhal", date_to=time.strftime("%Y-%m-%d",
                                                               time.gmtime(then)))) == [p]
    idx.close()


def test_a_rebuild_on_a_large_workspace_seen_first_waits_for_commit_times(tmp_path,
                                                                           monkeypatch):
    """A large workspace seen for the first time has its catalogue filled in the
    background; a rebuild meanwhile must not date every file by its checkout time."""
    from memoryui.search import catalogue

    then = int(time.time()) - 12 * DAY
    first = Store(tmp_path / "ws")
    p = note(first, "ops-bot", "tapir", "tapir tracks\n", when=then)
    first.close()
    os.utime(first.root / p, (time.time(), time.time()))  # as a fresh clone leaves it
    monkeypatch.setattr(catalogue, "FILL_AT_ONCE_BELOW", 0)  # "large": filled behind
    store = Store(tmp_path / "ws")
    # No catch-up before the search: it is the rebuild's own result that is looked at.
    idx = SearchIndex(tmp_path / "fresh.sqlite3", catch_up_interval=3600, background=False)
    idx.attach(store)
    assert catalogue.Catalogue.ready(store) is None  # as after a first start
    idx.rebuild(store)
    [hit] = idx.search("tapir").hits
    assert hit.recency == then
    idx.close()
    store.close()


def test_a_commit_arriving_from_git_shows_its_own_date(store, index):
    note(store, "ops-bot", "first", "something\n")
    then = int(time.time()) - 9 * DAY
    p = "agents/ops-bot/memory/notes/arrived.md"
    (store.root / p).write_text("pangolin facts from another instance\n")
    git_as(store.root, "add", p, who="sync")
    git_as(store.root, "commit", "-q", "-m", "arrived", when=then, who="sync")
    store.notify([p])  # what a sync round does after integrating commits
    [hit] = index.search("pangolin").hits
    assert hit.recency == then


def test_many_files_arriving_at_once_show_their_commit_date(store, index):
    note(store, "ops-bot", "first", "something\n")
    assert index.catch_up() == []
    then = int(time.time()) - 40 * DAY
    folder = store.root / "agents/ops-bot/memory/notes"
    for i in range(250):  # more than a catch-up looks up one by one
        (folder / f"bulk-{i:03d}.md").write_text(f"capybara census {i}\n")
    git_as(store.root, "add", "-A", who="sync")
    git_as(store.root, "commit", "-q", "-m", "a pull", when=then, who="sync")
    assert len(index.catch_up()) == 250
    res = index.search("capybara", limit=200)
    assert res.total == 250 and {h.recency for h in res.hits} == {then}


def test_an_uncommitted_outside_edit_shows_when_it_was_made(store, index):
    p = note(store, "ops-bot", "later", "first words\n", when=int(time.time()) - 30 * DAY)
    assert paths(index.search("first words")) == [p]
    edited = time.time() - 3 * DAY
    (store.root / p).write_text("okapi edited by hand\n")
    os.utime(store.root / p, (edited, edited))
    index.catch_up()
    [hit] = index.search("okapi").hits
    assert abs(hit.recency - edited) < 1e-3
