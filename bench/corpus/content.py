"""What a simulated write says: daily entries, MEMORY.md rewrites, scratchpads, notes, world
topics and skills, drawn from the corpus's one seeded RNG."""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass, field

from bench.corpus.documents import Doc
from bench.corpus.vocabulary import (
    COMMANDS,
    FACT_TEMPLATES,
    GENERAL_TEMPLATES,
    LESSONS,
    PEOPLE,
    REGIONS,
    ROLE_TEMPLATES,
    ROLES,
    SERVICES,
    SUBHEADINGS,
    TEAMS,
    TIMEZONES,
    Words,
)


@dataclass
class Scope:
    """One agent's memory as the simulation keeps it between its writes."""

    name: str
    role: str
    memory: Doc
    scratch: list[tuple[bool, str]] = field(default_factory=list)
    notes: dict[str, Doc] = field(default_factory=dict)
    note_plan: list[tuple[int, str]] = field(default_factory=list)
    next_reflect: int = 0
    next_scratch: int = 0


class Content:
    """The content half of the simulation; `Corpus` drives it, in time order."""

    rng: random.Random
    w: Words

    def _sentence(self, role: str) -> str:
        pool = ROLE_TEMPLATES.get(role, ())
        if pool and self.rng.random() < 0.45:
            return self.w.fill(self.rng.choice(pool))
        return self.w.fill(self.rng.choice(GENERAL_TEMPLATES))

    def _entry(self, role: str, date: dt.date) -> str:
        r = self.rng
        roll = r.random()
        if roll < 0.08:
            lines = [self._sentence(role), "", f"### {r.choice(SUBHEADINGS)}", ""]
            lines += [f"- {self._sentence(role)}" for _ in range(r.randint(1, 3))]
            return "\n".join(lines)
        if roll < 0.18:
            if r.random() < 0.5:
                code = self.w.fill(
                    f"{date.isoformat()}T{r.randint(0, 23):02d}:{r.randint(0, 59):02d}:"
                    f"{r.randint(0, 59):02d}Z ERROR {{service}} request_id={r.getrandbits(48):012x}"
                    " code={code} msg=\"upstream timeout after {ms}ms\""
                )
                lang = ""
            else:
                code, lang = "$ " + self.w.fill(r.choice(COMMANDS)), "sh"
            return f"{self._sentence(role)}\n\n```{lang}\n{code}\n```"
        return "\n".join(self._sentence(role) for _ in range(r.randint(1, 4)))

    def _daily(self, sc: Scope, day: int) -> tuple[int, str]:
        """One day's log in Duragent's format; returns the second of the last entry."""
        r = self.rng
        date = self.start + dt.timedelta(days=day)
        minutes = sorted(r.sample(range(7 * 60, 23 * 60), r.randint(2, 8)))
        parts = [f"# {date.isoformat()}\n"]
        for m in minutes:
            parts.append(f"\n## {m // 60:02d}:{m % 60:02d}\n\n{self._entry(sc.role, date)}\n")
        return minutes[-1] * 60 + r.randint(0, 59), "".join(parts)

    def _fact(self) -> str:
        return self.w.fill(self.rng.choice(FACT_TEMPLATES))

    def _reflect_content(self, sc: Scope) -> str:
        r = self.rng
        doc = sc.memory
        if not doc.sections:
            doc.section("Role").append(
                f"I am {sc.name}, the {sc.role} agent. I report to {r.choice(PEOPLE)}."
            )
            doc.section("Role").append(f"Working hours follow {r.choice(TIMEZONES)}.")
            for heading in ("Key facts", "Customers", "Lessons learned", "Open questions"):
                doc.section(heading)
            while doc.size() < 1200:
                doc.section("Key facts").append(self._fact())
                if r.random() < 0.5:
                    doc.section("Customers").append(self.w.fill(
                        "{customer}: {plan} plan, contact {person}, cares about {feature}."
                    ))
            doc.section("Lessons learned").append(r.choice(LESSONS).capitalize() + ".")
            doc.section("Open questions").append(self.w.fill("Who owns {service} after the reorg?"))
        else:
            for _ in range(r.randint(2, 5)):
                doc.section("Key facts").append(self._fact())
            if r.random() < 0.5:
                doc.section("Customers").append(self.w.fill(
                    "{customer}: {plan} plan, contact {person}, cares about {feature}."
                ))
            if r.random() < 0.4:
                doc.section("Lessons learned").append(r.choice(LESSONS).capitalize() + ".")
            qs = doc.section("Open questions")
            if qs and r.random() < 0.5:
                del qs[0]
            if r.random() < 0.5:
                qs.append(self.w.fill("Should {service} alerts page {person} or the {team} team?"))
            doc.trim(r.randint(3500, 6000), ("Key facts", "Customers", "Lessons learned"))
        return doc.render()

    def _scratch_content(self, sc: Scope) -> str:
        r = self.rng
        items = [(True, t) for done, t in sc.scratch if done and r.random() < 0.3]
        for done, text in sc.scratch:
            if not done:
                items.append((r.random() < 0.5, text))
        first = not sc.scratch
        for i in range(r.randint(3, 6)):
            done = i < 2 if first else r.random() < 0.2
            items.append((done, self.w.fill(r.choice((
                "Follow up with {person} on {ticket}",
                "Check {service} error rate after {version}",
                "Ask {customer} whether {symptom} is still happening",
                "Update the runbook for {code}",
                "Review {job} duration trend",
                "Confirm {vendor} invoice for {month}",
            )))))
        items = items[-14:]
        sc.scratch = items
        lines = ["# Scratchpad", "", "## Tasks", ""]
        lines += [f"- [{'x' if done else ' '}] {text}" for done, text in items]
        return "\n".join(lines) + "\n"

    def _note_doc(self, name: str) -> Doc:
        w = self.w
        title = name.replace("-", " ").capitalize()
        doc = Doc(title, w.fill("Kept by the agent; last reviewed with {person}."))
        summary = doc.section("Summary")
        for _ in range(self.rng.randint(2, 5)):
            summary.append(self._fact())
        steps = doc.section("Details")
        for _ in range(self.rng.randint(1, 4)):
            steps.append(self._sentence("ops"))
        doc.section("Log")
        return doc

    def _world_doc(self, topic: str) -> Doc:
        r, w = self.rng, self.w
        if topic == "people":
            doc = Doc("People")
            for person in r.sample(PEOPLE, r.randint(6, 14)):
                b = doc.section(person)
                b += [f"Role: {r.choice(ROLES)}", f"Team: {r.choice(TEAMS)}",
                      f"Timezone: {r.choice(TIMEZONES)}"]
                if r.random() < 0.6:
                    b.append(w.fill("Prefers short updates; ask about {service} first."))
            return doc
        if topic == "systems":
            doc = Doc("Systems")
            for svc in r.sample(SERVICES, r.randint(6, 12)):
                doc.section(svc).extend([
                    f"Owner: {r.choice(TEAMS)} team", f"Runs in: {r.choice(REGIONS)}",
                    f"Dashboard: https://grafana.internal/d/{svc}",
                ])
            return doc
        kind, _, rest = topic.partition("-")
        title = {
            "service": "Service", "customer": "Customer", "team": "Team", "vendor": "Vendor",
            "region": "Region", "runbook": "Runbook", "job": "Job", "database": "Database",
            "feature": "Feature", "playbook": "Playbook", "dependency": "Dependency map",
        }.get(kind)
        doc = Doc(f"{title}: {rest}" if title else topic.replace("-", " ").capitalize())
        doc.section("Overview").extend([
            w.fill("Owner: {team} team, contact {person}"),
            w.fill("Primary region: {region}"),
        ])
        doc.section("Facts").extend(self._fact() for _ in range(r.randint(2, 24)))
        if r.random() < 0.5:
            doc.section("Known issues").extend(
                w.fill("`{code}`: {cause}; mitigate by {mitigation}.")
                for _ in range(r.randint(1, 4))
            )
        doc.section("History")
        return doc

    def _skill(self, name: str) -> str:
        desc = {
            "incident-triage": "Triage a production alert: scope, impact, first mitigation.",
            "release-checklist": "Ship a service release safely: canary, watch, roll back.",
            "customer-escalation": "Handle an escalated customer ticket end to end.",
        }[name]
        steps = [self._sentence("ops") for _ in range(self.rng.randint(3, 6))]
        body = "\n".join(f"{i}. {s}" for i, s in enumerate(steps, 1))
        title = name.replace("-", " ").capitalize()
        return (f"---\nname: {name}\ndescription: {desc}\n---\n\n# {title}\n\n"
                f"## When to use\n\n{desc}\n\n## Steps\n\n{body}\n")
