"""A realistic demo workspace: agents writing for weeks, leads curating, one pending edit.

Every file is written through the Store with backdated times, so the demo's history is
made of real commits with their real authors, exactly as live traffic would make them.
"""

from __future__ import annotations

import datetime as dt
import random
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

from memoryui.store import Actor, Kind, Store

AGENTS = {
    "ops-bot": ["deploy", "incident", "latency", "rollback", "pager", "disk", "postgres"],
    "research-agent": ["paper", "benchmark", "dataset", "embedding", "survey", "eval"],
    "support-bot": ["refund", "customer", "ticket", "invoice", "SLA", "escalation"],
}
PEOPLE = ["alice", "bob"]
SUBJECTS = {
    "deploy": "Deployed api v2.{n} to production; canary at 5% for 20 minutes, no errors.",
    "incident": "Incident INC-{n}: checkout p99 rose to 2.{n}s; traced to a cold Redis replica.",
    "latency": "Search latency regressed after the index rebuild; p95 went from 40 to {n}0 ms.",
    "rollback": "Rolled back billing-worker {n} after a schema mismatch on `invoices.total`.",
    "pager": "Paged Bob at 03:1{n} for disk pressure on db-{n}; rotated logs, 31% free now.",
    "disk": "db-{n} volume at 87%; scheduled vacuum for Sunday 02:00 UTC.",
    "postgres": "Postgres 16 upgrade rehearsal on staging took {n}4 minutes; replication ok.",
    "paper": "Read 'Retrieval at scale' (2026): BM25 + rerank beats dense-only at {n}k docs.",
    "benchmark": "Ran the recall benchmark: MRR@10 = 0.{n}1 on the support corpus.",
    "dataset": "The tickets-2026 dataset has {n}% duplicates; dedup before training.",
    "embedding": "Switched to 384-dim embeddings; index size dropped by {n}0%.",
    "survey": "Survey of memory tools: most keep markdown files plus a small index.",
    "eval": "Eval run {n}: answer accuracy 8{n}%, hallucinated citations in 2 of 50.",
    "refund": "Customer ACME-{n} asked for a refund of invoice 10{n}; approved under 30 days.",
    "customer": "Globex prefers email over chat; contact is Dana (billing lead).",
    "ticket": "Ticket #4{n}2 closed: password reset emails were going to spam.",
    "invoice": "Invoice totals round half-even since v2.{n}; explain when customers ask.",
    "SLA": "Enterprise SLA is 4 business hours for P2; we answered in {n}h on average.",
    "escalation": "Escalated a GDPR deletion request to legal; due in {n} days.",
}
WORLD = {
    "people": "# People\n\n## Alice\n- Role: team lead, owns agent memory reviews\n"
              "- Prefers short summaries with links\n\n## Bob\n- Role: SRE on call this "
              "month\n- Timezone: Europe/Oslo\n\n## Dana (Globex)\n- Billing lead at Globex\n",
    "systems": "# Systems\n\n| system | owner | notes |\n|---|---|---|\n| api | platform "
               "| canary deploys, 5% first |\n| billing-worker | payments | schema changes "
               "need a migration review |\n| search | data | BM25 index rebuilt nightly |\n",
    "preferences": "# Preferences\n\n- Answer in English, concise, with next steps.\n"
                   "- Never share customer data across customers.\n- Times in UTC.\n",
}


