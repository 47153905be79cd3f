"""Deterministic benchmark corpus: a memoryui workspace repository with realistic history.

Benchmarks and tests need a workspace that looks like months of agents writing memory (daily
logs, curated MEMORY.md files, notes, world topics, a few human corrections), with git history in
memoryui's exact commit format. The same preset and seed always give byte-identical files and the
same commit shas, so figures from different runs compare like for like.

The history is streamed into one `git fast-import` process: the large preset (about 20k files and
20k commits) would take far too long with one `git commit` per write.

The ``imported`` variant is the same history without what a memoryui-written workspace has
(no commit-graph, no memoryui state under ``.git``): a team's existing repository as it would
arrive, so the benchmarks show whether memoryui gives such a workspace what git needs.

Usage: ``python -m bench.corpus --preset small|large|huge --dir DIR [--imported] [--force]
[--seed N]``
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

END_DATE = dt.date(2026, 11, 20)
"""Last simulated day; fixed so that the corpus never depends on the clock."""


@dataclass(frozen=True)
class Preset:
    """Sizes of one corpus preset (DESIGN.md section 7)."""

    scopes: int
    days: int
    world_topics: int
    notes_per_scope: int


PRESETS: dict[str, Preset] = {
    "small": Preset(scopes=10, days=30, world_topics=20, notes_per_scope=5),
    "large": Preset(scopes=50, days=365, world_topics=200, notes_per_scope=20),
    # 10x large: about 195k files and 205k commits.
    "huge": Preset(scopes=500, days=365, world_topics=2000, notes_per_scope=20),
}

PEOPLE_USERS = ("alice", "bob", "carol")
SKILLS = ("incident-triage", "release-checklist", "customer-escalation")

# Rates tuned so that the large preset lands near 20k commits, a few percent of them by people.
REFLECT_EVERY = (40, 60)  # days between two reflects of one scope
SCRATCHPAD_EVERY = (75, 105)  # days between two scratchpad rewrites of one scope
P_NOTE_UPDATE = 0.01  # per scope and day
P_WORLD_UPDATE = 0.3  # per day, by some agent
P_PERSON_SCOPE_EDIT = 0.02  # per scope and day
P_PERSON_WORLD_EDIT = 0.3  # per day
P_PERSON_GLOBAL_EDIT = 0.02  # per day

# --------------------------------------------------------------------------------------------
# Vocabulary. Varied on purpose, so that search benchmarks see a realistic spread of terms.
# --------------------------------------------------------------------------------------------

_SCOPE_BASES = (
    "ops-bot", "billing-agent", "support-07", "deploy-bot", "triage-agent", "oncall-bot",
    "sales-assistant", "data-pipeline", "security-scout", "docs-writer", "qa-runner",
    "infra-planner",
)
_SCOPE_ROLES = ("support", "billing", "ops", "security", "data", "qa", "sales", "docs")
_ROLE_OF_BASE = {
    "ops-bot": "ops", "billing-agent": "billing", "support-07": "support", "deploy-bot": "ops",
    "triage-agent": "support", "oncall-bot": "ops", "sales-assistant": "sales",
    "data-pipeline": "data", "security-scout": "security", "docs-writer": "docs",
    "qa-runner": "qa", "infra-planner": "ops",
}

SERVICES = (
    "payments-api", "auth-gateway", "search-indexer", "billing-worker", "notification-service",
    "ledger-db", "checkout-web", "inventory-sync", "report-builder", "media-transcoder",
    "feature-flags", "session-store", "email-relay", "webhook-dispatcher", "pricing-engine",
    "fraud-scorer", "export-service", "audit-log", "user-profile", "recommendation-api",
    "shipping-quotes", "tax-calculator", "chat-gateway", "metrics-ingest", "cdn-edge",
    "invoice-renderer", "kafka-connect", "scheduler", "geo-lookup", "image-resizer",
)
CUSTOMERS = (
    "Acme Corp", "Globex", "Initech", "Umbrella Health", "Hooli", "Stark Industries",
    "Wayne Logistics", "Tyrell Systems", "Cyberdyne", "Soylent Foods", "Wonka Confections",
    "Vandelay Imports", "Pied Piper", "Massive Dynamic", "Oscorp", "Gringotts Bank",
    "Monarch Airlines", "Nakatomi Trading", "Blue Sun", "Aperture Labs", "Black Mesa",
    "Dunder Mifflin", "Sterling Cooper", "Prestige Worldwide", "Bluth Company", "Krusty Burger",
    "Los Pollos Hermanos", "Paper Street Soap", "Rekall", "Weyland Yutani", "Zorg Industries",
    "Gekko and Co", "Ollivanders", "Duff Brewing", "Spacely Sprockets", "Cogswell Cogs",
    "Virtucon", "Nordlicht Energie", "Fjord Analytics", "Sakura Mobile", "Pampas Agro",
    "Kestrel Insurance", "Helix Genomics", "Brightline Rail", "Marigold Hotels",
)
PEOPLE = (
    "Alice", "Bob", "Carol", "Dmitri", "Priya", "Kenji", "Fatima", "Lars", "Mei", "Oscar",
    "Sofia", "Tomasz", "Aisha", "Diego", "Ingrid", "Rahul", "Yuki", "Nadia", "Pedro", "Chloe",
    "Olu", "Hannah", "Mateo", "Leila", "Viktor", "Grace", "Arjun", "Beatriz", "Emeka", "Freya",
    "Hiro", "Jonas", "Keiko", "Luca", "Maya", "Niamh", "Omar", "Rosa", "Sven", "Zara",
)
ROLES = (
    "Engineer", "Senior Engineer", "SRE", "Support Lead", "Account Manager", "Product Manager",
    "Engineering Manager", "Data Engineer", "Security Engineer", "Billing Specialist",
    "Technical Writer", "QA Engineer", "Solutions Architect", "Customer Success Manager",
)
TEAMS = (
    "platform", "payments", "growth", "support", "data", "security", "infra", "mobile",
    "search", "billing", "identity", "docs",
)
REGIONS = ("eu-west-1", "us-east-1", "us-west-2", "ap-southeast-2", "eu-central-1", "sa-east-1")
TIMEZONES = ("UTC", "Europe/Berlin", "America/New_York", "Asia/Tokyo", "Europe/London",
             "America/Sao_Paulo", "Asia/Kolkata", "Australia/Sydney")
VENDORS = ("Stripe", "Twilio", "SendGrid", "Cloudflare", "PagerDuty", "Datadog", "Okta",
           "GitHub", "Snowflake", "Fastly", "Adyen", "Zendesk")
NAMED_CODES = (
    "HTTP 502", "HTTP 503", "HTTP 504", "HTTP 429", "HTTP 401", "ECONNRESET", "ETIMEDOUT",
    "OOMKilled", "SQLSTATE 40001", "SQLSTATE 57014", "ORA-00060", "DEADLINE_EXCEEDED",
    "ERR_TLS_CERT_ALTNAME_INVALID", "CrashLoopBackOff", "ImagePullBackOff", "SIGSEGV",
    "card_declined", "insufficient_funds", "rate_limit_exceeded", "idempotency_key_reused",
)
CAUSES = (
    "a missing index on orders.created_at", "connection pool exhaustion",
    "a feature flag left on in production", "a DNS TTL that was far too long",
    "a noisy neighbour on the node", "long GC pauses", "an expired API key",
    "a schema migration holding a table lock", "a retry storm from the mobile client",
    "a misconfigured HPA", "clock skew between the workers", "an unbounded batch size",
    "a stale read replica", "a certificate rotated without the intermediate",
    "a typo in the Helm values", "a slow third-party webhook", "disk pressure on the node",
)
SYMPTOMS = (
    "slow checkout", "duplicate emails", "missing invoices", "login loops",
    "timeouts on CSV export", "stale search results", "double charges", "blank dashboards",
    "failed password resets", "delayed webhooks", "wrong tax totals", "broken image previews",
    "SSO redirects to a 404", "slow report generation", "push notifications arriving twice",
)
MITIGATIONS = (
    "failing over to the standby", "scaling the deployment to 12 replicas",
    "disabling the recommendations flag", "purging the CDN cache",
    "restarting the consumer group", "raising the connection pool to 80",
    "pinning the previous image", "draining the bad node", "throttling the batch importer",
    "switching traffic to the secondary region",
)
FEATURES = ("SAML SSO", "audit export", "usage-based billing", "custom domains",
            "bulk refunds", "webhook signing", "data residency in the EU", "SCIM provisioning",
            "read-only API keys", "multi-currency invoices")
JOBS = ("nightly-etl", "invoice-run", "search-reindex", "usage-rollup", "backup-verify",
        "churn-model", "gdpr-purge", "ledger-reconcile")
QUEUES = ("orders.created", "emails.outbound", "webhooks.retry", "payments.settled",
          "exports.pending", "events.audit")
DATABASES = ("orders-pg", "ledger-db", "users-pg", "analytics-warehouse", "sessions-redis")
DOMAINS = ("api.example.com", "pay.example.com", "status.example.com", "auth.example.com",
           "cdn.example.net")
LESSONS = (
    "always check the error budget before a Friday deploy",
    "the staging database is a week behind production, so repro there is unreliable",
    "customers on the Enterprise plan must hear from a human within the hour",
    "refunds above 500 EUR need a second approver",
    "rotate API keys through the vault, never by hand",
    "the on-call handoff is at 09:00 UTC, not local time",
    "a spike of 429s usually means a customer script, not an outage",
    "read the vendor status page before paging anyone",
    "migrations on large tables go out behind a flag and in batches",
    "post the incident summary in #incidents within 24 hours",
    "never restart the ledger workers during the invoice run",
    "tag every support reply with the customer's plan",
)
PLANS = ("Free", "Team", "Business", "Enterprise")
SLAS = ("1-hour", "4-hour", "next-business-day")
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December")
COMMANDS = (
    "kubectl rollout restart deploy/{service} -n prod",
    "kubectl -n prod logs deploy/{service} --since=15m | grep -c {code_word}",
    "psql $DATABASE_URL -c 'VACUUM ANALYZE orders'",
    "redis-cli --scan --pattern 'sess:*' | wc -l",
    "helm rollback {service} 1 -n prod",
    "curl -s https://{domain}/healthz",
    "aws s3 ls s3://backups-{region}/{db}/ --recursive | tail -3",
    "git log --oneline -5 deploy/{service}",
)

_GENERAL_TEMPLATES = (
    "Deployed {service} {version} to {region}; canary at {pct}% for 30 minutes, no new errors.",
    "{person} asked me to keep an eye on {service} after yesterday's {code} spike.",
    "Saw {count} `{code}` errors from {service} in {region}; traced it to {cause}.",
    "Rolled back {service} from {version} to {version2} after p99 latency rose to {ms}ms.",
    "{customer} reported {symptom} on {service}; opened {ticket} and looped in {person}.",
    "Incident {incident}: {service} degraded in {region}, mitigated by {mitigation}.",
    "Reminder from {person}: {customer} is on the {plan} plan with a {sla} response SLA.",
    "Cache hit rate on {service} dropped to {pct}% after {version}; warming it manually.",
    "{vendor} status page shows degraded service in {region}; pausing retries against it.",
    "Paired with {person} on the {service} migration; {small} of 16 shards moved so far.",
    "Runbook for {code} on {service} was out of date; the fix is `{command}`.",
    "Job {job} took {minutes} minutes, up from {minutes2}; probably {cause}.",
    "Host {host} was OOMKilled twice; raised the memory limit to {gb}Gi and filed {ticket}.",
    "{customer} wants {feature} before {month}; {person} owns the follow-up.",
    "Certificate for {domain} expires in {small} days; renewal booked with {person}.",
    "Error budget for {service} is at {pct}% for the month; holding risky deploys.",
    "Confirmed with {person} that {service} calls {service2} on every request.",
    "Queue {queue} peaked at {count} messages; consumers caught up after {minutes} minutes.",
    "Replica lag on {db} reached {small}s during the {job} run.",
    "Closed {ticket}: {customer} confirmed that {symptom} stopped after {version}.",
    "{person} prefers incident updates every 30 minutes in #inc-{incident_num}.",
    "Handed over to {person}; open items are {ticket} and the {service} alert noise.",
)
_ROLE_TEMPLATES: dict[str, tuple[str, ...]] = {
    "support": (
        "{customer} escalated {ticket} ({symptom}); CSAT risk, replied within {minutes} minutes.",
        "Merged {small} duplicate tickets about {symptom} into {ticket}.",
        "{customer} admin could not reset 2FA; verified identity with {person} and reset it.",
        "Macro for {code} errors now links the {service} status page.",
    ),
    "billing": (
        "Invoice {invoice} for {customer} failed with `{code}`; retrying after dunning day 3.",
        "Refunded {amount} EUR to {customer} for {symptom}; approved by {person}.",
        "Chargeback opened by {customer} on {invoice}; evidence due in {small} days.",
        "{vendor} payout delayed; the ledger shows {amount} EUR unreconciled in {job}.",
        "Proration for {customer} moving from {plan} to {plan2} looked wrong; {ticket} filed.",
    ),
    "ops": (
        "Pager fired for {service} `{code}` at night; auto-resolved, tuning the alert threshold.",
        "Drained {host} for kernel patching; {small} pods rescheduled without errors.",
        "Terraform plan for {region} shows {small} changes to security groups; waiting on {person}.",
        "Autoscaler added {small} nodes in {region} at peak; cost alert at {pct}% of budget.",
    ),
    "security": (
        "CVE-2026-{cve} affects the base image of {service}; patched build is {version}.",
        "Leaked token for {vendor} found in a public gist; revoked it and told {person}.",
        "WAF blocked {count} requests from one ASN against {domain}; added a rate rule.",
        "Access review for {team} done; removed {small} stale accounts.",
    ),
    "data": (
        "{job} loaded {count} rows into {db}; {small} rows rejected for bad timestamps.",
        "dbt model fct_{table} is {minutes} minutes late; upstream {service} export stalled.",
        "Backfill of {table} for {month} finished; row counts match the source.",
        "Schema drift in {service} events: field `{field}` became nullable.",
    ),
    "qa": (
        "Flaky test test_{table}_{field} failed {small} times this week on {service}.",
        "Regression suite for {version} passed except {small} cases in checkout.",
        "Load test of {service}: {count} rps at p99 {ms}ms before errors started.",
    ),
    "sales": (
        "Demo for {customer} went well; they asked about {feature} and {plan} pricing.",
        "{customer} trial ends in {small} days; {person} will call them on Thursday.",
        "Lost {customer} to a competitor on price; notes are in {ticket}.",
    ),
    "docs": (
        "Updated the {service} API reference for {version}; {small} examples were stale.",
        "{person} asked for a guide on {feature}; draft is in review.",
        "Broken links on the {domain} docs fixed ({small} pages).",
    ),
}
_SUBHEADINGS = ("Follow-ups", "Handoff", "Root cause", "Customer impact", "Next steps", "Notes")
_TABLES = ("orders", "invoices", "sessions", "payouts", "events", "users", "refunds")
_FIELDS = ("created_at", "currency", "region", "plan_id", "amount", "status", "locale")

_FACT_TEMPLATES = (
    "{service} is owned by the {team} team; escalate to {person}.",
    "{customer} is on the {plan} plan with a {sla} SLA.",
    "{service} depends on {service2}; check it first when {code} shows up.",
    "{person} is the contact for {vendor} and for anything in {region}.",
    "The {job} job runs nightly against {db}; it must finish before 06:00 UTC.",
    "`{code}` from {service} usually means {cause}.",
    "{customer} asked for {feature}; promised for {month}.",
    "Deploys of {service} go through {person} during the freeze.",
)

_PLACEHOLDER = re.compile(r"\{([a-z_0-9]+)\}")


class _Words:
    """Fills templates with fresh values from one seeded RNG."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def value(self, key: str) -> str:
        r = self.rng
        base = key.rstrip("0123456789")
        if base == "service":
            return r.choice(SERVICES)
        if base == "customer":
            return r.choice(CUSTOMERS)
        if base == "person":
            return r.choice(PEOPLE)
        if base == "code":
            if r.random() < 0.4:
                return f"E{r.randint(1000, 9999)}"
            return r.choice(NAMED_CODES)
        if base == "code_word":
            return r.choice(("timeout", "panic", "refused", "E" + str(r.randint(1000, 9999))))
        if base == "version":
            return f"v{r.randint(1, 4)}.{r.randint(0, 30)}.{r.randint(0, 15)}"
        if base == "region":
            return r.choice(REGIONS)
        if base == "host":
            return f"{r.choice(('web', 'worker', 'db', 'cache', 'edge'))}-{r.randint(1, 40):02d}"
        if base == "ticket":
            return f"{r.choice(('SUP', 'OPS', 'BILL', 'SEC'))}-{r.randint(1000, 99999)}"
        if base == "incident":
            return f"INC-{r.randint(1000, 9999)}"
        if base == "incident_num":
            return str(r.randint(1000, 9999))
        if base == "invoice":
            return f"INV-{r.randint(2025, 2026)}-{r.randint(10000, 99999)}"
        if base == "cve":
            return str(r.randint(10000, 59999))
        if base == "pct":
            return str(r.randint(5, 99))
        if base == "count":
            return f"{r.randint(120, 250000):,}"
        if base == "small":
            return str(r.randint(2, 15))
        if base == "ms":
            return str(r.randint(180, 4200))
        if base == "minutes":
            return str(r.randint(3, 95))
        if base == "gb":
            return str(r.choice((2, 4, 6, 8, 12, 16)))
        if base == "amount":
            return f"{r.randint(12, 4800)}.{r.randint(0, 99):02d}"
        if base == "cause":
            return r.choice(CAUSES)
        if base == "symptom":
            return r.choice(SYMPTOMS)
        if base == "mitigation":
            return r.choice(MITIGATIONS)
        if base == "plan":
            return r.choice(PLANS)
        if base == "sla":
            return r.choice(SLAS)
        if base == "vendor":
            return r.choice(VENDORS)
        if base == "feature":
            return r.choice(FEATURES)
        if base == "month":
            return r.choice(MONTHS)
        if base == "job":
            return r.choice(JOBS)
        if base == "queue":
            return r.choice(QUEUES)
        if base == "db":
            return r.choice(DATABASES)
        if base == "domain":
            return r.choice(DOMAINS)
        if base == "team":
            return r.choice(TEAMS)
        if base == "table":
            return r.choice(_TABLES)
        if base == "field":
            return r.choice(_FIELDS)
        if base == "command":
            return self.fill(r.choice(COMMANDS))
        raise KeyError(key)

    def fill(self, template: str) -> str:
        """Same placeholder twice in one template gets the same value; `x2` is a second one."""
        seen: dict[str, str] = {}

        def sub(m: re.Match[str]) -> str:
            key = m.group(1)
            if key not in seen:
                seen[key] = self.value(key)
            return seen[key]

        return _PLACEHOLDER.sub(sub, template)


