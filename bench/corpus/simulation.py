"""The simulated days: every write of every scope and person, emitted as one commit each in
time order."""

from __future__ import annotations

import datetime as dt
import random
from typing import Any

from bench.corpus.content import Content, Scope
from bench.corpus.documents import Doc, Importer
from bench.corpus.names import (
    handbook_path,
    paraphrase_facts,
    scope_names,
    slug,
    world_topic_names,
)
from bench.corpus.presets import (
    END_DATE,
    P_NOTE_UPDATE,
    P_PERSON_GLOBAL_EDIT,
    P_PERSON_SCOPE_EDIT,
    P_PERSON_WORLD_EDIT,
    P_WORLD_UPDATE,
    PEOPLE_USERS,
    REFLECT_EVERY,
    SCRATCHPAD_EVERY,
    SKILLS,
    Preset,
)
from bench.corpus.vocabulary import (
    CUSTOMERS,
    PEOPLE,
    REGIONS,
    ROLE_OF_BASE,
    ROLES,
    SERVICES,
    TEAMS,
    VENDORS,
    Words,
)


class Corpus(Content):
    """Walks the simulated days and emits every write as a commit, in time order."""

    def __init__(self, preset: Preset, seed: int, importer: Importer) -> None:
        self.p = preset
        self.rng = random.Random(seed)
        self.w = Words(self.rng)
        self.imp = importer
        self.start = END_DATE - dt.timedelta(days=preset.days - 1)
        self.files: set[str] = set()
        self.kinds: dict[str, int] = {}
        self.topics = world_topic_names(preset.world_topics)
        self.world: dict[str, Doc] = {}
        self.global_memory = Doc("Workspace memory", "Facts every agent and person should know.")
        self.scopes = [self._new_scope(n) for n in scope_names(preset.scopes)]
        self.topic_plan = self._plan_topics()

    # -- planning ------------------------------------------------------------------------

    def _new_scope(self, name: str) -> Scope:
        role = ROLE_OF_BASE.get(name, name.rsplit("-", 1)[0])
        doc = Doc(f"Memory of {name}")
        sc = Scope(name=name, role=role, memory=doc)
        candidates = sorted({
            *(f"runbook-{s}" for s in SERVICES),
            *(f"customer-{slug(c)}" for c in CUSTOMERS),
            *(f"postmortem-inc-{n}" for n in range(1000, 1040)),
            *(f"vendor-{slug(v)}" for v in VENDORS),
            "contacts", "ideas", "handoff-template", "weekly-review", "glossary",
        })
        chosen = self.rng.sample(candidates, self.p.notes_per_scope)
        days = self.p.days
        for i, note in enumerate(chosen):
            day = min(days - 1, int((i + self.rng.random()) * days / self.p.notes_per_scope))
            sc.note_plan.append((day, note))
        return sc

    def _plan_topics(self) -> dict[int, list[str]]:
        plan: dict[int, list[str]] = {}
        n = len(self.topics)
        for i, topic in enumerate(self.topics):
            day = 0 if i < 8 else int((i + self.rng.random()) * self.p.days * 0.8 / n)
            plan.setdefault(day, []).append(topic)
        return plan

    # -- emission helpers -----------------------------------------------------------------

    def _ts(self, day: int, seconds: int) -> int:
        d = self.start + dt.timedelta(days=day)
        midnight = dt.datetime(d.year, d.month, d.day, tzinfo=dt.UTC)
        return int(midnight.timestamp()) + seconds

    def _write(self, ts: int, actor: str, tool: str, path: str, content: str,
               kind: str) -> None:
        if actor in PEOPLE_USERS:
            name, email, trailer = actor, f"{actor}@users.memoryui", f"user:{actor}"
        else:
            name, email, trailer = actor, f"{actor}@agents.memoryui", f"agent:{actor}"
        message = f"{tool}: {path}\n\nMemoryui-Actor: {trailer}\nMemoryui-Tool: {tool}\n"
        self.imp.commit(ts, name, email, message, path, content)
        if path not in self.files:
            self.files.add(path)
            self.kinds[kind] = self.kinds.get(kind, 0) + 1

    def run(self) -> None:
        self._history()
        self._handbook()

    def _handbook(self) -> None:
        """The labeled facts of search by meaning (bench/labels/paraphrase_queries.json), one
        world topic per area, written by alice after the last day; no random draw, so the
        rest of the corpus is the same with or without them."""
        by_file: dict[str, list[dict[str, str]]] = {}
        for fact in paraphrase_facts():
            by_file.setdefault(fact["file"], []).append(fact)
        ts = self._ts(self.p.days, 3600)
        for i, (name, facts) in enumerate(sorted(by_file.items())):
            text = f"# Handbook: {name}\n" + "".join(
                f"\n## {f['heading']}\n\n{f['fact']}\n" for f in facts)
            self._write(ts + 60 * i, "alice", "edit", handbook_path(name), text, "world")

    def _history(self) -> None:
        for day in range(self.p.days):
            events: list[tuple[int, int, Any, tuple[Any, ...]]] = []

            def add(sec: int, fn: Any, *args: Any, _events: list[Any] = events) -> None:
                _events.append((sec, len(_events), fn, args))

            if day == 0:
                add(6 * 3600, self._setup)  # before any agent writes (from 07:00)
            for topic in self.topic_plan.get(day, []):
                add(self.rng.randint(9 * 3600, 20 * 3600), self._create_topic, topic)
            for sc in self.scopes:
                sec, text = self._daily(sc, day)
                date = (self.start + dt.timedelta(days=day)).isoformat()
                add(sec, self._write_daily, sc, date, text)
                if day == sc.next_reflect:
                    add(sec + self.rng.randint(60, 900), self._reflect, sc)
                    sc.next_reflect += self.rng.randint(*REFLECT_EVERY)
                if day == sc.next_scratch:
                    add(self.rng.randint(7 * 3600, 23 * 3600), self._scratch, sc)
                    sc.next_scratch += self.rng.randint(*SCRATCHPAD_EVERY)
                for note_day, note in sc.note_plan:
                    if note_day == day:
                        add(self.rng.randint(8 * 3600, 22 * 3600), self._create_note, sc, note)
                if sc.notes and self.rng.random() < P_NOTE_UPDATE:
                    add(self.rng.randint(8 * 3600, 22 * 3600), self._update_note, sc)
                if day > 0 and self.rng.random() < P_PERSON_SCOPE_EDIT:
                    user = self.rng.choice(PEOPLE_USERS)
                    add(self.rng.randint(9 * 3600, 18 * 3600), self._person_scope_edit, sc, user)
            if day > 0 and self.rng.random() < P_WORLD_UPDATE:
                sc = self.rng.choice(self.scopes)
                add(self.rng.randint(8 * 3600, 22 * 3600), self._update_topic, sc)
            if day > 0 and self.rng.random() < P_PERSON_WORLD_EDIT:
                user = self.rng.choice(PEOPLE_USERS)
                add(self.rng.randint(9 * 3600, 18 * 3600), self._person_world_edit, user)
            if day > 0 and self.rng.random() < P_PERSON_GLOBAL_EDIT:
                user = self.rng.choice(PEOPLE_USERS)
                add(self.rng.randint(9 * 3600, 18 * 3600), self._person_global_edit, user)
            events.sort(key=lambda e: (e[0], e[1]))
            for sec, _, fn, args in events:
                fn(self._ts(day, min(sec, 86399)), *args)

    # -- the writes -----------------------------------------------------------------------

    def _setup(self, ts: int) -> None:
        self._write(ts, "alice", "edit", "directives/memory.md", DIRECTIVE, "directive")
        g = self.global_memory
        g.section("Conventions").extend([
            "Dates are UTC and written YYYY-MM-DD.",
            "Customer names are written as the customer writes them.",
            "Incidents are referenced by their INC number.",
        ])
        g.section("Escalation").extend(self._fact() for _ in range(3))
        self._write(ts + 60, "alice", "edit", "memory/MEMORY.md", g.render(), "global")
        for i, skill in enumerate(SKILLS):
            self._write(ts + 120 + 60 * i, "carol", "edit", f"skills/{skill}/SKILL.md",
                        self._skill(skill), "skill")

    def _write_daily(self, ts: int, sc: Scope, date: str, text: str) -> None:
        path = f"agents/{sc.name}/memory/daily/{date}.md"
        self._write(ts, sc.name, "remember", path, text, "daily")

    def _reflect(self, ts: int, sc: Scope) -> None:
        path = f"agents/{sc.name}/memory/MEMORY.md"
        self._write(ts, sc.name, "reflect", path, self._reflect_content(sc), "memory")

    def _scratch(self, ts: int, sc: Scope) -> None:
        path = f"agents/{sc.name}/memory/SCRATCHPAD.md"
        self._write(ts, sc.name, "memory_write", path, self._scratch_content(sc), "scratchpad")

    def _create_note(self, ts: int, sc: Scope, note: str) -> None:
        doc = sc.notes[note] = self._note_doc(note)
        path = f"agents/{sc.name}/memory/notes/{note}.md"
        self._write(ts, sc.name, "memory_write", path, doc.render(), "note")

    def _update_note(self, ts: int, sc: Scope) -> None:
        note = self.rng.choice(sorted(sc.notes))
        doc = sc.notes[note]
        date = dt.datetime.fromtimestamp(ts, dt.UTC).date().isoformat()
        doc.section("Log").append(f"{date}: {self._sentence(sc.role)}")
        doc.trim(4000, ("Log", "Details"))
        path = f"agents/{sc.name}/memory/notes/{note}.md"
        self._write(ts, sc.name, "memory_write", path, doc.render(), "note")

    def _create_topic(self, ts: int, topic: str) -> None:
        doc = self.world[topic] = self._world_doc(topic)
        actor = self.rng.choice(self.scopes).name
        self._write(ts, actor, "update_world", f"memory/world/{topic}.md", doc.render(), "world")

    def _update_topic(self, ts: int, sc: Scope) -> None:
        if not self.world:
            return
        topic = self.rng.choice(sorted(self.world))
        doc = self.world[topic]
        date = dt.datetime.fromtimestamp(ts, dt.UTC).date().isoformat()
        if topic == "people":
            doc.section(self.rng.choice(PEOPLE)).extend(
                [f"Role: {self.rng.choice(ROLES)}", f"Team: {self.rng.choice(TEAMS)}"]
            )
        elif topic == "systems":
            doc.section(self.rng.choice(SERVICES)).extend(
                [f"Owner: {self.rng.choice(TEAMS)} team", f"Runs in: {self.rng.choice(REGIONS)}"]
            )
        else:
            doc.section("History").append(f"{date}: {self._fact()}")
        doc.trim(4000, ("History", "Facts", "Known issues"))
        self._write(ts, sc.name, "update_world", f"memory/world/{topic}.md", doc.render(),
                    "world")

    def _person_scope_edit(self, ts: int, sc: Scope, user: str) -> None:
        """A lead corrects a wrong fact in the scope's MEMORY.md (or a note)."""
        if not sc.memory.sections:
            return
        facts = sc.memory.section("Key facts")
        if facts:
            del facts[self.rng.randrange(len(facts))]
        facts.append(f"{self._fact()} (corrected by {user})")
        path = f"agents/{sc.name}/memory/MEMORY.md"
        self._write(ts, user, "edit", path, sc.memory.render(), "memory")

    def _person_world_edit(self, ts: int, user: str) -> None:
        if not self.world:
            return
        topic = self.rng.choice(sorted(self.world))
        doc = self.world[topic]
        heading, bullets = doc.sections[self.rng.randrange(len(doc.sections))]
        if bullets and self.rng.random() < 0.5:
            del bullets[self.rng.randrange(len(bullets))]
        bullets.append(f"{self._fact()} (checked by {user})")
        self._write(ts, user, "edit", f"memory/world/{topic}.md", doc.render(), "world")

    def _person_global_edit(self, ts: int, user: str) -> None:
        self.global_memory.section("Escalation").append(self._fact())
        self.global_memory.trim(4000, ("Escalation",))
        self._write(ts, user, "edit", "memory/MEMORY.md", self.global_memory.render(), "global")


DIRECTIVE = """\
You have access to a persistent memory system via the `memory` tool:
- `memory` action=`recall` - Load your memory (world knowledge, long-term memory, recent experiences)
- `memory` action=`remember` - Record an experience to today's daily log
- `memory` action=`reflect` - Read then update your long-term MEMORY.md (call without content to read, then with content to write)
- `memory` action=`update_world` - Write shared world knowledge for a topic (replaces existing content)

Guidelines:
- Call `memory` with action `recall` at the start of conversations when context might be helpful
- Use `memory` with action `remember` after learning something important about the user or project
- Use `memory` with action `reflect` at the end of substantial sessions to consolidate learnings — always read first, then write
- Use `memory` with action `update_world` when discovering facts relevant to all agents
"""
