"""The inbox of proposed changes with 1,000 open proposals (the large preset; 100 on the
small one), server time beside its floor, measured in the same run.

Through Django's test client (whole middleware stack and templates, no network), on a fresh
copy of the corpus: the agents' proposals are made first as their tools make them (a branch
per proposal in git, the shared record in the database): one per scope on its MEMORY.md (a
line appended), the rest new notes. Then:

- the inbox's first page (25 cards: each diff against the current file, source view,
  secrets, near-duplicates and "already known"), filtered by one scope, and a later page;
- the header's count on another page (one database count), against the same page with no
  open proposal counted: the cost every page pays;
- one proposal's own page.

Floor: what any inbox must do for one page: the open proposals from the database and the
three texts of each shown one (base, proposed, current) from git.

    python -m bench.bench_inbox --preset large --dir <corpus>
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlencode

SAMPLES = 20
WARMUP = 2
PAGE = 25  # cards per inbox page (web/proposals/forms.PAGE_SIZE)


def _ms(fn: Callable[[], object]) -> float:
    t = time.perf_counter()
    fn()
    return (time.perf_counter() - t) * 1000


def _propose_all(n: int) -> list[str]:
    """`n` open proposals, spread over every scope, as the agents' tools make them."""
    from memoryui import proposing
    from memoryui.store import Actor, Kind
    from memoryui.store.proposals import propose
    from memoryui.workspace import get_store

    store = get_store()
    scopes = sorted(store.scopes())
    kinds = set(store.layout.kinds())
    made: list[str] = []
    for i in range(n):
        scope = scopes[i % len(scopes)]
        if i < len(scopes) and Kind.MEMORY in kinds:
            path = store.path_for(Kind.MEMORY, scope)
            text = (store.read(path) or "") + f"\n- bench fact {i}: deploys wait for the canary\n"
        else:
            path = store.path_for(Kind.NOTE, scope, f"bench-proposal-{i}")
            text = f"# Proposal {i}\n\nThe {scope} agent learnt fact number {i} today.\n"
        p, created = propose(store, scope=scope, path=path, text=text, actor=Actor.agent(scope),
                             tool="memory_write")
        if p is not None:
            proposing.recorded(p, created, None, store)
            made.append(p.id)
    return made


def run(corpus: Path, report: Callable[..., None]) -> None:
    from bench.bench_pages import signed_in_client, warm_page
    from bench.options import OPTIONS

    client = signed_in_client(corpus, "inbox", "curator")
    from memoryui import proposing

    n = 1000 if OPTIONS.preset != "small" else 100
    for _ in range(WARMUP):
        client.get("/")  # (the sidebar's and the overview's caches, as for every page)
    overview_before = [_ms(lambda: client.get("/")) for _ in range(SAMPLES)]
    t = time.perf_counter()
    made = _propose_all(n)
    note = f"{len(made)} open proposals, {PAGE} per page"
    report("make the proposals (agents' writes under propose)", None, ops_per_s=len(made) / (
        time.perf_counter() - t), note=note)

    def floor() -> int:
        return sum(len(t or "") for p in proposing.open_proposals()[:PAGE]
                   for t in (p.base_text, p.proposed_text, p.current_text))

    floor_ms = [_ms(floor) for _ in range(SAMPLES)]
    report("floor: open proposals + 3 texts of each shown one", floor_ms, note=note)
    scope = proposing.get(made[0]).scope
    pages = [
        ("inbox, first page", "/review/proposals/"),
        ("inbox, one scope", "/review/proposals/?" + urlencode({"scope": scope})),
        ("inbox, page 10", "/review/proposals/?page=10"),
        ("one proposal's page", f"/review/proposals/{made[-1]}/"),
    ]
    for name, url in pages:
        first = warm_page(client, name, url, {}, WARMUP, report)
        if first is None:
            continue
        samples = [_ms(lambda url=url: client.get(url)) for _ in range(SAMPLES)]
        report(name, samples, floor="open proposals + 3 texts each", floor_ms=floor_ms,
               note=f"{len(first.content) // 1024} KiB; {note}")
    after = [_ms(lambda: client.get("/")) for _ in range(SAMPLES)]
    report("overview with the header's count", after, floor="overview, no proposal",
           floor_ms=overview_before, note="one database count per page")


if __name__ == "__main__":
    from bench.run import standalone

    sys.exit(standalone(run, name="inbox"))
