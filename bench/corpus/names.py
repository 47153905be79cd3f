"""Names in a corpus that do not depend on the seed: scopes, world topics, and the labeled
handbook facts that search by meaning is measured on."""

from __future__ import annotations

import json
import re
from pathlib import Path

from bench.corpus.vocabulary import (
    CUSTOMERS,
    DATABASES,
    FEATURES,
    JOBS,
    REGIONS,
    SCOPE_BASES,
    SCOPE_ROLES,
    SERVICES,
    SYMPTOMS,
    TEAMS,
    VENDORS,
)

LABELS = Path(__file__).resolve().parent.parent / "labels"


def paraphrase_facts() -> list[dict[str, str]]:
    """The labeled facts and the paraphrase queries that ask for them."""
    return list(json.loads((LABELS / "paraphrase_queries.json").read_text())["facts"])


def handbook_path(name: str) -> str:
    return f"memory/world/handbook-{name}.md"


def scope_names(count: int) -> list[str]:
    """Scope names in a fixed order (`ops-bot` first), independent of the seed."""
    names = list(SCOPE_BASES[:count])
    n = 1
    while len(names) < count:
        for role in SCOPE_ROLES:
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
        [f"customer-{slug(c)}" for c in CUSTOMERS],
        [f"team-{t}" for t in TEAMS],
        [f"vendor-{slug(v)}" for v in VENDORS],
        [f"region-{r}" for r in REGIONS],
        [f"runbook-{s}" for s in SERVICES],
        [f"job-{j}" for j in JOBS],
        [f"database-{d}" for d in DATABASES],
        [f"feature-{slug(f)}" for f in FEATURES],
        [f"playbook-{slug(s)}" for s in SYMPTOMS],
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


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")

