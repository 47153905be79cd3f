"""A proposal as the inbox draws it: its diff against the current file (source rows and
the rendered prose diff, invisible characters marked in both), the secrets its lines would
bring in, where memory already states what it adds, and which other proposals on the page
say the same thing, and the curated lines its added statements may contradict. Thin over
`web.diffview`, `web.diffsource`, `secrets`, `review.similar` and `review.contradictions`,
the machinery the entry queue and the history pages use.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from memoryui.proposing import ProposalView
from memoryui.rendering import too_large
from memoryui.review import contradictions
from memoryui.review.contradictions import ProposalCandidate
from memoryui.review.similar import Known, already_known, group
from memoryui.review.state import VERDICTS
from memoryui.secrets import Finding, added_lines
from memoryui.store import Store
from memoryui.web.common import fulltime
from memoryui.web.diffsource import is_markdown, prose_html
from memoryui.web.diffview import FileView, file_views, text_diff

from . import invisible


@dataclass
class Card:
    """One proposal and what its card shows; `diff` is None while the proposal's commits
    have not reached this instance (a sync brings them)."""

    p: ProposalView
    diff: FileView | None
    prose: str | None  # the rendered diff (safe HTML), None when not drawn
    added: str  # the lines the proposal adds, for similarity and secrets
    findings: list[Finding] = field(default_factory=list)
    known: Known | None = None
    similar: list[str] = field(default_factory=list)  # ids of the other proposals
    invisibles: int = 0
    conflicts: list[ProposalCandidate] = field(default_factory=list)

    @property
    def dom_id(self) -> str:
        return f"proposal-{self.p.id}"

    @property
    def stamp(self) -> str:
        return stamp(self.p)

    @property
    def secret_kinds(self) -> list[str]:
        return sorted({f.kind for f in self.findings})


def stamp(p: ProposalView) -> str:
    """The proposal's version as a form carries it (when it last changed)."""
    return p.updated.isoformat()


def decided_text(p: ProposalView) -> str:
    """"This proposal was approved by alice on 2026-11-29 10:02 UTC." (a 409's sentence)."""
    who = f" by {p.decided_by}" if p.decided_by else ""
    when = f" on {fulltime(p.decided_at)}" if p.decided_at else ""
    reason = f" (“{p.reason}”)" if p.reason else ""
    return f"This proposal was {p.status} already{who}{when}{reason}."


def added_text(old: str | None, new: str | None) -> str:
    """The lines `new` adds to `old` (the same rule the secrets guard scans)."""
    return "\n".join(line for _n, line in added_lines(old, new)) if new else ""


def card(store: Store, p: ProposalView, *, prose: bool) -> Card:
    """The card of one proposal; `prose` draws the rendered diff of a markdown file."""
    if not p.available:
        return Card(p, None, None, "")
    old, new = p.current_text, p.proposed_text
    fv = file_views([text_diff(old, new, p.path)])[0]
    invisible.mark_view(fv)
    rendered = None
    if prose and is_markdown(p.path) and new is not None and not too_large(old, new):
        rendered = invisible.mark_html(prose_html(old, new))
    added = added_text(old, new)
    return Card(p, fv, rendered, added, findings=store.secrets.added(old, new or ""),
                invisibles=invisible.count(added))


def mark_conflicts(store: Store, shown: list[Card]) -> None:
    """Contradiction candidates on the open cards (one pass over the page; none when the
    model cannot load)."""
    todo = [c for c in shown if c.p.status == "open" and c.diff is not None]
    if not todo:
        return
    found = contradictions.for_proposals(store, VERDICTS, [
        (c.p.path, c.p.current_text, c.p.proposed_text) for c in todo]) or []
    for c, conflicts in zip(todo, found, strict=True):
        c.conflicts = conflicts


def cards(store: Store, proposals: list[ProposalView], *, prose: bool) -> list[Card]:
    """Cards for a page of proposals, with "already known", near-duplicate and
    contradiction marks as the entry queue computes them (one pass over the page)."""
    out = [card(store, p, prose=prose) for p in proposals]
    mark_conflicts(store, out)
    known = already_known(store, [(c.p.scope or None, c.added) for c in out])
    for c, k in zip(out, known, strict=True):
        c.known = k
    for members in group(out, lambda c: c.added):
        if len(members) > 1:
            ids = [m.p.id for m in members]
            for m in members:
                m.similar = [i for i in ids if i != m.p.id]
    return out