class _Doc:
    """A markdown file made of `## ` sections of bullets, so rewrites can edit it in place."""

    def __init__(self, title: str, preamble: str = "") -> None:
        self.title = title
        self.preamble = preamble
        self.sections: list[tuple[str, list[str]]] = []

    def section(self, heading: str) -> list[str]:
        for h, bullets in self.sections:
            if h == heading:
                return bullets
        bullets = []
        self.sections.append((heading, bullets))
        return bullets

    def render(self) -> str:
        out = [f"# {self.title}\n"]
        if self.preamble:
            out.append(f"\n{self.preamble}\n")
        for heading, bullets in self.sections:
            out.append(f"\n## {heading}\n")
            out.extend(f"- {b}\n" for b in bullets)
        return "".join(out)

    def size(self) -> int:
        return len(self.render().encode())

    def trim(self, limit: int, sections: tuple[str, ...]) -> None:
        """Drop the oldest bullets of `sections` until the file fits in `limit` bytes."""
        while self.size() > limit:
            for heading in sections:
                bullets = self.section(heading)
                if len(bullets) > 1:
                    del bullets[0]
                    break
            else:
                return


# --------------------------------------------------------------------------------------------
# fast-import stream
# --------------------------------------------------------------------------------------------


class _Importer:
    """One `git fast-import` process on branch main; each write is one commit of one file."""

    def __init__(self, repo: Path) -> None:
        self._err = tempfile.TemporaryFile()  # noqa: SIM115 - lives as long as the process
        self._proc = subprocess.Popen(
            ["git", "fast-import", "--quiet", "--done"],
            cwd=repo,
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=self._err,
        )
        assert self._proc.stdin is not None
        self._out: IO[bytes] = self._proc.stdin
        self.commits = 0

    def commit(self, ts: int, name: str, email: str, message: str, path: str,
               content: str) -> None:
        msg = message.encode()
        body = content.encode()
        ident = f"{name} <{email}> {ts} +0000\n".encode()
        self._out.write(
            b"commit refs/heads/main\nauthor " + ident + b"committer " + ident
            + b"data %d\n" % len(msg) + msg
            + b"M 100644 inline " + path.encode() + b"\n"
            + b"data %d\n" % len(body) + body + b"\n"
        )
        self.commits += 1

    def close(self) -> None:
        try:
            self._out.write(b"done\n")
            self._out.close()
        except BrokenPipeError:
            pass
        rc = self._proc.wait()
        if rc != 0:
            self._err.seek(0)
            detail = self._err.read().decode(errors="replace").strip()
            raise RuntimeError(f"git fast-import failed ({rc}): {detail}")
        self._err.close()


