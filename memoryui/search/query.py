"""The search language: what a person types becomes a small tree, or a QueryError that points
at the place.

One parser serves both backends: every malformed input is refused here with a message and the
column it is about, and each backend renders the tree fully parenthesized, so neither FTS5 nor
Postgres ever sees raw syntax.

Syntax: words (all must match), "exact phrases", prefix*, `OR`, `AND`, `NOT` / -word,
parentheses, and `name:`, `title:`, `body:` or `path:` before a term or a group.
Precedence: NOT binds tightest, then AND (words side by side), then OR. An exclusion
removes files from the words around it, so `(deploy OR refund) AND NOT canary`,
`deploy -canary` and `-canary deploy` all work; an exclusion alone (`NOT canary`,
`a OR NOT b`) has nothing to exclude from and is refused.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memoryui.store import StoreError

COLUMNS = ("name", "title", "body", "path")
MAX_QUERY_CHARS = 500
# `prefix_last` leaves a last word of one or two letters exact: as a prefix it matches most
# of a workspace ("re": 193k of 195k files, 0.3 s with a 2-letter prefix index, which cost
# a sixth of a rebuild; 2.6 s without). `re*` typed out is still a prefix.
PREFIX_MIN_CHARS = 3

_QUERY_TOKEN_RE = re.compile(
    r'\s*(?:(?P<col>name|title|body|path):)?'
    r'(?:(?P<phrase>"[^"]*")(?P<pstar>\*?)|(?P<open>\()|(?P<close>\))|(?P<word>[^\s()"]+))'
)
SEARCHABLE_RE = re.compile(r"[^\W_]")  # a letter or digit: what tokenizers keep
_OPERATORS = {"OR", "AND", "NOT"}


class QueryError(StoreError):
    """A search that cannot be understood (400, never a 500), saying where the trouble is.

    `position` is the 0-based offset in the query as typed (None when the whole query is at
    fault); `field` names the filter at fault ("date_from", "kind", ...) for form errors.
    """

    code = "invalid_arguments"
    status = 400

    def __init__(self, message: str, *, query: str | None = None, position: int | None = None,
                 field: str | None = None) -> None:
        self.message, self.query, self.position, self.field = message, query, position, field
        where = f" (at column {position + 1})" if position is not None else ""
        super().__init__(message + where)

    @property
    def column(self) -> int | None:
        """1-based column of the trouble, as editors count."""
        return None if self.position is None else self.position + 1

    @property
    def caret(self) -> str:
        """The query with a ^ under the place, for plain-text clients (two lines)."""
        if self.query is None or self.position is None:
            return ""
        line = self.query.replace("\n", " ").replace("\t", " ")
        return f"{line}\n{' ' * self.position}^"

    def parts(self) -> tuple[str, str, str]:
        """The query cut at the place: (before, the character at fault, after)."""
        if self.query is None or self.position is None:
            return (self.query or "", "", "")
        at = self.position
        return self.query[:at], self.query[at:at + 1], self.query[at + 1:]


class SearchUnavailable(StoreError):
    """The index could not be read (locked for too long, damaged): retry or reindex."""

    code = "unavailable"
    status = 503


@dataclass(frozen=True)
class Term:
    text: str  # the words as typed; the backend's tokenizer splits them
    prefix: bool = False
    column: str | None = None  # name | title | body | path


@dataclass(frozen=True)
class Op:
    op: str  # AND | OR | NOT ("a NOT b": a without b)
    left: Term | Op
    right: Term | Op


Node = Term | Op


@dataclass(frozen=True)
class _Tok:
    kind: str  # term | op | open | close
    pos: int  # where it starts in the query
    value: str = ""
    column: str | None = None
    prefix: bool = False
    minus: bool = False
    phrase: bool = False

    def is_op(self, *names: str) -> bool:
        return self.kind == "op" and (not names or self.value in names)


def _tokens(query: str) -> list[_Tok]:
    toks: list[_Tok] = []
    at = 0
    while at < len(query):
        m = _QUERY_TOKEN_RE.match(query, at)
        if m is None or m.end() == at:
            break
        at = m.end()
        col = m["col"]
        start = m.start("col") if col else m.end() - len(m.group(0).lstrip())

        def empty(col: str | None = col, start: int = start) -> QueryError:
            return QueryError(f"Nothing to search for after {col}:.", query=query,
                              position=start)
        if m["open"]:
            toks.append(_Tok("open", start, column=col))
        elif m["close"]:
            if col:
                raise empty()
            toks.append(_Tok("close", start))
        elif m["phrase"] is not None:
            inner = " ".join(m["phrase"][1:-1].split())
            if SEARCHABLE_RE.search(inner):
                toks.append(_Tok("term", start, inner, col, bool(m["pstar"]), phrase=True))
            elif col:
                raise empty()
        else:
            word = m["word"]
            if word.endswith(":") and word[:-1] in COLUMNS:
                raise QueryError(f"Nothing to search for after {word}", query=query,
                                 position=start)
            if not col and word in _OPERATORS:
                toks.append(_Tok("op", start, word))
                continue
            minus = word.startswith("-") and len(word) > 1 and not col
            word = word[1:] if minus else word
            prefix = word.endswith("*")
            word = word.rstrip("*").replace("*", " ")
            if not SEARCHABLE_RE.search(word):
                if col:
                    raise empty()
                continue
            if minus:
                toks.append(_Tok("op", start, "NOT", minus=True))
            toks.append(_Tok("term", start + minus, word, col, prefix))
    return toks


def _with_prefix_last(toks: list[_Tok]) -> list[_Tok]:
    """The last word being typed matches as a prefix (`escal` finds "escalation")."""
    for i in range(len(toks) - 1, -1, -1):
        t = toks[i]
        if t.kind == "term":
            if not t.phrase and not t.prefix and len(t.value) >= PREFIX_MIN_CHARS:
                toks[i] = _Tok("term", t.pos, t.value, t.column, True)
            break
    return toks


class _Parser:
    """Recursive descent over the tokens: or_expr := and_expr (OR and_expr)*."""

    def __init__(self, query: str, toks: list[_Tok]) -> None:
        self.query, self.toks, self.at = query, toks, 0

    def error(self, message: str, position: int | None) -> QueryError:
        return QueryError(message, query=self.query, position=position)

    def peek(self) -> _Tok | None:
        return self.toks[self.at] if self.at < len(self.toks) else None

    def take(self) -> _Tok:
        self.at += 1
        return self.toks[self.at - 1]

    def parse(self) -> Node:
        tree = self.or_expr(None)
        if (t := self.peek()) is not None:
            raise self.error("A closing parenthesis ) has nothing before it to close.", t.pos)
        return tree

    def or_expr(self, col: str | None) -> Node:
        node = self.and_expr(col)
        while (t := self.peek()) is not None and t.is_op("OR"):
            self.take()
            node = Op("OR", node, self.and_expr(col))
        return node

    def and_expr(self, col: str | None) -> Node:
        """Words side by side (or joined by AND), each possibly excluded with NOT / -."""
        keep: list[Node] = []
        drop: list[tuple[Node, _Tok]] = []
        while (t := self.peek()) is not None and t.kind != "close" and not t.is_op("OR"):
            if t.is_op("AND"):
                if not keep and not drop:
                    raise self.both_sides(t)
                self.take()
                nxt = self.peek()
                if nxt is None or nxt.kind == "close" or nxt.is_op("AND", "OR"):
                    raise self.both_sides(t)
                continue
            if t.is_op("NOT"):
                self.take()
                nxt = self.peek()
                if nxt is None or nxt.kind == "close" or nxt.kind == "op":
                    what = "An exclusion -" if t.minus else "NOT"
                    raise self.error(f"{what} needs a word after it, e.g. deploy NOT canary.",
                                     t.pos)
                drop.append((self.primary(col), t))
                continue
            keep.append(self.primary(col))
        if not keep:
            raise self.empty_group(drop)
        node = keep[0]
        for right in keep[1:]:
            node = Op("AND", node, right)
        for right, _tok in drop:
            node = Op("NOT", node, right)
        return node

    def both_sides(self, t: _Tok) -> QueryError:
        return self.error(f"{t.value} needs a word on both sides, e.g. redis {t.value} "
                          "memcached.", t.pos)

    def empty_group(self, drop: list[tuple[Node, _Tok]]) -> QueryError:
        if drop:
            tok = drop[0][1]
            what = "An exclusion (-word)" if tok.minus else "NOT"
            return self.error(f"{what} needs something before it to exclude from, e.g. "
                              "deploy -staging or deploy NOT staging.", tok.pos)
        t = self.peek()
        if t is None:
            return self.error("The search ends where a word was expected.", len(self.query))
        if t.is_op("OR"):
            return self.both_sides(t)
        prev = self.toks[self.at - 1] if self.at else None
        if prev is not None and prev.is_op("OR"):
            return self.both_sides(prev)
        if prev is not None and prev.kind == "open":
            return self.error("Empty parentheses: put the words to group inside ( ).",
                              prev.pos)
        return self.error("A closing parenthesis ) has nothing before it to close.", t.pos)

    def primary(self, col: str | None) -> Node:
        t = self.take()
        if t.kind == "term":
            return Term(t.value, t.prefix, t.column or col)
        if t.kind == "open":
            node = self.or_expr(t.column or col)
            if (c := self.peek()) is None or c.kind != "close":
                raise self.error("A parenthesis is not closed: add a ).", t.pos)
            self.take()
            return node
        raise self.error(f"A word was expected here, not {t.value or ')'}.", t.pos)


def parse_tree(query: str, *, prefix_last: bool = False) -> Node:
    """Parse a search; `prefix_last` makes the last word a prefix (the search box as you type)."""
    query = query or ""
    text = query.strip()
    lead = len(query) - len(query.lstrip())
    if not text:
        raise QueryError("Type a word to search for.")
    if "\x00" in query:
        # Neither index can take one: FTS5 reads it as the end of the query.
        raise QueryError("The search must not contain NUL bytes", query=query,
                         position=query.index("\x00"))
    if len(text) > MAX_QUERY_CHARS:
        raise QueryError(f"The search is too long ({MAX_QUERY_CHARS} characters at most).",
                         query=query, position=lead + MAX_QUERY_CHARS)
    if query.count('"') % 2:
        raise QueryError('Unbalanced quote: close the "exact phrase" with a second ".',
                         query=query, position=query.rfind('"'))
    toks = _tokens(query)
    if not any(t.kind == "term" for t in toks):
        raise QueryError(f"Nothing to search for in {text!r}: use letters or digits.")
    if prefix_last:
        toks = _with_prefix_last(toks)
    return _Parser(query, toks).parse()


def term_texts(node: Node, negated: bool = False) -> list[Term]:
    """The terms a tree looks for (not those it excludes), for highlighting."""
    if isinstance(node, Term):
        return [] if negated else [node]
    return term_texts(node.left, negated) + term_texts(node.right, negated or node.op == "NOT")
