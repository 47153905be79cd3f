"""The parameter rules of the agent API, written as the JSON Schema the OpenAPI document shows.

Each pattern states a rule that lives in code elsewhere (named beside it), so a request
that matches the document is one the code accepts, and one that does not is refused with
a 400. The API suite runs schemathesis against a real server to keep the two in step.
Patterns use the syntax Python's `re` and ECMA-262 share.
"""

from __future__ import annotations

import string
import sys
import unicodedata
from collections.abc import Callable
from functools import cache

from memoryui.store.layout import Kind
from memoryui.store.names import SCOPE_RE

KINDS = [k.value for k in Kind]

# `names.validate_scope` (Dagu's DAGName rule, at most 64 characters).
SCOPE_PATTERN = SCOPE_RE.pattern


def _ranges(picked: Callable[[str], bool], top: int = sys.maxunicode) -> str:
    """A regex class body listing the characters up to `top` that `picked` picks: \\uXXXX
    escapes in the BMP, the characters themselves beyond it (no escape for those reads
    alike in Python and ECMA-262)."""
    out, start = [], None
    for cp in range(top + 2):
        # Surrogates are left out: no URL or UTF-8 text can carry one.
        hit = cp <= top and not 0xD800 <= cp <= 0xDFFF and picked(chr(cp))
        if hit and start is None:
            start = cp
        elif not hit and start is not None:
            out.append(_char(start) + (f"-{_char(cp - 1)}" if cp - 1 > start else ""))
            start = None
    return "".join(out)


def _char(cp: int) -> str:
    return f"\\u{cp:04x}" if cp < 0x10000 else chr(cp)


def _not_read(ch: str) -> bool:
    """`names._no_controls` and the separators of `validate_relpath` (tab aside)."""
    return ch in "/\\" or (ch != "\t" and unicodedata.category(ch) in ("Cc", "Cf", "Zl",
                                                                        "Zp"))


def _not_written(ch: str) -> bool:
    """`names.writable_name`: printable characters and plain spaces, no '"' or '\\'. The
    document allows nothing beyond the BMP (listing the planes' printable characters would
    take tens of kilobytes): a narrower rule than the code's."""
    return (ch in '"' or ord(ch) > 0xFFFF or _not_read(ch)
            or not (ch == " " or ch.isprintable()))


_WHITE = "\\s"


def _classes(write: bool) -> Callable[[str, bool], str]:
    """The class of one character of a name, refusing the ASCII characters `also` and,
    at a name's `edge`, white space. Reading allows most of Unicode, so its classes list
    what is refused; writing allows only the BMP, so its classes list what is allowed (a
    generator of examples then never enumerates the planes beyond it)."""
    if not write:
        bad = _ranges(_not_read)
        return lambda also, edge: (f"[^{_ranges(lambda ch: ch in also, 0x7F)}"
                                   f"{_WHITE if edge else ''}{bad}]")

    @cache  # each class recurs in the pattern; a scan of the BMP is worth doing once
    def allowed(also: str, edge: bool) -> str:
        return "[" + _ranges(
            lambda ch: not (_not_written(ch) or ch in also or (edge and ch.isspace())),
            0xFFFF) + "]"
    return allowed


@cache
def _path_pattern(write: bool) -> str:
    """A workspace-relative path (`names.validate_relpath`): names joined by '/', not a
    Windows drive ('C:'). A name is not '.'-led (no '.', '..' or hidden names), has no
    white space at either end, and is at most 200 UTF-8 bytes: 50 characters here, which
    can never be more. The whole path's limit (MAX_PATH_CHARS) is in the parameter's
    description: with a maxLength, generators of examples pad strings past the pattern."""
    c = _classes(write)
    letters = string.ascii_letters
    name = f"{c('.', True)}(?:{c('', False)}{{0,48}}{c('', True)})?"
    # The first name, written without a look-ahead (generators of examples skip those):
    # one led by an ASCII letter has no ':' right after it.
    first = (f"(?:{c(letters + '.', True)}(?:{c('', False)}{{0,48}}{c('', True)})?"
             f"|[A-Za-z](?:{c(':', False)}{c('', False)}{{0,47}}{c('', True)}"
             f"|{c(':', True)})?)")
    return f"{first}(?:/{name})*"


