"""What a search returns: ranked hits whose highlights are (text, is_match) spans."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from memoryui.store import Kind

from .snippets import Spans, entry_for_snippet, offsets, spans


@dataclass
class Hit:
    path: str
    scope: str
    kind: str
    date: str  # a daily log's date; for other files the day of their last change
    score: float  # higher is better
    recency: float  # unix time of the last change: the file's last commit when git has it
    name: str = ""
    title_spans: Spans = field(default_factory=list)  # name and headings
    snippet_spans: Spans = field(default_factory=list)  # body excerpt
    path_spans: Spans = field(default_factory=list)
    entry_id: str | None = None  # the daily entry the snippet falls in
    by_meaning: bool = False  # found by meaning alone (no keyword match): its best passage

    @classmethod
    def from_row(cls, row: tuple) -> Hit:
        """A backend row: (path, scope, kind, name, date, recency, score, snippet, title,
        path_marked, body-or-None), with matches marked by the backend."""
        path, sc, kd, name, date, recency, score, snip, title, path_m, body = row
        hit = cls(path, sc or "", kd or "", date or "", float(score), float(recency),
                  name=name or "", title_spans=spans(title or ""),
                  snippet_spans=spans(snip or ""), path_spans=spans(path_m or path))
        if kd == Kind.DAILY.value and body:
            hit.entry_id = entry_for_snippet(body, snip or "")
        return hit

    @property
    def snippet_text(self) -> str:
        return "".join(text for text, _ in self.snippet_spans)

    @property
    def highlights(self) -> list[tuple[int, int]]:
        """(start, end) offsets of the matches inside `snippet_text`."""
        return offsets(self.snippet_spans)

    @property
    def has_title_match(self) -> bool:
        return any(hit for _, hit in self.title_spans)

    @property
    def changed(self) -> dt.datetime:
        return dt.datetime.fromtimestamp(self.recency, dt.UTC)


@dataclass
class SearchResults:
    query: str
    hits: list[Hit] = field(default_factory=list)
    total: int = 0
    offset: int = 0
    limit: int = 20
    seconds: float = 0.0
    mode: str = "keyword"  # what ranked the hits: "hybrid" (keywords and meaning) or "keyword"
    notice: str = ""  # why meaning did not help, when hybrid was asked for