# --------------------------------------------------------------------------------------------
# Simulation
# --------------------------------------------------------------------------------------------


LABELS = Path(__file__).resolve().parent / "labels"


def paraphrase_facts() -> list[dict[str, str]]:
    """The labeled facts and the paraphrase queries that ask for them."""
    return list(json.loads((LABELS / "paraphrase_queries.json").read_text())["facts"])


def handbook_path(name: str) -> str:
    return f"memory/world/handbook-{name}.md"


def scope_names(count: int) -> list[str]:
    """Scope names in a fixed order (`ops-bot` first), independent of the seed."""
    names = list(_SCOPE_BASES[:count])
    n = 1
    while len(names) < count:
        for role in _SCOPE_ROLES:
            name = f"{role}-{n:02d}"
            if len(names) < count and name not in names:
                names.append(name)
        n += 1
    return names


def world_topic_names(count: int) -> list[str]:
    """Topic file stems, already in Duragent's sanitized form (lowercase, `-`)."""
    core = ["people", "systems", "preferences", "customers", "glossary", "oncall-rotation",
            "release-process", "incident-policy"]
    pools = [
        [f"service-{s}" for s in SERVICES],
        [f"customer-{_slug(c)}" for c in CUSTOMERS],
        [f"team-{t}" for t in TEAMS],
        [f"vendor-{_slug(v)}" for v in VENDORS],
        [f"region-{r}" for r in REGIONS],
        [f"runbook-{s}" for s in SERVICES],
        [f"job-{j}" for j in JOBS],
        [f"database-{d}" for d in DATABASES],
        [f"feature-{_slug(f)}" for f in FEATURES],
        [f"playbook-{_slug(s)}" for s in SYMPTOMS],
        [f"dependency-map-{s}" for s in SERVICES],
    ]
    names = core[:count]
    i = 0
    while len(names) < count:
        progressed = False
        for pool in pools:
            if i < len(pool) and len(names) < count:
                names.append(pool[i])
                progressed = True
        if not progressed:
            break
        i += 1
    # Past the distinct pools (the huge preset), one topic per region or team of each: the
    # names of small and large stay exactly as they were.
    base = list(names)
    for suffix in (*REGIONS, *TEAMS):
        for name in base[len(core):]:
            if len(names) >= count:
                return names
            names.append(f"{name}-{suffix}")
    if len(names) < count:
        raise ValueError(f"at most {len(names)} world topics are available")
    return names


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


