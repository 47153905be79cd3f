"""What a drawn diff can do when the texts of its two sides are known.

- Expand context (as GitHub does): the unchanged regions a diff hides between its hunks,
  above the first and below the last, become rows "↓ / ↑ / all N lines". With htmx a row
  fetches the hidden lines of the *new* side (identical on both sides there) from
  `history.context`; without JavaScript it is a link to the same page with
  `?expand=<file anchor>:<first>-<last>` (or `?context=all`), drawn expanded here.
- Rendered (prose) diff for markdown: blocks diffed by `memoryui.store.prosediff`, each
  rendered by the one safe renderer, insertions in `<ins>`, deletions in `<del>`. The
  choice (Source | Rendered) lives in the `memoryui_diffview` cookie set by
  `history.context.view_mode`.

Only diff pages with known revisions pass a source (commit, compare); pending changes
and review diffs have none and draw as before.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import urlencode

from django.http import HttpRequest, QueryDict
from django.urls import reverse

from memoryui.rendering import clean_html, render_markdown, too_large
from memoryui.store import Store
from memoryui.store.errors import StoreError
from memoryui.store.prosediff import DEL_CLOSE, DEL_OPEN, INS_CLOSE, INS_OPEN, prose_diff
from memoryui.store.worddiff import Budget

from .common.errors import BadInput
from .diffview import FileView, Row, Side, SplitRow

CHUNK = 20  # lines one "↑" or "↓" shows
COOKIE = "memoryui_diffview"
MAX_EXPANDS = 200
EXPAND_RE = re.compile(r"([A-Za-z0-9_-]{1,1100}):(\d{1,9})-(\d{1,9})")
_TAG_RE = re.compile(r"(<[^>]*>)")


def text_lines(text: str) -> list[str]:
    """Lines numbered as git numbers them (split at "\\n" only)."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def is_markdown(path: str) -> bool:
    return path.lower().endswith((".md", ".markdown"))


def prefers_prose(request: HttpRequest) -> bool:
    return request.COOKIES.get(COOKIE) == "rendered"


# --------------------------------------------------------------------------- expand rows


@dataclass
class Gap:
    """Hidden unchanged lines `start`..`end` of the new side; old number = new + shift."""

    start: int
    end: int
    shift: int
    pos: str  # top | middle | bottom: which expand directions make sense
    links: list[dict] = field(default_factory=list)

    @property
    def count(self) -> int:
        return self.end - self.start + 1


def make_gap(path: str, anchor: str, rev: str, start: int, end: int, shift: int, pos: str,
             *, split: bool, page: QueryDict | None, page_path: str = "") -> Gap:
    """A gap row with its links: htmx fetches rows; the plain href reloads the page with
    the region expanded (or, with no page to go back to, opens the rows alone)."""
    gap = Gap(start, end, shift, pos)
    base = reverse("diff_context", args=[path]) + "?"
    common = {"rev": rev, "start": start, "end": end, "shift": shift, "pos": pos,
              "anchor": anchor, **({"view": "split"} if split else {})}

    def link(show: str, first: int, last: int, label: str, title: str) -> dict:
        hx = base + urlencode({**common, "show": show})
        href = hx
        if page is not None:
            q = page.copy()
            q.appendlist("expand", f"{anchor}:{first}-{last}")
            href = page_path + "?" + q.urlencode() + "#" + anchor
        return {"show": show, "label": label, "title": title, "hx": hx, "href": href}

    if gap.count > CHUNK and pos != "top":
        gap.links.append(link("down", start, start + CHUNK - 1, "↓",
                              f"Show {CHUNK} more lines below"))
    if gap.count > CHUNK and pos != "bottom":
        gap.links.append(link("up", end - CHUNK + 1, end, "↑",
                              f"Show {CHUNK} more lines above"))
    gap.links.append(link("all", start, end, f"Expand all {gap.count} line"
                          f"{'s' if gap.count != 1 else ''}", "Show every hidden line here"))
    return gap


def segments(start: int, end: int, shown: list[tuple[int, int]]) -> list[tuple[bool, int, int]]:
    """`start`..`end` cut into (visible, first, last) runs by the expanded ranges."""
    out: list[tuple[bool, int, int]] = []
    cur = start
    for a, b in sorted(shown):
        a, b = max(a, cur), min(b, end)
        if a > b:
            continue
        if a > cur:
            out.append((False, cur, a - 1))
        out.append((True, a, b))
        cur = b + 1
    if cur <= end:
        out.append((False, cur, end))
    return out


