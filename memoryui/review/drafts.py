"""The promotion editor's starting point: the target's text with the entries in place, and
its size against the framework's budget (before and after).

Text rules (heading demotion, fences, SKILL.md front matter) live in the store
(`memoryui.store.promote`, `memoryui.store.skills`); this module only decides what to call
them with. Plain Python: no Django.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from memoryui.store import Kind, Store, promote, skills
from memoryui.store.budgets import Budget, count_lines

from .entries import Item
from .targets import Target


@dataclass
class BudgetInfo:
    budget: Budget | None
    size: int
    lines: int
    old_size: int | None
    old_lines: int | None

    @property
    def ratio(self) -> float:
        return self.budget.ratio(self.size, self.lines) if self.budget else 0.0

    @property
    def state(self) -> str:
        return self.budget.state(self.size, self.lines) if self.budget else "ok"

    @property
    def old_ratio(self) -> float:
        if not self.budget or self.old_size is None:
            return 0.0
        return self.budget.ratio(self.old_size, self.old_lines or 0)

    @property
    def percent(self) -> int:
        return round(self.ratio * 100)

    @property
    def crosses(self) -> bool:
        """Over the budget after the promotion, and bigger than before: ask first."""
        return self.state == "over" and self.ratio > self.old_ratio

    @property
    def limits(self) -> str:
        if not self.budget:
            return ""
        parts = []
        if self.budget.max_bytes:
            parts.append(f"{self.size:,} / {self.budget.max_bytes:,} bytes")
        if self.budget.max_lines:
            parts.append(f"{self.lines:,} / {self.budget.max_lines:,} lines")
        return " · ".join(parts)


def budget_info(store: Store, kind: Kind, text: str, old_text: str | None) -> BudgetInfo:
    return BudgetInfo(store.layout.budget(kind), len(text.encode()), count_lines(text),
                      None if old_text is None else len(old_text.encode()),
                      None if old_text is None else count_lines(old_text))


@dataclass
class Draft:
    target: Target
    items: list[Item]
    text: str
    place: int | None  # the heading the entries go under (None: at the end)
    headings: list[promote.Heading] = field(default_factory=list)
    description: str = ""


def _title(name: str) -> str:
    words = name.replace("_", " ").replace("-", " ").split()
    return " ".join(words)[:1].upper() + " ".join(words)[1:] if words else name


def make_draft(target: Target, items: list[Item], place: int | None = None,
               description: str = "") -> Draft:
    """The target's current text with the entries inserted where the lead chose.

    A new skill gets its SKILL.md front matter (name, `description`); a new world topic a
    title; an existing file keeps its text with the entries under heading `place`.
    """
    texts = [it.entry.text for it in items]
    if target.text is None:
        if target.kind == Kind.SKILL:
            body = f"# {_title(target.name or '')}\n\n{promote.format_entries(texts, 1)}\n"
            text = skills.build(target.name or "", description.strip(), body)
        elif target.kind == Kind.WORLD:
            text = f"# {_title(target.name or '')}\n\n{promote.format_entries(texts, 1)}\n"
        else:
            text = promote.format_entries(texts, 0) + "\n"
        return Draft(target, items, text, None, [], description)
    found = promote.headings(target.text)
    if place is not None and not 0 <= place < len(found):
        place = None
    block = promote.format_entries(texts, promote.level_at(target.text, place))
    return Draft(target, items, promote.insert(target.text, block, place), place, found,
                 description)


def default_message(target: Target, items: list[Item]) -> str:
    scopes = sorted({it.scope for it in items})
    n = len(items)
    what = "1 entry" if n == 1 else f"{n} entries"
    return f"Promote {what} from {', '.join(scopes)} into {target.path}"
