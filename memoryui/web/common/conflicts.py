"""The one conflict component: every conflict view (the editor's and the review editor's
stale saves, sync conflicts, revert conflicts) builds its sides here and draws them with
`web/_conflict_sides.html`; every preview renders conflict regions here.

- `conflict_sides`: what each side changed from their common base (two drawn diffs; one,
  mine against theirs, when the base is unknown) and the base, ours and theirs texts.
- `preview_html`: a text's rendered preview with each conflict region drawn as a
  conflict block (each side labelled and rendered), never as markdown.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.utils.html import format_html
from django.utils.safestring import mark_safe

from memoryui.rendering import render_markdown
from memoryui.store.conflicts import Piece, pieces
from memoryui.web.diffview import FileView, file_views, text_diff

ROLE_NAMES = {"ours": "One side", "base": "Common base", "theirs": "Other side"}


@dataclass(frozen=True)
class Names:
    """How a view names its sides, and the id prefix of their texts (unique per page)."""

    ours: str
    base: str
    theirs: str
    ids: str


@dataclass
class DiffPart:
    summary: str
    files: list[FileView]
    open: bool = True


@dataclass
class TextPart:
    id: str
    summary: str
    text: str
    open: bool = False


@dataclass
class ConflictSides:
    """The template's `sides`: diffs first, then the texts."""

    diffs: list[DiffPart] = field(default_factory=list)
    texts: list[TextPart] = field(default_factory=list)


def _cap(name: str) -> str:
    return name[:1].upper() + name[1:]


def _state(text: str | None, what: str) -> str:
    return what if text is None else ""


def conflict_sides(path: str, base: str | None, ours: str | None, theirs: str | None,
                   names: Names, *, base_known: bool = True,
                   open_texts: tuple[str, ...] = ()) -> ConflictSides:
    """Both changes from the base (the other side's first: it is what the reader has not
    seen) and the three texts; None texts are absent on that side (deleted, or never
    there). Without a known base, one diff: ours against theirs."""
    out = ConflictSides()
    if base_known:
        out.diffs.append(DiffPart(f"{_cap(names.base)} → {names.theirs}",
                                  file_views([text_diff(base, theirs, path)])))
        out.diffs.append(DiffPart(f"{_cap(names.base)} → {names.ours}",
                                  file_views([text_diff(base, ours, path)])))
    else:
        out.diffs.append(DiffPart(f"{_cap(names.ours)} → {names.theirs}",
                                  file_views([text_diff(ours, theirs, path)])))
    sides = [("base", names.base, base, " (the file did not exist)")] if base_known else []
    sides += [("ours", names.ours, ours, " (deleted)"), ("theirs", names.theirs, theirs,
                                                        " (deleted)")]
    for role, name, text, absent in sides:
        out.texts.append(TextPart(f"{names.ids}-{role}",
                                  _cap(name) + _state(text, absent), text or "",
                                  role in open_texts))
    return out


def _side_html(piece: Piece) -> str:
    parts = []
    for side in piece.sides:
        body = render_markdown(side.text) if side.text.strip() else \
            '<p class="muted">(nothing)</p>'
        parts.append(format_html(
            '<div class="conflict-side conflict-{}"><p class="conflict-side-label">{}</p>{}'
            "</div>", side.role, side.label or ROLE_NAMES[side.role], mark_safe(body)))
    return format_html('<div class="conflict-block" role="group" aria-label="Conflict">'
                       '<p class="conflict-block-title">Conflict: both sides changed this. '
                       "Keep one, or combine them, and remove the markers.</p>{}</div>",
                       mark_safe("".join(parts)))


def preview_html(text: str) -> str:
    """The rendered text, conflict regions drawn as conflict blocks; safe HTML."""
    cut = pieces(text)
    if all(not p.sides and not p.stray for p in cut):
        return render_markdown(text)
    out = []
    for piece in cut:
        if piece.sides:
            out.append(_side_html(piece))
        elif piece.stray:
            out.append(format_html('<p class="conflict-stray"><code>{}</code></p>', piece.text))
        else:
            out.append(render_markdown(piece.text))
    return "".join(out)
