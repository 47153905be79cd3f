"""Writes of one agent within the commit delay share one commit; the activity feed, a
file's history and the commit page still show each write (tool, file, time)."""

from __future__ import annotations

import datetime as dt
import html as htmllib
import re

import pytest

from memoryui.store import Actor, Store

BOT = Actor.agent("ops-bot")
LOG = "agents/ops-bot/memory/daily/2026-03-01.md"
MEM = "agents/ops-bot/memory/MEMORY.md"
T0 = dt.datetime(2026, 3, 1, 9, 0, tzinfo=dt.UTC).timestamp()


@pytest.fixture
def grouped(workspace: Store, tmp_path) -> str:
    """Three writes by one agent in one tick: one commit (its sha)."""
    ticking = Store(workspace.root, commit_delay=3600)  # no tick: the flush groups them
    try:
        ticking.append(LOG, "\n## 09:00\n\nfirst\n", header="# 2026-03-01\n", actor=BOT,
                       tool="remember", when=T0)
        ticking.write(MEM, "# ops-bot\n\n- learned\n", actor=BOT, tool="reflect", when=T0 + 7)
        ticking.append(LOG, "\n## 09:01\n\nsecond\n", actor=BOT, tool="remember",
                       when=T0 + 65)
        ticking.flush()
    finally:
        ticking.close()
    commits = workspace.log()
    assert len(commits) == 1
    return commits[0].sha


def writes_in(page: str) -> list[tuple[str, str, str]]:
    """(time, tool, file) of each write listed on a page."""
    lists = re.findall(r'<ol class="commit-writes"[^>]*>(.*?)</ol>', page, re.S)
    assert len(lists) == 1, lists
    return [(t, tool, htmllib.unescape(path)) for t, tool, path in re.findall(
        r'<time[^>]*>([^<]*)</time> <span class="badge badge-tool" title="Tool">([^<]*)'
        r'</span> <a class="mono" href="[^"]*">([^<]*)</a>', lists[0])]


EXPECTED = [("09:00:00", "remember", LOG), ("09:00:07", "reflect", MEM),
            ("09:01:05", "remember", LOG)]


def test_the_activity_feed_shows_each_write_of_a_grouped_commit(client_as, grouped):
    page = client_as("viewer").get("/activity/").content.decode()
    assert "remember, reflect: " in page
    assert writes_in(page) == EXPECTED


def test_a_files_history_shows_each_write_of_a_grouped_commit(client_as, grouped):
    page = client_as("viewer").get(f"/history/{LOG}").content.decode()
    assert writes_in(page) == EXPECTED


def test_the_commit_page_lists_each_write_and_not_as_raw_trailers(client_as, grouped):
    page = client_as("viewer").get(f"/commit/{grouped}/").content.decode()
    assert writes_in(page) == EXPECTED
    assert "Memoryui-Write" not in page
    assert 'title="2026-03-01 09:01:05 UTC"' in page
