"""Five commits by two agents and a person over four days, for history and commit page tests."""

from __future__ import annotations

import datetime as dt
import re
import subprocess
from dataclasses import dataclass

from memoryui.store import Actor, Store

T0 = dt.datetime(2026, 1, 5, 9, 0, tzinfo=dt.UTC).timestamp()
DAY = 86_400.0

OPS, BILLING, ALICE = Actor.agent("ops-bot"), Actor.agent("billing-agent"), Actor.user("alice")
MEM = "agents/ops-bot/memory/MEMORY.md"
DAILY = "agents/billing-agent/memory/daily/2026-01-06.md"
WORLD = "memory/world/payments.md"
V1 = "# Ops\n\n- the deploy window is Tuesday\n"
V2 = V1 + "- pager rotation is weekly\n"
V3 = "# Ops\n\n- the deploy window is Thursday\n- pager rotation is weekly\n"


@dataclass
class Seeded:
    """What the seed wrote: commit shas by name, for exact assertions."""

    store: Store
    shas: dict[str, str]


def seed(store: Store) -> Seeded:
    """Five commits over four days by two agents and a person, in three scopes/kinds."""
    shas = {}
    shas["mem1"] = store.write(MEM, V1, actor=OPS, tool="reflect", when=T0).commit
    shas["daily"] = store.append(DAILY, "\n## 10:00\n\ninvoice run ok\n",
                                 header="# 2026-01-06\n", actor=BILLING, tool="remember",
                                 when=T0 + DAY).commit
    shas["mem2"] = store.write(MEM, V2, actor=OPS, tool="reflect", when=T0 + DAY + 60).commit
    shas["mem3"] = store.write(MEM, V3, actor=ALICE, tool="edit",
                               message="Fix the deploy day\n\nIt moved in January.",
                               when=T0 + 2 * DAY).commit
    shas["world"] = store.write(WORLD, "# Payments <&> refunds\n", actor=ALICE,
                                tool="update_world", when=T0 + 3 * DAY).commit
    assert all(shas.values())
    return Seeded(store, shas)


def ids_in(html: str) -> list[str]:
    """Commit shas of the rows shown on a history/activity page, in page order."""
    return re.findall(r'id="c-([0-9a-f]{40})"', html)


def git(store: Store, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=store.root, capture_output=True, text=True,
                          check=True).stdout
