"""Whether HTML from memoryui.rendering is inert: allowed tags, safe attributes and URLs only."""

from __future__ import annotations

import re
from html.parser import HTMLParser

from memoryui.rendering import ALLOWED_TAGS

URL_ATTRS = {"href", "src", "action", "formaction", "xlink:href", "background", "poster", "data"}
SAFE_ATTRS = {
    "href", "title", "src", "alt", "id", "class", "align", "scope", "start", "open",
    "type", "checked", "disabled", "rel",
}  # fmt: skip


class _Collector(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, attrs))

    def handle_startendtag(self, tag, attrs):
        self.tags.append((tag, attrs))


def _tags(out: str) -> list[tuple[str, list[tuple[str, str | None]]]]:
    parser = _Collector()
    parser.feed(out)
    parser.close()
    return parser.tags


def _normalize_url(value: str) -> str:
    """What a browser would see as the scheme: no whitespace/control chars, lower case."""
    return re.sub(r"[\x00-\x20\x7f-\xa0\s]+", "", value).lower()


def assert_inert(out: str) -> None:
    assert "<script" not in out.lower()
    # Text is escaped, so every "<" left in the output starts a real tag; attribute values
    # are always double-quoted with '"' escaped, so blanking them leaves only names.
    for tag_text in re.findall(r"<[^>]*>", out):
        names_only = re.sub(r'"[^"]*"', '""', tag_text)
        assert not re.search(r"\son\w+\s*=", names_only, re.I), tag_text
        assert "'" not in names_only, tag_text
    for tag, attrs in _tags(out):
        assert tag in ALLOWED_TAGS, tag
        for name, value in attrs:
            assert not name.startswith("on"), (tag, name)
            assert name in SAFE_ATTRS, (tag, name)
            if name in URL_ATTRS and value:
                url = _normalize_url(value)
                assert not url.startswith(("javascript:", "vbscript:", "data:")), (tag, value)
                scheme = re.match(r"([a-z][a-z0-9+.-]*):", url)
                assert scheme is None or scheme.group(1) in {"http", "https", "mailto"}, url
            if name == "class":
                assert "js-" not in (value or ""), value
            if name == "id":
                assert (value or "").startswith(("md-", "fn:", "fnref")), value
        if tag == "input":
            names = {n for n, _ in attrs}
            assert ("type", "checkbox") in attrs and "disabled" in names, attrs
        if tag == "a" and any(n == "href" for n, _ in attrs):
            assert ("rel", "nofollow noopener") in attrs, attrs