@dataclass
class _Scope:
    name: str
    role: str
    memory: _Doc
    scratch: list[tuple[bool, str]] = field(default_factory=list)
    notes: dict[str, _Doc] = field(default_factory=dict)
    note_plan: list[tuple[int, str]] = field(default_factory=list)
    next_reflect: int = 0
    next_scratch: int = 0


class _Corpus:
    """Walks the simulated days and emits every write as a commit, in time order."""

    def __init__(self, preset: Preset, seed: int, importer: _Importer) -> None:
        self.p = preset
        self.rng = random.Random(seed)
        self.w = _Words(self.rng)
        self.imp = importer
        self.start = END_DATE - dt.timedelta(days=preset.days - 1)
        self.files: set[str] = set()
        self.kinds: dict[str, int] = {}
        self.topics = world_topic_names(preset.world_topics)
        self.world: dict[str, _Doc] = {}
        self.global_memory = _Doc("Workspace memory", "Facts every agent and person should know.")
        self.scopes = [self._new_scope(n) for n in scope_names(preset.scopes)]
        self.topic_plan = self._plan_topics()

    # -- planning ------------------------------------------------------------------------

    def _new_scope(self, name: str) -> _Scope:
        role = _ROLE_OF_BASE.get(name, name.rsplit("-", 1)[0])
        doc = _Doc(f"Memory of {name}")
        sc = _Scope(name=name, role=role, memory=doc)
        candidates = sorted({
            *(f"runbook-{s}" for s in SERVICES),
            *(f"customer-{_slug(c)}" for c in CUSTOMERS),
            *(f"postmortem-inc-{n}" for n in range(1000, 1040)),
            *(f"vendor-{_slug(v)}" for v in VENDORS),
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

    # -- content --------------------------------------------------------------------------

    def _sentence(self, role: str) -> str:
        pool = _ROLE_TEMPLATES.get(role, ())
        if pool and self.rng.random() < 0.45:
            return self.w.fill(self.rng.choice(pool))
        return self.w.fill(self.rng.choice(_GENERAL_TEMPLATES))

    def _entry(self, role: str, date: dt.date) -> str:
        r = self.rng
        roll = r.random()
        if roll < 0.08:
            lines = [self._sentence(role), "", f"### {r.choice(_SUBHEADINGS)}", ""]
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

    def _daily(self, sc: _Scope, day: int) -> tuple[int, str]:
        """One day's log in Duragent's format; returns the second of the last entry."""
        r = self.rng
        date = self.start + dt.timedelta(days=day)
        minutes = sorted(r.sample(range(7 * 60, 23 * 60), r.randint(2, 8)))
        parts = [f"# {date.isoformat()}\n"]
        for m in minutes:
            parts.append(f"\n## {m // 60:02d}:{m % 60:02d}\n\n{self._entry(sc.role, date)}\n")
        return minutes[-1] * 60 + r.randint(0, 59), "".join(parts)

    def _fact(self) -> str:
        return self.w.fill(self.rng.choice(_FACT_TEMPLATES))

    def _reflect_content(self, sc: _Scope) -> str:
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

    def _scratch_content(self, sc: _Scope) -> str:
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

    def _note_doc(self, name: str) -> _Doc:
        w = self.w
        title = name.replace("-", " ").capitalize()
        doc = _Doc(title, w.fill("Kept by the agent; last reviewed with {person}."))
        summary = doc.section("Summary")
        for _ in range(self.rng.randint(2, 5)):
            summary.append(self._fact())
        steps = doc.section("Details")
        for _ in range(self.rng.randint(1, 4)):
            steps.append(self._sentence("ops"))
        doc.section("Log")
        return doc

    def _world_doc(self, topic: str) -> _Doc:
        r, w = self.rng, self.w
        if topic == "people":
            doc = _Doc("People")
            for person in r.sample(PEOPLE, r.randint(6, 14)):
                b = doc.section(person)
                b += [f"Role: {r.choice(ROLES)}", f"Team: {r.choice(TEAMS)}",
                      f"Timezone: {r.choice(TIMEZONES)}"]
                if r.random() < 0.6:
                    b.append(w.fill("Prefers short updates; ask about {service} first."))
            return doc
        if topic == "systems":
            doc = _Doc("Systems")
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
        doc = _Doc(f"{title}: {rest}" if title else topic.replace("-", " ").capitalize())
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

    # -- one day --------------------------------------------------------------------------

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
        self._write(ts, "alice", "edit", "directives/memory.md", _DIRECTIVE, "directive")
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

    def _write_daily(self, ts: int, sc: _Scope, date: str, text: str) -> None:
        path = f"agents/{sc.name}/memory/daily/{date}.md"
        self._write(ts, sc.name, "remember", path, text, "daily")

    def _reflect(self, ts: int, sc: _Scope) -> None:
        path = f"agents/{sc.name}/memory/MEMORY.md"
        self._write(ts, sc.name, "reflect", path, self._reflect_content(sc), "memory")

    def _scratch(self, ts: int, sc: _Scope) -> None:
        path = f"agents/{sc.name}/memory/SCRATCHPAD.md"
        self._write(ts, sc.name, "memory_write", path, self._scratch_content(sc), "scratchpad")

    def _create_note(self, ts: int, sc: _Scope, note: str) -> None:
        doc = sc.notes[note] = self._note_doc(note)
        path = f"agents/{sc.name}/memory/notes/{note}.md"
        self._write(ts, sc.name, "memory_write", path, doc.render(), "note")

    def _update_note(self, ts: int, sc: _Scope) -> None:
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

    def _update_topic(self, ts: int, sc: _Scope) -> None:
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

    def _person_scope_edit(self, ts: int, sc: _Scope, user: str) -> None:
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


_DIRECTIVE = """\
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

# --------------------------------------------------------------------------------------------
# Public entry points
# --------------------------------------------------------------------------------------------


def _git(repo: Path, *args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed: {proc.stderr.strip()}")
    return proc.stdout


def _prepare_dir(path: Path, force: bool) -> None:
    """Refuse to build over existing content unless forced, and never wipe something vital."""
    if path.exists() and not path.is_dir():
        raise FileExistsError(f"{path} exists and is not a directory")
    if path.is_dir() and any(path.iterdir()):
        if not force:
            raise FileExistsError(f"{path} is not empty (use --force to wipe it)")
        resolved = path.resolve()
        cwd = Path.cwd().resolve()
        if (resolved == Path(resolved.anchor) or resolved == Path.home().resolve()
                or cwd == resolved or resolved in cwd.parents):
            raise PermissionError(f"refusing to wipe {resolved}")
        shutil.rmtree(resolved)
    path.mkdir(parents=True, exist_ok=True)


def build_corpus(path: Path, preset: str = "small", *, seed: int = 7,
                 force: bool = False, imported: bool = False) -> dict[str, Any]:
    """Build the workspace repository at `path` and return its stats.

    Benchmarks import this so that every figure is measured on the same, reproducible workspace.
    The stats hold `files`, `commits`, `seconds`, `scopes`, `world_topics`, plus `kinds`
    (final file count per logical kind), `head` (the commit sha) and `imported`.

    `imported=True` leaves the repository as `git fast-import` and a checkout leave it: the
    same commits (same HEAD), but no commit-graph, as a team's existing history would arrive.
    """
    if preset not in PRESETS:
        raise ValueError(f"unknown preset {preset!r}; choose from {', '.join(PRESETS)}")
    path = Path(path)
    _prepare_dir(path, force)
    started = time.perf_counter()  # the build only, not wiping an old corpus
    _git(path, "init", "-q", "-b", "main")
    importer = _Importer(path)
    try:
        corpus = _Corpus(PRESETS[preset], seed, importer)
        corpus.run()
    except BaseException:
        try:
            importer.close()
        except RuntimeError:
            pass
        raise
    importer.close()
    _git(path, "reset", "-q", "--hard", "HEAD")
    if not imported:  # what memoryui's housekeeping keeps on a workspace it writes
        _git(path, "commit-graph", "write", "--reachable", "--changed-paths")
    head = _git(path, "rev-parse", "HEAD").strip()
    return {
        "files": len(corpus.files),
        "commits": importer.commits,
        "seconds": round(time.perf_counter() - started, 3),
        "scopes": [s.name for s in corpus.scopes],
        "world_topics": list(corpus.topics),
        "kinds": dict(sorted(corpus.kinds.items())),
        "head": head,
        "imported": imported,
    }


def main(argv: list[str] | None = None) -> int:
    """CLI: build a preset corpus and print a one-line summary."""
    parser = argparse.ArgumentParser(prog="python -m bench.corpus", description=__doc__)
    parser.add_argument("--preset", choices=sorted(PRESETS), default="small")
    parser.add_argument("--dir", required=True, type=Path, help="workspace directory to create")
    parser.add_argument("--force", action="store_true", help="wipe DIR if it is not empty")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--imported", action="store_true",
                        help="no commit-graph: history as a team's own repository arrives")
    args = parser.parse_args(argv)
    try:
        stats = build_corpus(args.dir, args.preset, seed=args.seed, force=args.force,
                             imported=args.imported)
    except (FileExistsError, PermissionError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    variant = " imported" if args.imported else ""
    print(f"corpus {args.preset}{variant} (seed {args.seed}) at {os.fspath(args.dir)}: "
          f"{stats['files']} files, {stats['commits']} commits, {stats['seconds']:.1f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
