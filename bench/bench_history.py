"""Server time of the history pages on the corpus, beside git's own floor.

Through Django's test client (whole middleware stack and templates, no network), signed in
as a viewer, on a fresh copy of the corpus:

- file history of the most-touched file and of a rarely touched one (git must walk the
  whole history for the latter; the commit-graph's Bloom filters are what keep it cheap);
- the activity feed unfiltered and with each filter (actor, scope, kind, date range), its
  htmx fragment and the Atom feed: one `git log` per page;
- a commit's diff, unified and side by side; a file at a commit; blame; pending changes.

Floors measured in the same run: `git log -1 -- <path>` and `git log -n50 -- <path>` for
the same files, `git log -n50 --name-status` for the feed (with the same filter for a
filtered feed: the scope's or world's folders, the actor's trailer, the dates, an older
page's offset), `git show <sha>` for a commit.
"""

from __future__ import annotations

import resource
import statistics
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from urllib.parse import quote

from bench.options import OPTIONS

SAMPLES = 10 if OPTIONS.preset == "huge" else 30  # modules are imported after OPTIONS is set
WARMUP = 3
FLOOR_SAMPLES = 20


def _ms(fn: Callable[[], object]) -> float:
    t = time.perf_counter()
    fn()
    return (time.perf_counter() - t) * 1000


def _cpu(fn: Callable[[], object]) -> tuple[float, float]:
    """(wall ms, CPU ms of this process and its git children): CPU holds up on a busy box."""
    s0, c0 = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(
        resource.RUSAGE_CHILDREN)
    wall = _ms(fn)
    s1, c1 = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(
        resource.RUSAGE_CHILDREN)
    cpu = sum(getattr(b, f) - getattr(a, f) for a, b in ((s0, s1), (c0, c1))
              for f in ("ru_utime", "ru_stime"))
    return wall, cpu * 1000


def _git(corpus: Path, *args: str) -> list[str]:
    return ["git", "-C", str(corpus), *args]


def _floor(cmd: list[str]) -> tuple[list[float], float]:
    """Wall samples of a git command, and its median CPU time."""
    subprocess.run(cmd, capture_output=True, check=True)  # warm the page cache
    pairs = [_cpu(lambda: subprocess.run(cmd, capture_output=True, check=True))
             for _ in range(FLOOR_SAMPLES)]
    return [w for w, _c in pairs], statistics.median(c for _w, c in pairs)


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
    from bench.bench_pages import signed_in_client, warm_page

    client = signed_in_client(corpus, "history", "viewer")
    from memoryui.workspace import get_store

    store = get_store()
    t = _targets(corpus)
    hot, cold, sha, scope = t["hot"], t["cold"], t["sha"], t["scope"]

    floors = {
        "git log -1 -- <hot file>": ("log", "-1", "--format=%H %an %at %s", "--", hot),
        "git log -n50 -- <hot file>": ("log", "-n50", "--format=%H %an %at %B", "--", hot),
        "git log -n50 -- <cold file>": ("log", "-n50", "--format=%H %an %at %B", "--", cold),
        "git log -n50 --name-status": ("log", "-n50", "--format=%H %an %at %B",
                                       "--name-status"),
        "git show <sha>": ("show", "--format=%H %an %B", "--patch", sha),
        "git blame --porcelain <daily>": ("blame", "--porcelain", "HEAD", "--", t["daily"]),
        "git blame --porcelain <hot file>": ("blame", "--porcelain", "HEAD", "--", hot),
        "git status --porcelain": ("status", "--porcelain", "--untracked-files=all"),
    }
    # A filtered feed's floor is git's log with the same filter (what memoryui asks git
    # for): the unfiltered log finds its 50 commits at once, a filter may walk far more.
    from memoryui.store.history import _actor_args

    log50 = ("log", "-n51", "--format=%H %an %at %B", "--name-status")
    floors.update({
        "git log -n50 --name-status -- <scope>": (
            *log50, "--", *store.layout.pathspecs(None, scope)),
        "git log -n50 --name-status -- <world>": (
            *log50, "--", *store.layout.pathspecs("world", None)),
        "git log -n50 --name-status --grep=<actor>": (*log50, *_actor_args(f"agent:{scope}")),
        "git log -n50 --skip=500 --name-status": (*log50, "--skip=500"),
        "git log -n50 --name-status --since --until": (
            *log50, f"--since={t['since']}", f"--until={t['until']}"),
    })
    measured = {name: _floor(_git(corpus, *args)) for name, args in floors.items()}
    for name in ("git log -1 -- <hot file>", "git log -n50 -- <hot file>",
                 "git log -n50 -- <cold file>"):
        wall, cpu = measured[name]
        report(f"floor: {name}", wall, note=f"CPU {cpu:.1f} ms; "
               + (cold if "cold" in name else hot))

    feed, fifty = "git log -n50 --name-status", "git log -n50 -- <hot file>"
    hx = {"HTTP_HX_REQUEST": "true"}
    pages: list[tuple[str, str, dict, str]] = [
        ("file history, hot file", f"/history/{quote(hot)}", {}, fifty),
        ("file history, page 2", f"/history/{quote(hot)}?page=2", {}, fifty),
        ("file history, cold file", f"/history/{quote(cold)}", {},
         "git log -n50 -- <cold file>"),
        ("scope history", f"/s/{scope}/history/", {}, fifty),
        ("activity feed", "/activity/", {}, feed),
        ("activity, older page (offset 500)", "/activity/?offset=500", {},
         "git log -n50 --skip=500 --name-status"),
        ("activity, actor=agent:<scope>", f"/activity/?actor=agent:{scope}", {},
         "git log -n50 --name-status --grep=<actor>"),
        ("activity, scope=<scope>", f"/activity/?scope={scope}", {},
         "git log -n50 --name-status -- <scope>"),
        ("activity, kind=world", "/activity/?kind=world", {},
         "git log -n50 --name-status -- <world>"),
        ("activity, date range", f"/activity/?since={t['since']}&until={t['until']}", {},
         "git log -n50 --name-status --since --until"),
        ("activity, htmx fragment", f"/activity/?scope={scope}", hx,
         "git log -n50 --name-status -- <scope>"),
        ("activity.atom", "/activity.atom", {}, feed),
        ("commit diff, unified", f"/commit/{sha}/", {}, "git show <sha>"),
        ("commit diff, split", f"/commit/{sha}/?view=split", {}, "git show <sha>"),
        ("compare fragment (htmx)", f"/commit/{sha}/?path={quote(hot)}", hx, "git show <sha>"),
        ("file at a commit", f"/at/{sha}/{quote(hot)}", {}, "git log -1 -- <hot file>"),
        ("blame, daily log", f"/blame/{quote(t['daily'])}", {},
         "git blame --porcelain <daily>"),
        ("blame, hot file", f"/blame/{quote(hot)}", {}, "git blame --porcelain <hot file>"),
        ("pending changes (none)", "/pending/", {}, "git status --porcelain"),
    ]
    for name, url, headers, floor_name in pages:
        first = warm_page(client, name, url, headers, WARMUP, report)
        if first is None:
            continue
        pairs = [_cpu(lambda url=url, headers=headers: client.get(url, **headers))
                 for _ in range(SAMPLES)]
        floor_wall, floor_cpu = measured[floor_name]
        report(name, [w for w, _c in pairs], floor=floor_name, floor_ms=floor_wall,
               note=f"CPU {statistics.median(c for _w, c in pairs):.1f} ms vs floor CPU "
                    f"{floor_cpu:.1f} ms; {len(first.content) // 1024} KiB")
    _diff_pages(client, corpus, hot, report)
    # Every full page includes the browse area's sidebar; its share of the figures above:
    from memoryui.web import hierarchy

    pairs = [_cpu(lambda: hierarchy.sidebar(store, current_path=hot)) for _ in range(SAMPLES)]
    report("(part of every page) sidebar context", [w for w, _c in pairs],
           note=f"CPU {statistics.median(c for _w, c in pairs):.1f} ms; hierarchy.sidebar()")


