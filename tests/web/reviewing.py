"""The review tests' queue: ops-bot's memory and five entries by three agents over three days."""

from __future__ import annotations

from memoryui.store import Actor, Kind, Store, parse_daily

D0, D1, D2 = "2026-02-10", "2026-02-11", "2026-02-12"
RANGE = {"from": D0, "to": D2}
MEMORY = "# ops-bot memory\n\n## Facts\n- I work for Initech.\n\n## Lessons\n- Check canaries.\n"
HEADINGS_AND_CODE = ("Rollback worked.\n\n## Root cause\n\nA migration held a lock.\n\n"
                     "```sh\n## not a heading\n$ deployctl rollback api\n```")


def log(store: Store, scope: str, date: str, time: str, text: str) -> str:
    """Append one Duragent entry the way `remember` writes it; returns its key."""
    path = store.path_for(Kind.DAILY, scope, date)
    store.append(path, f"\n## {time}\n\n{text}\n", header=f"# {date}\n",
                 actor=Actor.agent(scope), tool="remember")
    entry = next(e for e in parse_daily(store.read(path)) if e.time == time and
                 e.body == text.strip())
    return f"{path}#{entry.id}"


def seed(s: Store) -> dict[str, str]:
    """ops-bot's memory and five entries by three agents over three days, by name."""
    s.write(s.path_for(Kind.MEMORY, "ops-bot"), MEMORY, actor=Actor.agent("ops-bot"),
            tool="reflect")
    return {
        "ops1": log(s, "ops-bot", D1, "09:15", "Canary at 5% caught the bad build."),
        "ops2": log(s, "ops-bot", D2, "10:02", HEADINGS_AND_CODE),
        "ops3": log(s, "ops-bot", D2, "16:40", "Paged Bob at night for disk pressure."),
        "res1": log(s, "research-agent", D2, "11:30", "BM25 plus rerank beats dense-only."),
        "sup1": log(s, "support-bot", D0, "08:05", "Globex prefers email over chat."),
    }
