"""The first fill of the file catalogue: made by the committer process, streamed, and left
to it by the workers while it lives."""

from __future__ import annotations

import logging
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pygit2

from memoryui.search.catalogue import Catalogue
from memoryui.search.catalogue_db import SqliteCatalogueDb
from memoryui.store import Actor, Store
from tests.api.realserver import ROOT
from tests.waiting import wait_for

from .helpers import BOT, daily

MEM = "agents/ops-bot/memory/MEMORY.md"


def seeded(root: Path) -> Store:
    store = Store(root)
    store.write(MEM, "# M\n", actor=BOT, tool="reflect")
    daily(store, "ops-bot", "2026-03-01", ("09:00", "one"))
    store.write("memory/world/people.md", "# P\n", actor=Actor.user("alice"), tool="ui")
    return store


def test_the_committer_process_fills_a_workspace_seen_first(tmp_path: Path) -> None:
    store = seeded(tmp_path / "ws")
    head = store.head()
    store.close()
    env = {**{k: v for k, v in os.environ.items() if k != "MEMORYUI_COMMIT_DELAY"},
           "MEMORYUI_WORKSPACE": str(tmp_path / "ws"), "MEMORYUI_LAYOUT": "duragent",
           "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
           "MEMORYUI_VAR_DIR": str(tmp_path), "MEMORYUI_SEARCH_DB": str(tmp_path / "s.sqlite3"),
           "DJANGO_SETTINGS_MODULE": "memoryui.settings"}
    subprocess.run([sys.executable, "manage.py", "migrate", "--verbosity", "0"], cwd=ROOT,
                   env=env, check=True, timeout=300)
    log = (tmp_path / "committer.log").open("wb")
    proc = subprocess.Popen([sys.executable, "manage.py", "committer"], cwd=ROOT, env=env,
                            stdout=log, stderr=subprocess.STDOUT)
    # no page is ever asked for: only the committer can fill what the pages will read
    cat = Catalogue(SqliteCatalogueDb(tmp_path / "s-catalogue.sqlite3"))
    try:
        wait_for("the committer to fill the catalogue", lambda: cat.filled, timeout=120)
        assert cat.count() == 3
        assert cat.entry(MEM).last["actor"] == "agent:ops-bot"
        assert cat.entry("memory/world/people.md").last["sha"] == head
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(120)
        log.close()
        cat.close()


def test_a_worker_leaves_the_first_fill_to_a_live_committer(tmp_path: Path) -> None:
    seeded(tmp_path / "ws").close()
    host = Store(tmp_path / "ws", commit_delay=0.2)
    worker = Store(tmp_path / "ws", commit_delay=0.2)
    try:
        assert host.host_commits(wait=False)
        mine = Catalogue.of(worker)
        assert mine.ensure() is False
        mine.wait_for_fill(0)
        assert not mine.filled  # the worker started no fill of its own
        Catalogue.of(host).ensure()  # the committer's (in its process: the same database)
        wait_for("the committer's fill to reach the worker", lambda: mine.filled, timeout=120)
        assert mine.count() == 3 and mine.ensure() is True
    finally:
        worker.close()
        host.close()


def test_a_fill_streams_every_file_with_its_newest_commit(tmp_path: Path) -> None:
    store = seeded(tmp_path / "ws")
    try:
        first = store.head()
        for i in range(3):  # more commits than paths: each row keeps the newest
            store.write(MEM, f"# M {i}\n", actor=Actor.user("bob"), tool="ui")
        cat = Catalogue.of(store)
        cat.fill()
        assert cat.entry(MEM).last == {**cat.entry(MEM).last, "sha": store.head(),
                                       "actor": "user:bob"}
        assert cat.entry("memory/world/people.md").last["sha"] == first
        assert cat.scope_totals()["ops-bot"][:1] == (2,)
    finally:
        store.close()


def test_a_fill_whose_workspace_is_removed_says_so_in_one_line(tmp_path: Path, caplog,
                                                               monkeypatch) -> None:
    """The committer stops on a removed workspace and says why; its catalogue fill, running
    in a thread meanwhile, adds one line, not a traceback (an answer, not a fault)."""
    store = seeded(tmp_path / "ws")
    cat = Catalogue.of(store)
    shutil.rmtree(store.root)

    def fill() -> None:  # as the fill fails then: git finds no repository
        (store.git.state_dir).mkdir(parents=True)  # (its lock file made the folder again)
        raise pygit2.GitError(f"Repository not found at {store.root}")
    monkeypatch.setattr(cat, "fill", fill)
    with caplog.at_level(logging.WARNING, logger="memoryui.search"):
        cat._fill_quietly()
    assert [r.getMessage() for r in caplog.records] == [
        f"the workspace {store.root} is gone: no catalogue"]
    assert not any(r.exc_info for r in caplog.records)
