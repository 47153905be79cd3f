"""Characters a reader cannot see, made visible in a proposal's diff.

Zero-width characters (U+200B-U+200D, U+2060, U+FEFF) and bidi controls (U+202A-U+202E,
U+2066-U+2069) change what an agent reads, or the order a person sees, without showing.
Both views of a proposal mark each one as a token naming its code point: the source view
gets (text, changed, label) triples its template draws (autoescaped, no HTML built here);
the rendered view gets each one replaced by an `<abbr>` inside its text, cleaned again by
the renderer's own rules.
"""

from __future__ import annotations

import html
import re
import unicodedata

from memoryui.rendering import clean_html
from memoryui.web.diffview import FileView

INVISIBLE = frozenset(chr(c) for c in (*range(0x200B, 0x200E), 0x2060, 0xFEFF,
                                      *range(0x202A, 0x202F), *range(0x2066, 0x206A)))
_RE = re.compile("([" + "".join(sorted(INVISIBLE)) + "])")
_TAG_RE = re.compile(r"(<[^>]*>)")
TITLE = "invisible character"

Token = tuple[str, bool, str]  # text, changed, label ("" for visible text)


def label(ch: str) -> str:
    """`U+200B ZERO WIDTH SPACE`: the code point and its Unicode name."""
    return f"U+{ord(ch):04X} {unicodedata.name(ch, 'unnamed')}"


def has_invisible(text: str | None) -> bool:
    return bool(text) and _RE.search(text or "") is not None


def count(text: str | None) -> int:
    return len(_RE.findall(text or ""))


def tokens(segs: list[tuple[str, bool]]) -> list[Token]:
    """A diff row's segments with every invisible character cut out as its own token."""
    out: list[Token] = []
    for text, changed in segs:
        for piece in _RE.split(text):
            if not piece:
                continue
            out.append((piece, changed, label(piece) if piece in INVISIBLE else ""))
    return out


def mark_view(fv: FileView) -> None:
    """Every drawn row of `fv` as tokens (unified rows only: the inbox draws no split)."""
    for row in fv.rows:
        # Row.segs holds pairs; the proposal template alone reads these triples.
        row.segs = tokens(row.segs)  # type: ignore[assignment]


def mark_html(fragment: str) -> str:
    """Rendered HTML with each invisible character in its text shown as a marked token."""
    if _RE.search(fragment) is None:
        return fragment
    out: list[str] = []
    for piece in _TAG_RE.split(fragment):
        if piece.startswith("<"):
            out.append(piece)
            continue
        for part in _RE.split(piece):
            if part in INVISIBLE:
                name = label(part)
                out.append(f'<abbr title="{TITLE} {html.escape(name)}">'
                           f"{html.escape(name.split(' ', 1)[0])}</abbr>")
            else:
                out.append(part)
    return clean_html("".join(out))