# Examples give readers (and generators of examples, which cannot always draw a value for
# a pattern this large) a valid path to start from.
EXAMPLE_PATH = "agents/ops-bot/memory/MEMORY.md"


def relpath(write: bool = False) -> dict:
    """A file path parameter: the rule for reading, or the stricter one for names written."""
    return {"type": "string", "minLength": 1, "pattern": f"^{_path_pattern(write)}$",
            "examples": [EXAMPLE_PATH]}


def prefix() -> dict:
    """`files.list_files`: slashes around the folder are dropped; none means everything."""
    return {"type": "string", "pattern": f"^/*(?:{_path_pattern(False)})?/*$",
            "examples": ["agents/ops-bot"]}


def history_path() -> dict:
    """`files.history`: an empty value is the filter left out."""
    return {"type": "string", "pattern": f"^(?:{_path_pattern(False)})?$",
            "examples": [EXAMPLE_PATH]}


# `files._tags`: a comma-separated list in which at least one item is `*`, a quoted tag
# or a bare sha256 (other items, such as weak tags, are ignored).
_TAG = '\\s*(?:\\*|"[^,]*"|[0-9a-fA-F]{64})\\s*'
IF_MATCH = {"type": "string", "pattern": f"^(?:[^,]*,)*{_TAG}(?:,[^,]*)*$"}

# `files._date` (history): a date or an ISO 8601 time, in the years git filters by.
# A month and a day that every year has (February stops at the 28th: a regular expression
# cannot tell leap years; the code takes the 29th where it exists).
_MONTH_DAY = ("(?:(?:0[1-9]|1[0-2])-(?:0[1-9]|1[0-9]|2[0-8])|(?:0[13-9]|1[0-2])-(?:29|30)"
              "|(?:0[13578]|1[02])-31)")
_DAY = f"(?:19[7-9][0-9]|20[0-9][0-9])-{_MONTH_DAY}"
_TIME = ("(?:[T ](?:[01][0-9]|2[0-3]):[0-5][0-9](?::[0-5][0-9](?:\\.[0-9]{1,6})?)?"
         "(?:Z|[+-](?:[01][0-9]|2[0-3]):?[0-5][0-9])?)?")
HISTORY_TIME = {"type": "string", "pattern": f"^(?:{_DAY}{_TIME})?$"}

# `search.SearchParams`: white space around a value is dropped, and a blank value is
# the parameter left out.
SEARCH_SCOPE = {"type": "string", "pattern": "^\\s*(?:[A-Za-z0-9_-]{1,64})?\\s*$"}
SEARCH_MODE = {"type": "string", "pattern": "^\\s*(?:hybrid|keyword)?\\s*$"}
SEARCH_KIND = {"type": "string", "pattern": f"^\\s*(?:{'|'.join(KINDS)})?\\s*$"}
# `search.filters.parse_date`: YYYY-MM-DD from 1900-01-01 to 2999-12-31.
SEARCH_DATE = {"type": "string",
               "pattern": f"^\\s*(?:(?:19|2[0-9])[0-9]{{2}}-{_MONTH_DAY})?\\s*$"}
# `search.query.parse_tree`: something besides white space, and no NUL byte.
SEARCH_QUERY = {"type": "string", "pattern": "^[^\\x00]*\\S[^\\x00]*$"}

# `names.validate_text`: text memoryui stores holds no NUL byte.
TEXT = {"type": "string", "pattern": "^[^\\x00]*$"}

# `files.history`: an empty value is the filter left out.
HISTORY_SCOPE = {"type": "string", "pattern": f"^(?:{SCOPE_PATTERN[1:-1]})?$"}
HISTORY_KIND = {"type": "string", "enum": ["", *KINDS]}
HISTORY_ACTOR = {"type": "string", "maxLength": 200, "pattern": "^[^\\x00-\\x1f]*$"}
