"""The promotion editor's starting point: the target's text with the entries in place, and
its size against the framework's budget (before and after).

Text rules (heading demotion, fences, SKILL.md front matter) live in the store
(`memoryui.store.promote`, `memoryui.store.skills`); this module only decides what to call
them with. Plain Python: no Django.
"""

from __future__ import annotations

import dataclasses
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


def entry_texts(target: Target, items: list[Item], provenance: bool) -> list[str]:
    """What each entry brings: its text, with its dated marker linking back when asked."""
    if not provenance:
        return [it.entry.text for it in items]
    return [promote.with_marker(it.entry.text, promote.marker(
        it.date, it.scope, it.path, it.entry.id, target.path)) for it in items]


def make_draft(target: Target, items: list[Item], place: int | None = None,
               description: str = "", *, provenance: bool = False,
               texts: list[str] | None = None) -> Draft:
    """The target's current text with the entries inserted where the lead chose, in the
    style of that place (a list item after a list, else a paragraph).

    A new skill gets its SKILL.md front matter (name, `description`); a new world topic a
    title; an existing file keeps its text with the entries under heading `place`.
    `provenance` adds a dated marker linking back to each entry; `texts` replaces the
    entries' own texts (a lead's edited block, re-fitted for another target).
    """
    if texts is None:
        texts = entry_texts(target, items, provenance)
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
    block, tight = promote.fit_entries(texts, promote.level_at(target.text, place),
                                       promote.style_at(target.text, place))
    return Draft(target, items, promote.insert(target.text, block, place, tight=tight), place,
                 found, description)


def fill_description(target: Target, text: str, started: str, description: str) -> str:
    """A new skill's Description field, written into the front matter of the text being
    saved.

    The field is applied when the lead changed it since the draft was built (`started`
    holds the description the draft was built with) and left the text's own description
    as drafted: an edit made in the text itself wins. Any other target: the text as is.
    """
    if target.kind != Kind.SKILL or target.text is not None:
        return text
    wanted, current = description.strip(), skills.description_of(text)
    drafted = skills.description_of(started) or ""
    if current is None or wanted == drafted or current != drafted:
        return text
    return skills.with_description(text, wanted)


REFIT_MAX = 200_000


def refit_draft(old: Target | None, new: Target, items: list[Item], *, text: str,
                started: str, place: int | None = None, description: str = "",
                provenance: bool = False) -> Draft:
    """The draft for a new target or place that keeps the lead's edits.

    `text` is the editor's text for the `old` target, `started` the draft it began as.
    Unedited, the draft is simply rebuilt. Edited, the inserted block as the lead left it
    (`promote.edited_block`) is taken out of its old style (list markers, continuation
    indent), its provenance links re-pointed, and fitted into the new place: headings
    demoted, list items re-marked. Within the same file, edits to its other lines stay.
    Texts over REFIT_MAX characters (far past any framework's budget) are rebuilt, so a
    line diff never gets expensive.
    """
    text, started = text.replace("\r\n", "\n"), started.replace("\r\n", "\n")
    if old is None or text == started or not text.strip() or \
            max(len(text), len(started)) > REFIT_MAX:
        return make_draft(new, items, place, description, provenance=provenance)
    before = old.text if old.text is not None else make_draft(old, [], None, description,
                                                                texts=[]).text
    block, rest = promote.edited_block(before, started, text)
    if not block.strip():
        return make_draft(new, items, place, description, provenance=provenance)
    texts = promote.unfit(promote.relink(block, old.path, new.path))
    if old.path == new.path and new.text is not None:
        # Another place in the same file: the lead's other edits to it stay too (the
        # draft's target stays the file as it is, the version a save is checked against).
        draft = make_draft(dataclasses.replace(new, text=rest), items, place, description,
                           texts=texts)
        return dataclasses.replace(draft, target=new, headings=promote.headings(rest))
    return make_draft(new, items, place, description, texts=texts)


def default_message(target: Target, items: list[Item]) -> str:
    scopes = sorted({it.scope for it in items})
    n = len(items)
    what = "1 entry" if n == 1 else f"{n} entries"
    return f"Promote {what} from {', '.join(scopes)} into {target.path}"
