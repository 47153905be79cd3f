"""A page's HTML as a reader sees it: its visible text, its start tags and its links."""

from __future__ import annotations

import re
from html.parser import HTMLParser


def text_of(html: str) -> str:
    """Visible text with tags removed and whitespace collapsed (what a reader sees)."""
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).strip()


class _Attrs(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict]] = []

    def handle_starttag(self, tag: str, attrs: list) -> None:
        self.tags.append((tag, dict(attrs)))


def tags(html: str) -> list[tuple[str, dict]]:
    p = _Attrs()
    p.feed(html)
    return p.tags


def hrefs(html: str) -> set[str]:
    return {a["href"] for t, a in tags(html) if t == "a" and "href" in a}
