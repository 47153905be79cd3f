"""The browsing tests' workspace, written by agents and people with backdated commits."""

from __future__ import annotations

import datetime as dt

from memoryui.store import Actor, Store

T0 = dt.datetime(2026, 3, 2, 9, 0, tzinfo=dt.UTC).timestamp()
DAY = 86_400.0
OPS, RES, ALICE = Actor.agent("ops-bot"), Actor.agent("research-agent"), Actor.user("alice")
MEM = "agents/ops-bot/memory/MEMORY.md"
SCRATCH = "agents/ops-bot/memory/SCRATCHPAD.md"
NOTE = "agents/ops-bot/memory/notes/runbook.md"
WORLD = "memory/world/people.md"
GLOBAL = "memory/MEMORY.md"
SKILL = "skills/deploy-rollback/SKILL.md"


def daily(scope: str, date: str) -> str:
    return f"agents/{scope}/memory/daily/{date}.md"


def seed(store: Store) -> None:
    store.write(WORLD, "# People\n\n| name | role |\n|---|---|\n| Alice | lead |\n",
                actor=ALICE, tool="update_world", when=T0)
    store.write(GLOBAL, "# Shared\n\n- company: Initech\n", actor=ALICE, tool="edit", when=T0)
    store.write(SKILL, "---\nname: deploy-rollback\ndescription: Roll back.\n---\n\n# Steps\n",
                actor=ALICE, tool="edit", when=T0)
    store.write("directives/memory.md", "Recall first.\n", actor=ALICE, tool="edit", when=T0)
    store.write(MEM, "# ops-bot\n\n- [ ] tidy\n- [x] read notes\n" + "x" * 11_000 + "\n",
                actor=OPS, tool="reflect", when=T0 + 60)
    store.write(SCRATCH, "- [ ] check disk\n* [ ] page Bob\n- [x] done\n", actor=OPS,
                tool="memory_write", when=T0 + 120)
    store.write(NOTE, "# Runbook\n", actor=OPS, tool="memory_write", when=T0 + 180)
    for i, date in enumerate(["2026-02-27", "2026-03-01", "2026-03-02"]):
        store.append(daily("ops-bot", date), f"\n## 10:0{i}\n\nDeployed api v{i}.\n",
                     header=f"# {date}\n", actor=OPS, tool="remember", when=T0 + DAY * i)
    store.append(daily("research-agent", "2026-03-02"), "\n## 11:00\n\nRead a paper.\n",
                 header="# 2026-03-02\n", actor=RES, tool="remember", when=T0 + 3 * DAY)
    store.write(MEM, store.read(MEM) + "- curated\n", actor=ALICE, tool="edit",
                message="Curate ops-bot", when=T0 + 4 * DAY)