def build_demo(root: Path, layout: str = "duragent", days: int = 21,
               today: dt.date | None = None, seed: int = 11, now: float | None = None
               ) -> Store:
    """Create the demo workspace at `root` (which must be empty or missing).

    Writes are made in time order and never after `now`, so the history reads as live
    traffic would have made it: commit dates never go back, and none is in the future
    (today's log holds only the entries whose time has passed).
    """
    rng = random.Random(seed)
    real_now = time.time()
    today = today or dt.datetime.fromtimestamp(real_now, dt.UTC).date()
    end_of_today = dt.datetime(today.year, today.month, today.day, 23, 59, 59,
                               tzinfo=dt.UTC).timestamp()
    now = now if now is not None else min(real_now, end_of_today)
    store = Store(root, layout)
    lay = store.layout
    start = today - dt.timedelta(days=days - 1)
    writes: list[tuple[float, int, Callable[[float], object]]] = []

    def at(day: dt.date, hour: int, minute: int) -> float:
        return dt.datetime(day.year, day.month, day.day, hour, minute,
                           tzinfo=dt.UTC).timestamp()

    def later(when: float, fn: Callable[[float], object]) -> None:
        writes.append((when, len(writes), fn))

    alice = Actor.user("alice")
    t0 = at(start, 7, 0)
    if lay.supports(Kind.WORLD):
        for topic, text in WORLD.items():
            later(t0, partial(_add_topic, store, alice, topic, text))
    if lay.supports(Kind.GLOBAL):
        later(t0, lambda w: store.write(
            store.path_for(Kind.GLOBAL),
            "# Shared memory\n\n- The company is Initech; products: api, billing.\n"
            "- Escalations go to #ops-oncall.\n", actor=alice, tool="edit",
            message="Seed global memory", when=w))
    if lay.supports(Kind.SKILL):
        later(t0, lambda w: store.write(
            store.path_for(Kind.SKILL, name="deploy-rollback"),
            "---\nname: deploy-rollback\ndescription: Roll back a bad deploy of the "
            "api or a worker. Use when error rates rise within an hour of a deploy.\n"
            "---\n\n# Roll back a deploy\n\n1. Check the canary dashboard.\n"
            "2. `deployctl rollback SERVICE --to PREVIOUS`.\n3. Post in #ops-oncall.\n",
            actor=alice, tool="edit", message="Add deploy-rollback skill", when=w))
    if lay.supports(Kind.DIRECTIVE):
        later(t0, lambda w: store.write(
            "directives/memory.md",
            "Use `memory` with action `recall` at the start of a conversation.\n",
            actor=alice, tool="edit", when=w))
    for agent, topics in AGENTS.items():
        _agent_writes(store, agent, topics, rng, later, at, start, today, days, now)
    for when, _seq, fn in sorted(writes, key=lambda w: (w[0], w[1])):
        fn(min(when, now))
    store.flush()
    # One edit made outside memoryui (an agent writing natively): a pending change.
    first = next(iter(AGENTS))
    if lay.supports(Kind.SCRATCHPAD):
        pending = root / store.path_for(Kind.SCRATCHPAD, first)
        pending.write_text(pending.read_text() + "- [ ] check the disk alert on db-3\n")
    return store


def _add_topic(store: Store, actor: Actor, topic: str, text: str, when: float) -> object:
    return store.write(store.path_for(Kind.WORLD, name=topic), text, actor=actor, tool="edit",
                       message=f"Add world topic {topic}", when=when)


def _agent_writes(store: Store, agent: str, topics: list[str], rng: random.Random,
                  later: Callable, at: Callable, start: dt.date, today: dt.date, days: int,
                  now: float) -> None:
    """Queue one agent's writes: its files on the first day, then weeks of daily logs."""
    lay = store.layout
    actor = Actor.agent(agent)
    t0 = at(start, 7, 0)
    if lay.supports(Kind.MEMORY):
        later(t0 + 60, lambda w: store.write(
            store.path_for(Kind.MEMORY, agent),
            f"# {agent} memory\n\n## Facts\n- I work for Initech.\n"
            f"- My main topics: {', '.join(topics[:3])}.\n\n## Lessons\n",
            actor=actor, tool="reflect", when=w))
    if lay.supports(Kind.SCRATCHPAD):
        later(t0 + 120, lambda w: store.write(
            store.path_for(Kind.SCRATCHPAD, agent),
            "# Scratchpad\n\n- [ ] follow up on the last incident\n"
            "- [x] read the onboarding notes\n- [ ] tidy MEMORY.md\n",
            actor=actor, tool="memory_write", when=w))
    if lay.supports(Kind.NOTE):
        later(t0 + 180, lambda w: store.write(
            store.path_for(Kind.NOTE, agent, "runbook"),
            f"# Runbook notes\n\nThings {agent} looks up often.\n",
            actor=actor, tool="memory_write", when=w))
    if not lay.supports(Kind.DAILY):
        return
    for i in range(days):
        day = start + dt.timedelta(days=i)
        if day.weekday() == 6 and rng.random() < 0.7:
            continue
        path = store.path_for(Kind.DAILY, agent, day.isoformat())
        hour = 8 + rng.randrange(2)
        for _ in range(rng.randrange(2, 5)):
            hour = min(hour + rng.randrange(1, 3), 22)
            minute = rng.randrange(60)
            topic = rng.choice(topics)
            text = SUBJECTS[topic].format(n=rng.randrange(1, 9))
            when = at(day, hour, minute)
            if when > now:  # today's entries not yet "written"
                continue
            later(when, lambda w, path=path, day=day, hour=hour, minute=minute, text=text:
                  store.append(path, f"\n## {hour:02d}:{minute:02d}\n\n{text}\n",
                               actor=actor, tool="remember",
                               header=f"# {day.isoformat()}\n", when=w))
    if lay.supports(Kind.MEMORY):
        person = Actor.user(rng.choice(PEOPLE))
        # this morning, and never before the agent wrote the file (one day: both are today)
        later(max(at(today, 6, 30), t0 + 240), lambda w: store.update(
            store.path_for(Kind.MEMORY, agent),
            lambda old: (old or "") + "- Check canaries before calling a deploy done.\n",
            actor=person, tool="edit", message=f"Curate {agent}'s lessons", when=w))
