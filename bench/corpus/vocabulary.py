"""The words a corpus is written with, and the templates that fill them from one seeded RNG.

Varied on purpose, so that search benchmarks see a realistic spread of terms."""

from __future__ import annotations

import random
import re

SCOPE_BASES = (
    "ops-bot", "billing-agent", "support-07", "deploy-bot", "triage-agent", "oncall-bot",
    "sales-assistant", "data-pipeline", "security-scout", "docs-writer", "qa-runner",
    "infra-planner",
)
SCOPE_ROLES = ("support", "billing", "ops", "security", "data", "qa", "sales", "docs")
ROLE_OF_BASE = {
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

GENERAL_TEMPLATES = (
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
ROLE_TEMPLATES: dict[str, tuple[str, ...]] = {
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
SUBHEADINGS = ("Follow-ups", "Handoff", "Root cause", "Customer impact", "Next steps", "Notes")
_TABLES = ("orders", "invoices", "sessions", "payouts", "events", "users", "refunds")
_FIELDS = ("created_at", "currency", "region", "plan_id", "amount", "status", "locale")

FACT_TEMPLATES = (
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


_PICKS: dict[str, tuple[str, ...]] = {
    "service": SERVICES,
    "customer": CUSTOMERS,
    "person": PEOPLE,
    "region": REGIONS,
    "cause": CAUSES,
    "symptom": SYMPTOMS,
    "mitigation": MITIGATIONS,
    "plan": PLANS,
    "sla": SLAS,
    "vendor": VENDORS,
    "feature": FEATURES,
    "month": MONTHS,
    "job": JOBS,
    "queue": QUEUES,
    "db": DATABASES,
    "domain": DOMAINS,
    "team": TEAMS,
    "table": _TABLES,
    "field": _FIELDS,
}
"""Placeholders filled with one of a list's words."""

_NUMBERS: dict[str, tuple[int, int]] = {
    "incident_num": (1000, 9999),
    "cve": (10000, 59999),
    "pct": (5, 99),
    "small": (2, 15),
    "ms": (180, 4200),
    "minutes": (3, 95),
}
"""Placeholders filled with a whole number between two bounds."""


class Words:
    """Fills templates with fresh values from one seeded RNG."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def value(self, key: str) -> str:
        r = self.rng
        base = key.rstrip("0123456789")
        if base in _PICKS:
            return r.choice(_PICKS[base])
        if base in _NUMBERS:
            return str(r.randint(*_NUMBERS[base]))
        if base == "code":
            if r.random() < 0.4:
                return f"E{r.randint(1000, 9999)}"
            return r.choice(NAMED_CODES)
        if base == "code_word":
            return r.choice(("timeout", "panic", "refused", "E" + str(r.randint(1000, 9999))))
        if base == "version":
            return f"v{r.randint(1, 4)}.{r.randint(0, 30)}.{r.randint(0, 15)}"
        if base == "host":
            return f"{r.choice(('web', 'worker', 'db', 'cache', 'edge'))}-{r.randint(1, 40):02d}"
        if base == "ticket":
            return f"{r.choice(('SUP', 'OPS', 'BILL', 'SEC'))}-{r.randint(1000, 99999)}"
        if base == "incident":
            return f"INC-{r.randint(1000, 9999)}"
        if base == "invoice":
            return f"INV-{r.randint(2025, 2026)}-{r.randint(10000, 99999)}"
        if base == "count":
            return f"{r.randint(120, 250000):,}"
        if base == "gb":
            return str(r.choice((2, 4, 6, 8, 12, 16)))
        if base == "amount":
            return f"{r.randint(12, 4800)}.{r.randint(0, 99):02d}"
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