def hunk_gaps(fv: FileView, nlines: int) -> list[tuple[int, int, int, str]] | None:
    """(first, last, shift, pos) of the region before each hunk, then after the last;
    None when the text does not fit the diff (never draw wrong numbers)."""
    out = []
    prev_end = shift = 0
    for i, h in enumerate(fv.diff.hunks):
        old_count = sum(1 for ln in h.lines if ln.op in (" ", "-"))
        new_count = sum(1 for ln in h.lines if ln.op in (" ", "+"))
        first = h.new_start if new_count else h.new_start + 1
        if first - 1 < prev_end:
            return None
        out.append((prev_end + 1, first - 1, shift if i else 0, "top" if i == 0 else "middle"))
        new_end = h.new_start + new_count - 1 if new_count else h.new_start
        old_end = h.old_start + old_count - 1 if old_count else h.old_start
        shift, prev_end = old_end - new_end, new_end
    if nlines < prev_end:
        return None
    out.append((prev_end + 1, nlines, shift, "bottom"))
    return out


def context_rows(lines: list[str], first: int, last: int, shift: int, nonl: bool,
                 split: bool) -> list:
    """Unchanged lines `first`..`last` as unified Rows or SplitRows."""
    out: list = []
    for n in range(first, last + 1):
        segs = [(lines[n - 1], False)]
        end = nonl and n == len(lines)
        if split:
            out.append(SplitRow("line", Side(n + shift, segs, " ", end),
                                Side(n, list(segs), " ", end)))
        else:
            out.append(Row("ctx", n + shift, n, segs, nonl=end))
    return out


# --------------------------------------------------------------------------- prose diff


def marks_to_tags(html: str) -> str:
    """Word marks in rendered HTML as <ins>/<del>, closed and reopened around every tag so
    they never straddle one; marks inside a tag are dropped. Cleaned again after."""
    out: list[str] = []
    state = {"ins": False, "del": False}
    toggles = {INS_OPEN: ("ins", True), INS_CLOSE: ("ins", False),
               DEL_OPEN: ("del", True), DEL_CLOSE: ("del", False)}
    for piece in _TAG_RE.split(html):
        if piece.startswith("<"):
            out.append("".join(ch for ch in piece if ch not in toggles))
            continue
        if not piece:
            continue
        out.extend(f"<{t}>" for t, on in state.items() if on)
        for ch in piece:
            if ch in toggles:
                tag, on = toggles[ch]
                if state[tag] != on:
                    state[tag] = on
                    out.append(f"<{tag}>" if on else f"</{tag}>")
            else:
                out.append(ch)
        out.extend(f"</{t}>" for t, on in state.items() if on)
    return clean_html("".join(out))


def prose_html(old: str | None, new: str | None, budget: Budget | None = None) -> str:
    """The rendered document of `new` with what changed since `old` marked; safe HTML.
    Word marks are paid from `budget` (see worddiff)."""
    parts = []
    for block in prose_diff(old, new, budget):
        if block.op == "equal":
            parts.append(render_markdown(block.text))
        elif block.op == "ins":
            parts.append(f'<ins class="prose-block prose-ins">{render_markdown(block.text)}</ins>')
        elif block.op == "del":
            parts.append(f'<del class="prose-block prose-del">{render_markdown(block.text)}</del>')
        else:
            parts.append('<div class="prose-block prose-change">'
                         f"{marks_to_tags(render_markdown(block.text))}</div>")
    return "".join(parts)


# --------------------------------------------------------------------------- the source


