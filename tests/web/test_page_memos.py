"""The overview, scope pages and the sidebar are kept between requests by the catalogue's
generations: a page is never staler than the catalogue, whether a write, an outside edit
found by the scan or a commit made by hand changed it."""

from __future__ import annotations

import re
import subprocess

import pytest

from memoryui.search.catalogue import ALL, Catalogue
from memoryui.store import Actor, Store
from tests.waiting import wait_for

BOT = Actor.agent("ops-bot")
ALICE = Actor.user("alice")
MEM = "agents/ops-bot/memory/MEMORY.md"
NOTE = "agents/ops-bot/memory/notes/runbook.md"


@pytest.fixture
def ws(workspace: Store) -> Store:
    workspace.write(MEM, "# Ops memory\n", actor=BOT, tool="reflect")
    workspace.write(NOTE, "# Runbook\n", actor=BOT, tool="memory_write")
    workspace.write("memory/world/people.md", "# People\n", actor=ALICE, tool="ui")
    workspace.write("agents/qa-bot/memory/MEMORY.md", "# QA\n", actor=Actor.agent("qa-bot"),
                    tool="reflect")
    return workspace


@pytest.fixture
def viewer(client_as):
    return client_as("viewer")


def files_on(html: str) -> int:
    m = re.search(r'overview-stats">\s*([\d,]+) files?', html)
    assert m, "the overview states its file count"
    return int(m.group(1).replace(",", ""))


def test_each_page_shows_a_write_made_after_it_was_kept(ws: Store, viewer) -> None:
    for url in ("/", "/s/ops-bot/", "/f/" + MEM):  # each page kept, then asked again
        first = viewer.get(url)
        assert first.status_code == 200 and viewer.get(url).status_code == 200
    before = files_on(viewer.get("/").content.decode())
    ws.write("memory/world/vendors.md", "# Vendors\n", actor=ALICE, tool="ui")
    ws.write("agents/ops-bot/memory/notes/oncall.md", "# On call\n", actor=BOT,
             tool="memory_write")
    overview = viewer.get("/").content.decode()
    assert files_on(overview) == before + 2
    assert "/f/memory/world/vendors.md" in overview
    assert "/f/agents/ops-bot/memory/notes/oncall.md" in viewer.get("/s/ops-bot/").content.decode()
    side = viewer.get("/f/" + MEM).content.decode()  # the sidebar opens the file's scope
    assert "/f/agents/ops-bot/memory/notes/oncall.md" in side
    assert "/f/memory/world/vendors.md" in side
    ws.delete("agents/ops-bot/memory/notes/oncall.md", actor=ALICE, tool="delete")
    assert "/f/agents/ops-bot/memory/notes/oncall.md" not in \
        viewer.get("/f/" + MEM).content.decode()
    assert files_on(viewer.get("/").content.decode()) == before + 1


def test_a_new_scope_shows_in_every_kept_listing(ws: Store, viewer) -> None:
    viewer.get("/")
    viewer.get("/f/" + MEM)
    ws.write("agents/new-bot/memory/MEMORY.md", "# New\n", actor=Actor.agent("new-bot"),
             tool="reflect")
    assert "/s/new-bot/" in viewer.get("/").content.decode()
    assert "/s/new-bot/" in viewer.get("/f/" + MEM).content.decode()


def test_an_outside_edit_shows_within_the_scan_bound(ws: Store, viewer) -> None:
    viewer.get("/s/ops-bot/")
    native = ws.root / "agents/ops-bot/memory/notes/native.md"
    native.write_text("# Written by a native host\n")  # no memoryui, no commit

    def shown() -> bool:
        return "/f/agents/ops-bot/memory/notes/native.md" in \
            viewer.get("/s/ops-bot/").content.decode()
    wait_for("the scan to bring the outside file to the scope page", shown, timeout=120,
             every=0.5)
    assert "/f/agents/ops-bot/memory/notes/native.md" in viewer.get("/f/" + MEM).content.decode()


def test_a_commit_made_by_hand_shows_on_the_kept_overview(ws: Store, viewer) -> None:
    viewer.get("/")
    (ws.root / "memory/world/hand.md").write_text("# By hand\n")
    env = {"GIT_AUTHOR_NAME": "Hand", "GIT_AUTHOR_EMAIL": "h@example.org",
           "GIT_COMMITTER_NAME": "Hand", "GIT_COMMITTER_EMAIL": "h@example.org",
           "PATH": "/usr/bin:/bin"}
    for args in (["add", "memory/world/hand.md"], ["commit", "-qm", "by hand"]):
        subprocess.run(["git", *args], cwd=ws.root, env=env, check=True)
    assert "/f/memory/world/hand.md" in viewer.get("/").content.decode()


def test_only_what_changed_draws_new_generations(ws: Store) -> None:
    cat = Catalogue.of(ws)
    assert cat.ensure(background=False)
    before = cat.generations(ALL, "", "ops-bot", "qa-bot")
    assert all(before)
    cat.scan()  # nothing changed outside: every generation stays
    assert cat.generations(ALL, "", "ops-bot", "qa-bot") == before
    ws.write(NOTE, "# Runbook, longer\n", actor=BOT, tool="memory_write")
    after = cat.generations(ALL, "", "ops-bot", "qa-bot")
    assert after[0] != before[0] and after[2] != before[2]
    assert (after[1], after[3]) == (before[1], before[3])  # shared files, qa-bot: kept