def _diff_pages(client: object, corpus: Path, hot: str, report: Callable[..., None]) -> None:
    """The compare page in the rendered (prose) view and one expand-context
    fragment, beside `git diff A B -- <hot file>` for the same two commits."""
    import html
    import re

    from bench.bench_pages import warm_page

    shas = subprocess.run(_git(corpus, "log", "-n2", "--format=%H", "--", hot),
                          capture_output=True, text=True, check=True).stdout.split()
    if len(shas) < 2:
        return
    new, old = shas
    floor = "git diff A B -- <hot file>"
    wall, cpu = _floor(_git(corpus, "diff", old, new, "--", hot))
    report(f"floor: {floor}", wall, note=f"CPU {cpu:.1f} ms; {hot}")
    compare = f"/compare/{quote(hot)}?from={old}&to={new}"
    page = client.get(compare).content.decode()
    found = re.search(r'class="gap-link gap-\w+" href="[^"]*" hx-get="([^"]*)"', page)
    pages = [("compare, rendered (prose) view", compare, {}, "rendered")]
    if found:
        pages.append(("expand context fragment (htmx)", html.unescape(found.group(1)),
                      {"HTTP_HX_REQUEST": "true"}, "source"))
    for name, url, headers, mode in pages:
        client.cookies["memoryui_diffview"] = mode
        first = warm_page(client, name, url, headers, WARMUP, report)
        if first is None:
            continue
        pairs = [_cpu(lambda url=url, headers=headers: client.get(url, **headers))
                 for _ in range(SAMPLES)]
        report(name, [w for w, _c in pairs], floor=floor, floor_ms=wall,
               note=f"CPU {statistics.median(c for _w, c in pairs):.1f} ms vs floor CPU "
                    f"{cpu:.1f} ms; {len(first.content) // 1024} KiB")
    client.cookies["memoryui_diffview"] = "source"


if __name__ == "__main__":
    from bench.run import standalone

    sys.exit(standalone(run, name="history"))
