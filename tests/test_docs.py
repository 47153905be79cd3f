"""The documents hold together: every relative link in README.md and docs/*.md names a file
that exists and, with a `#fragment`, a heading or anchor in it (as GitHub makes them), and
the README stays short enough to read (under 20 KB)."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
README_LIMIT = 20 * 1024

FENCE = re.compile(r"^(```|~~~).*?^\1", re.S | re.M)
CODE = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.M)
HTML_ANCHOR = re.compile(r"""<a\s+(?:id|name)=["']([^"']+)["']""")


def prose(text: str) -> str:
    """The text without fenced code blocks and inline code, where brackets are not links."""
    return CODE.sub("", FENCE.sub("", text))


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, markup and punctuation dropped, spaces to -."""
    text = re.sub(r"<[^>]+>", "", heading)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = text.replace("`", "").strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    found: set[str] = set(HTML_ANCHOR.findall(text))
    seen: dict[str, int] = {}
    for heading in HEADING.findall(text):
        base = slug(heading)
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def links(path: Path) -> list[str]:
    return [target for target in LINK.findall(prose(path.read_text(encoding="utf-8")))
            if not re.match(r"^[a-z][a-z0-9+.-]*:", target)]  # http:, https:, mailto:


def broken(path: Path) -> list[str]:
    bad = []
    for target in links(path):
        file_part, _, fragment = target.partition("#")
        dest = (path.parent / unquote(file_part)).resolve() if file_part else path
        if not dest.exists():
            bad.append(f"{target}: no such file")
        elif fragment and dest.suffix == ".md" and unquote(fragment) not in anchors(dest):
            bad.append(f"{target}: no such heading in {dest.relative_to(ROOT)}")
    return bad


def test_the_link_checker_sees_links_and_headings() -> None:
    assert slug("Where a `change` goes") == "where-a-change-goes"
    assert slug("git's index, split") == "gits-index-split"
    assert "docs/agents.md" in links(ROOT / "README.md")
    assert "where-a-change-goes" in anchors(ROOT / "docs" / "architecture.md")


@pytest.mark.parametrize("path", DOCUMENTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(path: Path) -> None:
    assert broken(path) == []


def test_the_readme_is_under_20_kb() -> None:
    assert (ROOT / "README.md").stat().st_size < README_LIMIT
