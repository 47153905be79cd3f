"""The corpus presets, its fixed last day, and how often each kind of write happens."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

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
