"""A layout's path patterns: templates such as `agents/{scope}/memory/daily/{name}.md`
turned into regexes, globs and git pathspecs, and the name rule each kind's `{name}` keeps."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from . import names
from .errors import InvalidName
from .kinds import Kind


@functools.lru_cache(maxsize=65536)
def name_ok(kind: Kind, name: str) -> bool:
    """A name the kind's rule keeps as it is (cached: a workspace repeats its 365 dates
    across hundreds of scopes, and listing 200k paths checked each one again)."""
    check = NAME_CHECKS.get(kind)
    try:
        return not check or check(name) == name
    except InvalidName:
        return False


NAME_CHECKS = {
    Kind.WORLD: names.validate_world_topic,
    Kind.DAILY: names.validate_date,
    Kind.NOTE: names.validate_note_name,
    Kind.SKILL: names.validate_skill_name,
    Kind.DIRECTIVE: names.validate_note_name,
}


@dataclass(frozen=True)
class Pattern:
    kind: Kind
    template: str  # e.g. "agents/{scope}/memory/daily/{name}.md"
    regex: re.Pattern[str]

    @classmethod
    def make(cls, kind: Kind, template: str) -> Pattern:
        rx = re.escape(template)
        rx = rx.replace(re.escape("{scope}"), r"(?P<scope>[A-Za-z0-9_-]{1,64})")
        rx = rx.replace(re.escape("{name}"), r"(?P<name>[^/]+)")
        return cls(kind, template, re.compile(f"^{rx}$"))

    @functools.cached_property
    def split(self) -> tuple[re.Pattern[str], re.Pattern[str]]:
        """The regex of the template's folder and of its last component: `{scope}` and
        `{name}` never span a "/", so a path matches `regex` exactly when its folder and
        its file name match these (`Layout.address` matches a folder once for its files)."""
        folder, _, base = self.template.rpartition("/")
        return Pattern.make(self.kind, folder).regex, Pattern.make(self.kind, base).regex

    @functools.cached_property
    def fixed(self) -> tuple[tuple[int, str], ...]:
        """(position, name) of the template's literal path components."""
        return tuple((i, part) for i, part in enumerate(self.template.split("/"))
                     if "{" not in part)

    @property
    def scoped(self) -> bool:
        return "{scope}" in self.template

    @property
    def named(self) -> bool:
        return "{name}" in self.template

    def glob(self, scope: str | None = None) -> str:
        g = self.template.replace("{scope}", scope or "*")
        return g.replace("{name}", "*")


def pathspec(p: Pattern, scope: str | None) -> str:
    """A literal path or folder where possible: git's Bloom filters skip glob pathspecs,
    which made kind-filtered history about 6x slower on a 20k-commit workspace."""
    template = p.template.replace("{scope}", scope) if scope else p.template
    if "{" not in template:
        return f":(literal){template}"
    head, _, tail = template.partition("{")
    if "{" not in tail and "/" not in tail.split("}", 1)[1] and head.endswith("/"):
        return f":(literal){head}"  # `dir/{name}.md`: the folder holds only this kind
    return ":(glob)" + p.glob(scope)
