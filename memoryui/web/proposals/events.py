"""Proposals on the activity page and in its Atom feed: each proposal made, approved,
rejected or withdrawn, newest first, from the shared record (one query; never git).

Approvals are also merge commits, which the activity page and the feed list as commits;
`feed_events` leaves them out so a feed reader sees each decision once.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from memoryui.models import ProposalDecision

PROPOSED = "proposed"


@dataclass(frozen=True)
class Event:
    what: str  # proposed | approved | rejected | withdrawn
    when: dt.datetime
    who: str
    id: str
    path: str
    scope: str
    kind: str
    proposer: str
    reason: str = ""
    merge_sha: str = ""

    @property
    def by_agent(self) -> bool:
        return self.what == PROPOSED

    def title(self) -> str:
        if self.what == PROPOSED:
            return f"{self.proposer} proposed a change to {self.path}"
        said = f": {self.reason}" if self.reason else ""
        return f"{self.who} {self.what} {self.proposer}'s proposal for {self.path}{said}"


def day_of(value: str) -> dt.date | None:
    """An activity filter's date (already checked by its form), None when not a day."""
    try:
        return dt.date.fromisoformat(value) if value else None
    except ValueError:
        return None


def _of(row: ProposalDecision) -> list[Event]:
    made = Event(PROPOSED, row.created_at, row.proposer, row.proposal_id, row.path, row.scope,
                 row.kind, row.proposer)
    if row.status == ProposalDecision.OPEN or row.decided_at is None:
        return [made]
    return [made, Event(row.status, row.decided_at, row.decided_by or row.proposer,
                        row.proposal_id, row.path, row.scope, row.kind, row.proposer,
                        row.reason, row.merge_sha)]


def events(limit: int, *, scope: str | None = None, kind: str | None = None,
           actor: str | None = None, who: str | None = None, since: dt.date | None = None,
           until: dt.date | None = None) -> list[Event]:
    """The newest `limit` events with the activity page's filters: `actor` a name (an
    agent's proposals, a person's decisions), `who` "agents" (proposals) or "people"
    (decisions), `since`/`until` local dates, inclusive."""
    rows = ProposalDecision.objects.all()
    if scope:
        rows = rows.filter(scope=scope)
    if kind:
        rows = rows.filter(kind=kind)
    out: list[Event] = []
    for row in rows.order_by("-updated_at", "-id")[:limit * 2]:
        out.extend(_of(row))
    if actor:
        out = [e for e in out if e.who == actor]
    if who in ("agents", "people"):
        out = [e for e in out if e.by_agent == (who == "agents")]
    if since:
        out = [e for e in out if e.when.astimezone().date() >= since]
    if until:
        out = [e for e in out if e.when.astimezone().date() <= until]
    out.sort(key=lambda e: e.when, reverse=True)
    return out[:limit]


def feed_events(limit: int, **filters: object) -> list[Event]:
    """Events for the Atom feed: approvals are their merge commits there."""
    return [e for e in events(limit, **filters) if e.what != ProposalDecision.APPROVED]  # type: ignore[arg-type]
