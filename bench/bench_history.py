"""Server time of the history pages (issue 3) on the corpus, beside git's own floor.

Through Django's test client (whole middleware stack and templates, no network), signed in
as a viewer, on a fresh copy of the corpus:

- file history of the most-touched file and of a rarely touched one (git must walk the
  whole history for the latter; the commit-graph's Bloom filters are what keep it cheap);
- the activity feed unfiltered and with each filter (actor, scope, kind, date range), its
  htmx fragment and the Atom feed: one `git log` per page;
- a commit's diff, unified and side by side; a file at a commit; blame; pending changes.

Floors measured in the same run: `git log -1 -- <path>` and `git log -n50 -- <path>` for
the same files, `git log -n50 --name-status` for the feed, `git show <sha>` for a commit.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from urllib.parse import quote

SAMPLES = 30
WARMUP = 3
FLOOR_SAMPLES = 20


def _ms(fn: Callable[[], object]) -> float:
    t = time.perf_counter()
    fn()
    return (time.perf_counter() - t) * 1000


def _git(corpus: Path, *args: str) -> list[str]:
    return ["git", "-C", str(corpus), *args]


def _floor(cmd: list[str]) -> list[float]:
    subprocess.run(cmd, capture_output=True, check=True)  # warm the page cache
    return [_ms(lambda: subprocess.run(cmd, capture_output=True, check=True))
            for _ in range(FLOOR_SAMPLES)]


def _targets(corpus: Path) -> dict[str, str]:
    """A hot file, a cold file, an agent, a scope and a commit of the hot file (setup only)."""
    out = subprocess.run(_git(corpus, "log", "-n3000", "--format=", "--name-only"),
                         capture_output=True, text=True, check=True).stdout
    counts = Counter(p for p in out.splitlines() if p)
    hot = next(p for p, _ in counts.most_common() if p.endswith(".md"))
    notes = subprocess.run(_git(corpus, "ls-files", "agents/*/memory/notes/*.md"),
                           capture_output=True, text=True, check=True).stdout.split()
    cold = next((p for p in notes if counts[p] == 0), notes[0] if notes else hot)
    shas = subprocess.run(_git(corpus, "log", "-n2", "--format=%H", "--", hot),
                          capture_output=True, text=True, check=True).stdout.split()
    scope = hot.split("/")[1] if hot.startswith("agents/") else \
        subprocess.run(_git(corpus, "ls-tree", "--name-only", "HEAD", "agents/"),
                       capture_output=True, text=True, check=True).stdout.split()[0].split("/")[1]
    daily = subprocess.run(_git(corpus, "ls-files", f"agents/{scope}/memory/daily/"),
                           capture_output=True, text=True, check=True).stdout.split()
    return {"hot": hot, "cold": cold, "sha": shas[-1], "scope": scope,
            "daily": daily[-1] if daily else hot,
            "since": "2026-10-01", "until": "2026-10-31"}


def run(corpus: Path, report: Callable[..., None]) -> None:
    from bench.bench_pages import _django  # one way to point Django at a corpus

    var = Path(tempfile.mkdtemp(prefix="memoryui-bench-history-"))
    _django(corpus, var)
    from django.test import Client

    from memoryui.management.commands.user import set_person
    from memoryui.workspace import get_store

    store = get_store()
    client = Client()
    client.force_login(set_person("bench-viewer", "viewer", "bench-password-1"))
    t = _targets(corpus)
    hot, cold, sha, scope = t["hot"], t["cold"], t["sha"], t["scope"]

    f_hot1 = _floor(_git(corpus, "log", "-1", "--format=%H %an %at %s", "--", hot))
    f_hot50 = _floor(_git(corpus, "log", "-n50", "--format=%H %an %at %B", "--", hot))
    f_cold50 = _floor(_git(corpus, "log", "-n50", "--format=%H %an %at %B", "--", cold))
    f_feed = _floor(_git(corpus, "log", "-n50", "--format=%H %an %at %B", "--name-status"))
    f_show = _floor(_git(corpus, "show", "--format=%H %an %B", "--patch", sha))
    f_blame = _floor(_git(corpus, "blame", "--porcelain", "HEAD", "--", t["daily"]))
    f_status = _floor(_git(corpus, "status", "--porcelain", "--untracked-files=all"))
    report("floor: git log -1 -- <hot file>", f_hot1, note=hot)
    report("floor: git log -n50 -- <hot file>", f_hot50)
    report("floor: git log -n50 -- <cold file>", f_cold50, note=cold)

    one, fifty = "git log -1 -- <hot file>", "git log -n50 -- <hot file>"
    pages: list[tuple[str, str, dict, str, list[float]]] = [
        ("file history, hot file", f"/history/{quote(hot)}", {}, fifty, f_hot50),
        ("file history, page 2", f"/history/{quote(hot)}?page=2", {}, fifty, f_hot50),
        ("file history, cold file", f"/history/{quote(cold)}", {},
         "git log -n50 -- <cold file>", f_cold50),
        ("scope history", f"/s/{scope}/history/", {}, fifty, f_hot50),
        ("activity feed", "/activity/", {}, "git log -n50 --name-status", f_feed),
        ("activity, older page", "/activity/?offset=500", {}, "git log -n50 --name-status",
         f_feed),
        ("activity, actor=agent:<scope>", f"/activity/?actor=agent:{scope}", {},
         "git log -n50 --name-status", f_feed),
        ("activity, scope=<scope>", f"/activity/?scope={scope}", {},
         "git log -n50 --name-status", f_feed),
        ("activity, kind=world", "/activity/?kind=world", {}, "git log -n50 --name-status",
         f_feed),
        ("activity, date range", f"/activity/?since={t['since']}&until={t['until']}", {},
         "git log -n50 --name-status", f_feed),
        ("activity, htmx fragment", f"/activity/?scope={scope}", {"HTTP_HX_REQUEST": "true"},
         "git log -n50 --name-status", f_feed),
        ("activity.atom", "/activity.atom", {}, "git log -n50 --name-status", f_feed),
        ("commit diff, unified", f"/commit/{sha}/", {}, "git show <sha>", f_show),
        ("commit diff, split", f"/commit/{sha}/?view=split", {}, "git show <sha>", f_show),
        ("compare fragment (htmx)", f"/commit/{sha}/?path={quote(hot)}",
         {"HTTP_HX_REQUEST": "true"}, "git show <sha>", f_show),
        ("file at a commit", f"/at/{sha}/{quote(hot)}", {}, one, f_hot1),
        ("blame, daily log", f"/blame/{quote(t['daily'])}", {}, "git blame --porcelain",
         f_blame),
        ("pending changes (none)", "/pending/", {}, "git status --porcelain", f_status),
    ]
    for name, url, headers, floor_name, floor in pages:
        first = client.get(url, **headers)
        if first.status_code != 200:
            report(name, None, note=f"skipped: {url} answered {first.status_code}")
            continue
        for _ in range(WARMUP):
            client.get(url, **headers)
        samples = [_ms(lambda url=url, headers=headers: client.get(url, **headers))
                   for _ in range(SAMPLES)]
        report(name, samples, floor=floor_name, floor_ms=floor,
               note=f"{len(first.content) // 1024} KiB")
    del store


if __name__ == "__main__":
    from bench.run import standalone

    sys.exit(standalone(run, name="history"))
