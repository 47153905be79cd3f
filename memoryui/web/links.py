"""Links to the UI's pages from Python, for rows of long lists.

Each builder is `reverse()` of its URL name (so the URLconf stays the one place a path is
spelled), done once per name with a placeholder and then filled in per row: a sidebar or a
history page of thousands of rows does not pay a full `reverse()` per link. The argument is
quoted exactly as `reverse()` quotes it.
"""

from __future__ import annotations

import functools
from urllib.parse import quote, urlencode

from django.urls import reverse
from django.utils.encoding import iri_to_uri

_HOLE = "__memoryui_hole_{}__"
_SAFE = "!$&'()*+,;=/~:@"  # what reverse() leaves unquoted in a path argument


@functools.cache
def _pattern(name: str, n: int) -> list[str]:
    """The URL of `name` split around its `n` arguments: n + 1 literal pieces."""
    url = reverse(name, args=[_HOLE.format(i) for i in range(n)])
    pieces = []
    for i in range(n):
        head, _, url = url.partition(_HOLE.format(i))
        pieces.append(head)
    pieces.append(url)
    return pieces


def link(name: str, *args: str, query: dict | None = None) -> str:
    """`reverse(name, args=args)` (plus `?query`), without resolving the pattern again."""
    pieces = _pattern(name, len(args))
    out = [pieces[0]]
    for arg, piece in zip(args, pieces[1:], strict=True):
        out.append(iri_to_uri(quote(str(arg), safe=_SAFE)))
        out.append(piece)
    url = "".join(out)
    return url + "?" + urlencode(query) if query else url


def file_url(path: str) -> str:
    return link("file", path)


def commit_url(sha: str) -> str:
    return link("commit", sha)


def history_url(path: str) -> str:
    return link("file_history", path)


def scope_url(scope: str) -> str:
    return link("scope", scope)


@functools.cache
def area_root(name: str) -> str:
    """The path of a URL without arguments (an area's root, e.g. "review" -> "/review/")."""
    return reverse(name)
