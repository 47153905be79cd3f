"""The demo workspace: its history reads as live traffic would have made it."""

from __future__ import annotations

import datetime as dt
import subprocess
import time

import pytest
from django.core.management import CommandError, call_command

from memoryui.demo import AGENTS, build_demo
from memoryui.store import Kind


def _dates(root) -> list[tuple[int, int]]:
    """(author, committer) epoch seconds of every commit, oldest first."""
    out = subprocess.run(["git", "log", "--reverse", "--format=%at %ct"], cwd=root,
                         check=True, capture_output=True, text=True).stdout.split("\n")
    return [tuple(int(x) for x in line.split()) for line in out if line]


@pytest.mark.parametrize("hour", [0, 5, 7, 12, 23])
def test_demo_commits_are_in_time_order_and_never_in_the_future(tmp_path, hour):
    today = dt.date(2026, 3, 4)
    now = dt.datetime(2026, 3, 4, hour, 15, tzinfo=dt.UTC).timestamp()
    store = build_demo(tmp_path / "ws", today=today, now=now, days=5)
    logs = [store.path_for(Kind.DAILY, agent, "2026-03-04") for agent in AGENTS]
    store.close()
    dates = _dates(tmp_path / "ws")
    assert len(dates) > 20
    authors = [a for a, _c in dates]
    assert all(a == c for a, c in dates)
    assert authors == sorted(authors)
    assert max(authors) <= now
    # today's log holds only entries whose time has passed
    existing = [tmp_path / "ws" / p for p in logs if (tmp_path / "ws" / p).exists()]
    assert bool(existing) == (hour >= 12)  # entries start after 09:00
    for log in existing:
        for line in log.read_text().split("\n"):
            if line.startswith("## "):
                h, m = (int(x) for x in line[3:].split(":"))
                assert (h, m) <= (hour, 15)


def test_demo_built_now_has_nothing_after_the_clock(tmp_path):
    store = build_demo(tmp_path / "ws", days=3)
    store.close()
    authors = [a for a, _c in _dates(tmp_path / "ws")]
    assert authors == sorted(authors)
    assert max(authors) <= time.time()


@pytest.mark.parametrize("hour", [5, 12])
def test_a_one_day_demo_keeps_the_curators_lesson_after_the_agents_first_write(tmp_path, hour):
    today = dt.date(2026, 3, 4)
    now = dt.datetime(2026, 3, 4, hour, 15, tzinfo=dt.UTC).timestamp()
    store = build_demo(tmp_path / "ws", today=today, now=now, days=1)
    memory = store.read(store.path_for(Kind.MEMORY, "ops-bot"))
    store.close()
    assert "- I work for Initech." in memory
    assert memory.endswith("- Check canaries before calling a deploy done.\n")


def test_a_demo_of_no_days_is_refused_in_one_sentence(tmp_path):
    with pytest.raises(CommandError, match="--days must be 1 or more"):
        call_command("demo", "--dir", str(tmp_path / "ws"), "--days", "0")
    assert not (tmp_path / "ws").exists()
