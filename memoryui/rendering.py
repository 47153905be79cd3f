"""Markdown -> sanitized HTML: the only place memory text becomes HTML.

Memory files are written by agents and people we do not fully trust, so everything
Python-Markdown emits (including raw HTML it passes through) is re-parsed and filtered by
one nh3 ``Cleaner`` configuration (an allow-list; no ``style`` attribute, no CSS). Keep every
HTML-producing path here.
"""

from __future__ import annotations

import html
import logging
import re
import textwrap
import threading
import xml.etree.ElementTree as etree
from collections.abc import Iterable

import markdown
import nh3
from markdown.extensions import Extension
from markdown.extensions.toc import slugify_unicode
from markdown.treeprocessors import Treeprocessor

from memoryui.caches import RENDERED, RENDERED_MAX_TEXT

__all__ = ["marked_html", "render_limit", "render_markdown", "too_large"]

log = logging.getLogger(__name__)

# The most bytes of text a page renders or diffs (MEMORYUI_RENDER_LIMIT in settings.py).
# Markdown, sanitizing and difflib take seconds of a worker per megabyte and grow the page with
# it (a 50 MB file takes most of a minute and makes a 110 MB editor page), so pages offer a
# larger file raw and as a download instead.
DEFAULT_RENDER_LIMIT = 1 << 20


def render_limit() -> int:
    """The limit in bytes: the setting when Django is configured, else the default."""
    from django.conf import settings  # (read per call, as settings may change)

    if not settings.configured:
        return DEFAULT_RENDER_LIMIT
    return int(getattr(settings, "MEMORYUI_RENDER_LIMIT", DEFAULT_RENDER_LIMIT))


def size_of(*texts: str | bytes | None) -> int:
    """Bytes of these texts together (UTF-8), measured only as far as the limit needs."""
    limit, total = render_limit(), 0
    for text in texts:
        if not text:
            continue
        # A character is at least a byte: a text with more characters than the limit is
        # over it without being encoded.
        total += len(text) if isinstance(text, bytes) or len(text) > limit \
            else len(text.encode("utf-8", "surrogatepass"))
    return total


def too_large(*texts: str | bytes | None) -> bool:
    """Whether these texts together are over the render limit (a diff counts both sides)."""
    return size_of(*texts) > render_limit()


