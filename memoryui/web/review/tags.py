"""`{% neighbours_link it as nb %}`: a review card's "Show neighbours" link, written once in
Python.

The link is a plain URL (with `next`, for a browser without JavaScript) and an htmx request
(into the card's own slot). A card's promotion targets are one GET form in
`web/review/_entry.html` (the entry's key once, a button per target), not links.
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


@register.simple_tag(takes_context=True)
def neighbours_link(context: template.Context, it: Item) -> Link:
    """The card's neighbours link; the context holds `urls` and `next_q`
    (helpers.base_context)."""
    entry = f"{context['urls']['entry']}?entry={it.q}"
    return Link(f"{entry}&next={context['next_q']}", entry)