@dataclass
class DiffSource:
    """The texts on each side of a diff, and what this reader asked to see of them."""

    old_text: Callable[[str], str | None]
    new_text: Callable[[str], str | None]
    new_rev: str | None = None  # expand rows need it; None draws none
    page: QueryDict | None = None  # the page's query, for links that work without JS
    page_path: str = ""  # path and query, where the Source | Rendered switch comes back
    expand: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    expand_all: bool = False
    prose: bool = False
    budget: Budget = field(default_factory=Budget)  # word marks, every file of the page

    def toggle(self, anchor: str) -> dict:
        url = reverse("diff_view_mode")
        nxt = self.page_path + "#" + anchor
        return {"current": "rendered" if self.prose else "source",
                "source": url + "?" + urlencode({"mode": "source", "next": nxt}),
                "rendered": url + "?" + urlencode({"mode": "rendered", "next": nxt})}

    def decorate(self, fv: FileView, split: bool) -> None:
        """Add the prose diff or the expand rows to one drawn file."""
        fd = fv.diff
        if not fd.hunks:
            return
        if is_markdown(fd.path):
            fv.prose_toggle = self.toggle(fv.anchor)
            if self.prose:
                old = None if fd.status == "added" else self.old_text(fd.old_path or fd.path)
                new = None if fd.status == "deleted" else self.new_text(fd.path)
                if not too_large(old, new):  # (over the limit: its source diff)
                    fv.prose = prose_html(old, new, self.budget)
                    return
        if not self.new_rev or fd.status not in ("modified", "renamed"):
            return
        text = self.new_text(fd.path)
        if text is None or too_large(text):  # no expand rows over the render limit
            return
        lines = text_lines(text)
        gaps = hunk_gaps(fv, len(lines))
        if gaps is None:
            return
        shown = [(1, len(lines))] if self.expand_all else self.expand.get(fv.anchor, [])
        nonl = bool(text) and not text.endswith("\n")

        def gap_rows(first: int, last: int, shift: int, pos: str) -> list:
            out: list = []
            for visible, a, b in segments(first, last, shown):
                if visible:
                    out += context_rows(lines, a, b, shift, nonl, split)
                    continue
                seg_pos = ("top" if pos == "top" and a == first else
                           "bottom" if pos == "bottom" and b == last else "middle")
                gap = make_gap(fd.path, fv.anchor, self.new_rev or "", a, b, shift, seg_pos,
                               split=split, page=self.page,
                               page_path=self.page_path.split("?", 1)[0])
                out.append(SplitRow("gap", gap=gap) if split else Row("gap", gap=gap))
            return out

        rows = fv.split if split else fv.rows
        merged: list = []
        i = 0
        for r in rows:
            if r.kind == "hunk":
                merged += gap_rows(*gaps[i])
                i += 1
            merged.append(r)
        merged += gap_rows(*gaps[-1])
        if split:
            fv.split = merged
        else:
            fv.rows = merged


def parse_expand(query: QueryDict) -> tuple[dict[str, list[tuple[int, int]]], bool]:
    """`?expand=<anchor>:<first>-<last>` (repeatable) and `?context=all`; ValueError with
    the message for a 400 when malformed."""
    ctx = query.get("context", "")
    if ctx not in ("", "all"):
        raise ValueError(f"invalid context {ctx!r}: use context=all")
    values = query.getlist("expand")
    if len(values) > MAX_EXPANDS:
        raise ValueError(f"too many expanded regions (at most {MAX_EXPANDS})")
    out: dict[str, list[tuple[int, int]]] = {}
    for v in values:
        m = EXPAND_RE.fullmatch(v)
        if not m or not 1 <= int(m.group(2)) <= int(m.group(3)):
            raise ValueError(f"invalid expand {v[:80]!r}: use <file anchor>:<first>-<last>, "
                             "line numbers from 1, first <= last")
        out.setdefault(m.group(1), []).append((int(m.group(2)), int(m.group(3))))
    return out, ctx == "all"


def diff_source(request: HttpRequest, store: Store, old_rev: str | None,
                new_rev: str | None) -> DiffSource:
    """The source for a diff between two commits (`old_rev` None: a root commit).
    A malformed `expand`/`context` is a BadInput (400)."""

    def at(rev: str | None) -> Callable[[str], str | None]:
        def load(path: str) -> str | None:
            if not rev:
                return None
            try:
                return store.file_at(path, rev)
            except StoreError:
                return None
        return load

    try:
        expand, expand_all = parse_expand(request.GET)
    except ValueError as exc:
        raise BadInput(str(exc)) from None
    return DiffSource(at(old_rev), at(new_rev), new_rev, page=request.GET,
                      page_path=request.get_full_path(), expand=expand,
                      expand_all=expand_all, prose=prefers_prose(request))