def fmt_size(size: int) -> str:
    """1.5 MiB, 800 KiB, 12 bytes: sizes in the too-large notices."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale:
            return f"{size / scale:.1f} {unit}".replace(".0 ", " ")
    return f"{size} bytes"


def too_large_html(size: int) -> str:
    """What stands in for rendered text over the limit (no part of the text is in it)."""
    return (f'<p class="render-skipped">This text is too large to render here ({fmt_size(size)}; '
            f"pages render up to {fmt_size(render_limit())}).</p>")

# Heading ids get a prefix so a heading such as "# htmx" or "# csrftoken" cannot clobber
# DOM globals or ids of the surrounding page (GitHub does the same with "user-content-").
ID_PREFIX = "md-"

# --------------------------------------------------------------------------- allow-lists

ALLOWED_TAGS = frozenset(
    {
        "h1", "h2", "h3", "h4", "h5", "h6",
        "p", "br", "hr", "blockquote", "pre", "code", "kbd", "samp",
        "ul", "ol", "li", "dl", "dt", "dd",
        "table", "caption", "thead", "tbody", "tfoot", "tr", "th", "td",
        "a", "img", "abbr",
        "em", "strong", "b", "i", "del", "s", "ins", "mark", "sup", "sub", "small",
        "details", "summary", "div", "span",
        "input",
    }
)  # fmt: skip

# Classes are restricted per tag: arbitrary classes would let content borrow app styles
# (fake flash messages, buttons) or app.js hooks such as ``.js-promote``.
_CLASSES: dict[str, re.Pattern[str]] = {
    "code": re.compile(r"language-[\w+#.-]{1,40}"),
    "a": re.compile(r"footnote-ref|footnote-backref"),
    "div": re.compile(r"footnote|toc"),
    "ul": re.compile(r"contains-task-list"),
    "ol": re.compile(r"contains-task-list"),
    "li": re.compile(r"task-list-item"),
    "table": re.compile(r"front-matter"),
}
_ID_TAGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6", "li", "sup"})
# toc ids carry ID_PREFIX; footnotes use "fn:" / "fnref:" / "fnref2:" ids.
_ID_RE = re.compile(rf"(?:{re.escape(ID_PREFIX)}|fn:|fnref\d*:)[^\s]{{1,200}}")
_ATTRS: dict[str, frozenset[str]] = {
    "a": frozenset({"href", "title"}),
    "img": frozenset({"src", "alt", "title"}),
    "abbr": frozenset({"title"}),
    "th": frozenset({"align", "scope"}),
    "td": frozenset({"align"}),
    "ol": frozenset({"start"}),
    "details": frozenset({"open"}),
    "input": frozenset({"type", "checked", "disabled"}),
}
_VALUES: dict[str, re.Pattern[str]] = {
    "align": re.compile(r"left|center|right"),
    "scope": re.compile(r"row|col"),
    "start": re.compile(r"\d{1,9}"),
    "type": re.compile(r"checkbox"),
}
ALLOWED_PROTOCOLS = frozenset({"http", "https", "mailto"})


def _allow_attribute(tag: str, name: str, value: str) -> str | None:
    """Decide one attribute (None drops it); URL values are checked afterwards against
    ALLOWED_PROTOCOLS by nh3 itself."""
    if name == "class":
        pattern = _CLASSES.get(tag)
        return value if pattern and all(pattern.fullmatch(c) for c in value.split()) else None
    if name == "id":
        return value if tag in _ID_TAGS and _ID_RE.fullmatch(value) else None
    if tag == "input":  # type and disabled are pinned below; checked keeps no value
        return "" if name == "checked" else value
    pattern = _VALUES.get(name)
    return value if pattern is None or pattern.fullmatch(value.strip().lower()) else None


# Every attribute any rule above may keep, per tag; ``_allow_attribute`` then decides values.
_CANDIDATES: dict[str, set[str]] = {
    tag: set(_ATTRS.get(tag, ())) | ({"class"} if tag in _CLASSES else set())
    | ({"id"} if tag in _ID_TAGS else set())
    for tag in ALLOWED_TAGS
}
# An ``<input>`` is only ever a disabled checkbox (a task list item): its type and
# ``disabled`` are set whatever the source says, only ``checked`` is taken from it.
_CANDIDATES["input"] = {"checked"}

# Unknown tags are stripped (not escaped); their text, a <script>'s or <style>'s body
# included, stays as escaped, inert text so a reviewer still sees that something was there.
_CLEANER = nh3.Cleaner(
    tags=set(ALLOWED_TAGS),
    clean_content_tags=set(),
    attributes=_CANDIDATES,
    attribute_filter=_allow_attribute,
    strip_comments=True,
    link_rel="nofollow noopener",
    set_tag_attribute_values={"input": {"type": "checkbox", "disabled": ""}},
    url_schemes=set(ALLOWED_PROTOCOLS),
)


# --------------------------------------------------------------------------- task lists

_TASK_RE = re.compile(r"\[([ xX])\](?:[ \t]+|$)")


class _TaskListProcessor(Treeprocessor):
    """Turn ``- [ ] x`` / ``- [x] x`` items into disabled checkboxes (GitHub style)."""

    def run(self, root: etree.Element) -> None:
        for lst in root.iter():
            if lst.tag not in ("ul", "ol"):
                continue
            found = False
            for li in lst:
                if li.tag != "li":
                    continue
                holder = li
                if not (li.text or "").strip() and len(li) and li[0].tag == "p":
                    holder = li[0]  # loose list: "<li><p>[ ] text</p></li>"
                match = _TASK_RE.match(holder.text or "")
                if not match:
                    continue
                box = etree.Element("input", {"type": "checkbox", "disabled": "disabled"})
                if match.group(1) in "xX":
                    box.set("checked", "checked")
                box.tail = " " + (holder.text or "")[match.end() :]
                holder.text = None
                holder.insert(0, box)
                li.set("class", "task-list-item")
                found = True
            if found:
                lst.set("class", "contains-task-list")


class _TaskListExtension(Extension):
    def extendMarkdown(self, md: markdown.Markdown) -> None:  # noqa: N802 (Markdown API)
        # Priority below "inline" (20) so the item text is final.
        md.treeprocessors.register(_TaskListProcessor(md), "memoryui_tasklist", 8)


# --------------------------------------------------------------------------- front matter

_FRONT_MATTER_RE = re.compile(r"\A---[ \t]*\n(.*?)^(?:---|\.\.\.)[ \t]*(?:\n|\Z)", re.S | re.M)
_KEY_RE = re.compile(r"([A-Za-z_][\w .-]{0,63}?)[ \t]*:(?:[ \t]+(.*)|[ \t]*)$")
_BLOCK_INDICATOR_RE = re.compile(r"[|>][+-]?\d?")


def _parse_front_matter(block: str) -> list[tuple[str, str]] | None:
    """Top-level ``key: value`` pairs, kept as written; None when it is not that shape.

    A line parser rather than YAML on purpose: it shows what the file says, cannot be
    made to expand (YAML alias bombs), and never turns values into other types.
    """
    rows: list[list[str]] = []
    for line in block.split("\n"):
        match = _KEY_RE.match(line)
        if match:
            rows.append([match.group(1), match.group(2) or ""])
        elif rows and (line[:1] in (" ", "\t", "-") or not line.strip()):
            rows[-1].append(line)
        elif not line.strip() or line.startswith("#"):
            continue
        else:
            return None
    result = []
    for key, first, *more in rows:
        first = first.strip()
        rest = textwrap.dedent("\n".join(more)).strip("\n")
        if _BLOCK_INDICATOR_RE.fullmatch(first):
            first = ""
        elif len(first) >= 2 and first[0] == first[-1] and first[0] in "'\"" and not rest:
            first = first[1:-1]
        result.append((key, "\n".join(p for p in (first, rest) if p)))
    return result


def _front_matter_html(block: str) -> str:
    rows = _parse_front_matter(block)
    if rows is None:
        return f"<pre><code>{html.escape(block)}</code></pre>\n"
    cells = "".join(
        f'<tr><th scope="row">{html.escape(k)}</th><td>{html.escape(v)}</td></tr>' for k, v in rows
    )
    return f'<table class="front-matter"><tbody>{cells}</tbody></table>\n'


def _split_front_matter(text: str) -> tuple[str, str]:
    """Return (front matter HTML, remaining markdown); SKILL.md and jutul notes start so."""
    match = _FRONT_MATTER_RE.match(text)
    if not match:
        return "", text
    block = match.group(1).rstrip("\n")
    first = next((ln for ln in block.split("\n") if ln.strip()), "")
    if first and not _KEY_RE.match(first):
        return "", text  # "---" rule followed by prose: leave it to Markdown
    body = text[match.end() :]
    return (_front_matter_html(block) if first else ""), body


# --------------------------------------------------------------------------- markdown


def _slugify(value: str, separator: str) -> str:
    return ID_PREFIX + slugify_unicode(value, separator)


_local = threading.local()


def _markdown() -> markdown.Markdown:
    """One ``Markdown`` per thread: instances keep per-document state and are not thread-safe."""
    md = getattr(_local, "md", None)
    if md is None:
        md = markdown.Markdown(
            # "extra" minus attr_list (``{: onclick=...}`` / arbitrary ids and classes).
            extensions=[
                "abbr",
                "def_list",
                "fenced_code",
                "footnotes",
                "md_in_html",
                "tables",
                "sane_lists",
                "toc",
                _TaskListExtension(),
            ],
            extension_configs={
                "toc": {"slugify": _slugify, "permalink": False},
                "tables": {"use_align_attribute": True},
            },
            output_format="html",
        )
        _local.md = md
    return md


def render_markdown(text: str) -> str:
    """Render memory markdown to HTML that is safe to mark safe in a template; text over
    the render limit gets a notice instead (pages offer it raw)."""
    text = text or ""
    if too_large(text):
        return too_large_html(size_of(text))
    # Most pages show a file that has not changed since the last time: rendering is about
    # half a file page's cost on a MEMORY.md.
    hit = RENDERED.get(text)
    if hit is not None:
        return hit[1]
    rendered = _render(text)
    if len(text) <= RENDERED_MAX_TEXT:
        RENDERED.put(text, (text, rendered))
    return rendered


def _render(text: str) -> str:
    text = text.replace("\r\n", "\n").replace("\r", "\n").removeprefix("\ufeff")
    front, body = _split_front_matter(text)
    md = _markdown()
    try:
        md.reset()
        rendered = md.convert(body)
    except Exception:  # a broken file must stay viewable; show it as text
        log.exception("markdown rendering failed; showing the text unrendered")
        rendered = f"<pre><code>{html.escape(body)}</code></pre>"
    finally:
        md.reset()
    return _CLEANER.clean(front + rendered)


# --------------------------------------------------------------------------- search highlights


def marked_html(spans: Iterable[tuple[str, bool]]) -> str:
    """Search highlights as HTML: every piece escaped, matches wrapped in ``<mark>``.

    The search package hands over (text, is_match) spans, so file text can never become
    markup whatever it contains.
    """
    return "".join(
        f"<mark>{html.escape(text)}</mark>" if hit else html.escape(text) for text, hit in spans
    )


# --------------------------------------------------------------------------- prose diffs


def clean_html(fragment: str) -> str:
    """HTML assembled from rendered pieces (the prose diff's word marks), cleaned again by
    the same rules as `render_markdown`, so nothing built after rendering escapes them."""
    return _CLEANER.clean(fragment)
