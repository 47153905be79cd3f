"""`{% card_links it as links %}`: the links of one review card, written once in Python.

A card offers the same entry to several actions (neighbours, promote, each promotion
target), each as a plain link (with `next`, for a browser without JavaScript) and as an
htmx request (with the card's `slot`). Built in the template that was 56 variables a card:
half of the queue page's time on a week of 50 entries. The text and markup stay in
`web/review/_entry.html`; only the URLs come from here, byte for byte what the template
wrote.
"""

from __future__ import annotations

from dataclasses import dataclass

from django import template

from memoryui.review import Item

register = template.Library()


@dataclass(frozen=True, slots=True)
class Link:
    """One action on an entry: `href` for a plain click, `hx` for htmx."""

    href: str
    hx: str
    kind: str = ""
    label: str = ""


@dataclass(frozen=True, slots=True)
class CardLinks:
    neighbours: Link
    promote: Link
    menu: list[Link]


@register.simple_tag(takes_context=True)
def card_links(context: template.Context, it: Item) -> CardLinks:
    """The card's links; the context holds `urls`, `next_q`, `default_kind` and
    `target_kinds` (helpers.base_context)."""
    urls, nq = context["urls"], context["next_q"]
    q, slot = it.q, it.dom_id

    def promote(kind: str, label: str = "") -> Link:
        base = f"{urls['promote']}?entry={q}&kind={kind}"
        return Link(f"{base}&next={nq}", f"{base}&slot={slot}", kind, label)

    entry = f"{urls['entry']}?entry={q}"
    return CardLinks(Link(f"{entry}&next={nq}", entry), promote(context["default_kind"]),
                     [promote(value, label) for value, label in context["target_kinds"]])
