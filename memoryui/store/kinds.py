"""The logical kinds of memory and a place in the workspace (kind, scope, name): the
vocabulary layouts, budgets and the tools share, apart from any layout's paths."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Kind(StrEnum):
    WORLD = "world"
    GLOBAL = "global"
    MEMORY = "memory"
    DAILY = "daily"
    NOTE = "note"
    SCRATCHPAD = "scratchpad"
    SKILL = "skill"
    DIRECTIVE = "directive"


# Kinds outside any scope that every agent's framework loads: readable by every scope token.
SHARED_KINDS = frozenset({Kind.WORLD, Kind.GLOBAL, Kind.SKILL, Kind.DIRECTIVE})

KIND_LABELS = {
    Kind.WORLD: "World topic",
    Kind.GLOBAL: "Global memory",
    Kind.MEMORY: "MEMORY.md",
    Kind.DAILY: "Daily log",
    Kind.NOTE: "Note",
    Kind.SCRATCHPAD: "Scratchpad",
    Kind.SKILL: "Skill",
    Kind.DIRECTIVE: "Directive",
}


@dataclass(frozen=True, order=True)
class Address:
    """A logical place in the workspace: kind, owning scope (if any) and name (if any)."""

    kind: Kind
    scope: str | None = None
    name: str | None = None
