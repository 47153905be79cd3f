"""Review domain tests: a real Store on a tmp git workspace, the ORM ledger on the test
database (the only Django part of `memoryui.review`)."""

from __future__ import annotations

import pytest

from memoryui import review
from memoryui.store import Actor, Kind, Store, parse_daily

MEMORY = "# ops-bot memory\n\n## Facts\n- I work for Initech.\n\n## Lessons\n- Check canaries.\n"
LEAD = Actor.user("lead", "lead@example.com")


DAY = "2026-02-12"

def log(store: Store, scope: str, date: str, time: str, text: str) -> str:
    """Append one Duragent entry the way `remember` writes it; returns its key."""
    path = store.path_for(Kind.DAILY, scope, date)
    store.append(path, f"\n## {time}\n\n{text}\n", header=f"# {date}\n",
                 actor=Actor.agent(scope), tool="remember")
    entry = next(e for e in parse_daily(store.read(path)) if e.time == time
                 and e.body == text.strip())
    return f"{path}#{entry.id}"


@pytest.fixture
def ledger(db):
    from memoryui.review.state import LEDGER

    return LEDGER


def draft_and_save(store: Store, ledger, keys: list[str], kind: str, *, scope=None, name=None,
                   place=None, description="", edit=lambda t: t, **kw):
    """As the editor does: the draft for the target, (edited,) saved against its version.
    Returns (promotion, target, saved text)."""
    target = review.make_target(store, kind, scope, name)
    items = review.resolve(store, ledger, keys)
    text = edit(review.make_draft(target, items, place, description).text)
    promo = review.promote_entries(store, ledger, actor=LEAD, keys=keys, target=target,
                                   text=text, base=target.base, **kw)
    return promo, target, text


@pytest.fixture
def memory(store: Store) -> str:
    """ops-bot's MEMORY.md, written by the agent; returns its path."""
    path = store.path_for(Kind.MEMORY, "ops-bot")
    store.write(path, MEMORY, actor=Actor.agent("ops-bot"), tool="reflect")
    return path


@pytest.fixture
def entries(store: Store, memory: str) -> dict[str, str]:
    """Four undecided entries of one day in three scopes (and a scope MEMORY.md)."""
    return {
        "a": log(store, "ops-bot", DAY, "09:00", "Canaries catch bad builds."),
        "b": log(store, "ops-bot", DAY, "10:00", "Disk alerts fire at 85%."),
        "c": log(store, "research-agent", DAY, "11:00", "Rerank helps."),
        "d": log(store, "support-bot", DAY, "12:00", "Globex prefers email."),
    }


def snapshot() -> tuple[set, set]:
    """Everything the ledger holds, comparable before and after a rebuild."""
    from memoryui.models import Promotion, ReviewState

    states = {(s.path, s.entry_id, s.status, s.scope, s.date, s.reviewed_by,
               s.promotion.commit_sha if s.promotion else None)
              for s in ReviewState.objects.select_related("promotion")}
    promos = {(p.target_path, p.target_kind, p.commit_sha, p.created_by, p.undo_commit_sha,
               p.undone_by) for p in Promotion.objects.all()}
    return states, promos
