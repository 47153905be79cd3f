"""Sync with a git remote, domain level, on a copy of the corpus.

Rows, each beside its floor measured in the same run:

- a sync round with nothing to do. Floor: `git fetch` + `git push` of nothing by the CLI.
- a round that integrates 100 remote commits by a native host (append to a daily log each)
  while the workspace has one local write of its own (so it is a real merge, then a push).
  Floor: `git pull --no-rebase` (fetch + merge) of the same 100 commits by the CLI in a
  clone with one local commit, then `git push`.

The remote is a bare clone of the corpus over file://. After the run the benchmark checks
what a user would: the remote holds every native entry once and the workspace is clean.

Then real `manage.py serve` instances, each with its own clone of one bare remote
(MEMORYUI_REMOTE over file://) and one shared Postgres (SQLite per instance without it;
the note says which), see bench/cluster.py:

- propagation delay: `remember` acknowledged by instance A until instance B serves the entry
  (files API, polled every 50 ms), at MEMORYUI_SYNC_INTERVAL=1 and at the default 30 (few
  samples: each costs about an interval). Floor: the same commit moved by the git CLI
  (commit + push in one clone, fetch in another), measured in the same run.
- `remember` throughput of 3 instances together (1 worker each) against 1 instance with 3
  workers, the same 12 clients in total, both with sync rounds every second; afterwards the
  rounds must settle and the remote must hold every acknowledged entry exactly once.

    python -m bench.run --only sync
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from bench.cluster import Rig, count_on_remote, propagation, remember_load
from bench.options import OPTIONS
from memoryui.store import Actor, Store
from memoryui.store.sync import RemoteConfig, Syncer, bootstrap

N_NOOP = 20
N_BATCHES = 3
COMMITS = 100
ENV = {**os.environ, "GIT_AUTHOR_NAME": "native-bot", "GIT_AUTHOR_EMAIL": "native@agents",
       "GIT_COMMITTER_NAME": "native-bot", "GIT_COMMITTER_EMAIL": "native@agents",
       "GIT_TERMINAL_PROMPT": "0"}


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True,
                          env=ENV).stdout


def _native_commits(host: Path, batch: int, n: int) -> None:
    rel = f"agents/native-bot/memory/daily/2026-12-{batch + 1:02d}.md"
    full = host / rel
    full.parent.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        with open(full, "a") as fh:
            if fh.tell() == 0:
                fh.write(f"# 2026-12-{batch + 1:02d}\n")
            fh.write(f"\n## 10:{i % 60:02d}\n\nsyncbench native {batch}-{i}\n")
        _git(host, "add", "--", rel)
        _git(host, "commit", "-q", "-m", f"remember {batch}-{i}")
    _git(host, "push", "-q", "origin", "HEAD:main")


def run(corpus: Path, report: Callable[..., None]) -> None:
    tmp = corpus.parent / f"{corpus.name}-sync"
    tmp.mkdir(exist_ok=True)
    bare = tmp / "remote.git"
    _git(tmp, "clone", "--bare", "--quiet", str(corpus), str(bare))
    _git(bare, "symbolic-ref", "HEAD", "refs/heads/main")
    url = f"file://{bare}"
    config = RemoteConfig(url, branch="main", interval=0)
    bootstrap(corpus, config)
    store = Store(corpus)
    syncer = Syncer(store, config)
    syncer.round(blocking=True)  # warm: first fetch, caches

    noop = []
    for _ in range(N_NOOP):
        t = time.perf_counter()
        r = syncer.round(blocking=True)
        noop.append((time.perf_counter() - t) * 1000)
        assert r.error is None and not r.integrated
    floor_noop = []
    for _ in range(N_NOOP):
        t = time.perf_counter()
        _git(corpus, "fetch", "-q", url, "+refs/heads/main:refs/remotes/floor/main")
        _git(corpus, "push", "-q", url, "HEAD:refs/heads/main")
        floor_noop.append((time.perf_counter() - t) * 1000)
    report("sync round, nothing to do", noop, floor="git fetch + git push (CLI)",
           floor_ms=floor_noop)

    host = tmp / "host"
    floor = tmp / "floor"
    _git(tmp, "clone", "--quiet", url, str(host))
    _git(tmp, "clone", "--quiet", url, str(floor))
    merged, floor_ms = [], []
    for batch in range(N_BATCHES):
        _native_commits(host, batch, COMMITS)
        store.append(f"agents/ops-bot/memory/daily/2026-12-{batch + 1:02d}.md",
                     f"\n## 11:00\n\nsyncbench local {batch}\n", header="# local\n",
                     actor=Actor.agent("ops-bot"), tool="remember")
        t = time.perf_counter()
        r = syncer.round(blocking=True)
        merged.append((time.perf_counter() - t) * 1000)
        assert r.error is None and r.integrated >= COMMITS and r.pushed, r.summary()
        (floor / f"floor-{batch}.md").write_text("local\n")
        _git(floor, "add", "--", f"floor-{batch}.md")
        _git(floor, "commit", "-q", "-m", "floor local")
        t = time.perf_counter()
        _git(floor, "pull", "-q", "--no-rebase", "--no-edit", "origin", "main")
        _git(floor, "push", "-q", "origin", "HEAD:main")
        floor_ms.append((time.perf_counter() - t) * 1000)
        _git(host, "pull", "-q", "--no-rebase", "--no-edit", "origin", "main")
    report(f"sync round integrating {COMMITS} remote commits (merge + push)", merged,
           floor="git pull --no-rebase + git push (CLI)", floor_ms=floor_ms,
           note=f"{COMMITS / (sum(merged) / len(merged) / 1000):.0f} commits/s")

    log = _git(bare, "log", "-p", "main", "--", "agents/native-bot")
    for batch in range(N_BATCHES):
        for i in range(COMMITS):
            assert f"+syncbench native {batch}-{i}\n" in log
    assert store.pending() == []
    store.close()
    servers_figures(corpus, tmp, report)


CLIENTS = 12
SCOPES = 4


def _cli_propagation(corpus: Path, tmp: Path, n: int) -> list[float]:
    """Floor: one commit moved from one clone to another by the git CLI."""
    bare = tmp / "floor-remote.git"
    other = tmp / "floor-other.git"
    _git(tmp, "clone", "--bare", "--quiet", str(corpus), str(bare))
    _git(tmp, "clone", "--bare", "--quiet", str(bare), str(other))
    rel = "agents/native-bot/memory/daily/2026-12-20.md"
    (corpus / rel).parent.mkdir(parents=True, exist_ok=True)
    out = []
    for i in range(n):
        t = time.perf_counter()
        with open(corpus / rel, "a") as fh:
            fh.write(f"\n## 09:{i % 60:02d}\n\nfloor {i}\n")
        _git(corpus, "add", "--", rel)
        _git(corpus, "commit", "-q", "-m", f"floor {i}", "--", rel)
        _git(corpus, "push", "-q", str(bare), "HEAD:refs/heads/main")
        _git(other, "fetch", "-q", str(bare), "+refs/heads/main:refs/heads/main")
        out.append((time.perf_counter() - t) * 1000)
    return out


def servers_figures(corpus: Path, tmp: Path, report: Callable[..., None]) -> None:
    scopes = sorted(p.name for p in (corpus / "agents").iterdir() if p.is_dir())[:SCOPES]
    rig = Rig(tmp / "servers", corpus)
    floor = _cli_propagation(corpus, tmp, 10)
    floor_name = "commit + push + fetch (git CLI)"
    report(f"floor: {floor_name}", floor, note="one commit from one clone into another")
    big = OPTIONS.big
    try:
        a = rig.instance("a", scopes, workers=1, interval=1)
        b = rig.instance("b", scopes, workers=1, interval=1)
        rig.instance("c", scopes, workers=1, interval=1)
        rig.start(["a", "b"])
        scope = scopes[0]
        fast, missed = propagation(a, b, rig.tokens["a"][scope], rig.tokens["b"][scope], scope,
                                   10 if big else 20, 60, "propbench-1s")
        report("propagation A -> B, MEMORYUI_SYNC_INTERVAL=1", fast, floor=floor_name,
               floor_ms=floor, note=f"remember acknowledged on A until B serves it; "
                                    f"{missed} not seen within 60 s; {rig.database}")
        # 3 instances (1 worker each) against 1 instance with 3 workers, same clients.
        rig.start(["c"])
        n = 1200 if big else 600
        names = ["a", "b", "c"]
        servers, tokens = [rig.instances[x] for x in names], [rig.tokens[x] for x in names]
        remember_load(servers, tokens, scopes, 60, CLIENTS, "warm3")
        three, wall3, acked3, failed3 = remember_load(servers, tokens, scopes, n, CLIENTS,
                                                      "thr3")
        settle3 = rig.wait_settled(names, 300)
        rig.stop(["b", "c"])
        a.stop()
        rig.instance("a", scopes, workers=3, interval=1)
        rig.start(["a"])
        remember_load([a], [rig.tokens["a"]], scopes, 60, CLIENTS, "warm1")
        one, wall1, acked1, failed1 = remember_load([a], [rig.tokens["a"]], scopes, n, CLIENTS,
                                                    "thr1")
        settle1 = rig.wait_settled(["a"], 300)
        ops3, ops1 = len(three) / wall3, len(one) / wall1
        report(f"remember, 1 instance x 3 workers ({CLIENTS} clients, sync every 1 s)", one,
               ops_per_s=ops1, note=f"{_check(rig, 'thr1', acked1, failed1, settle1)}")
        report(f"remember, 3 instances x 1 worker ({CLIENTS} clients in all)", three,
               ops_per_s=ops3, floor="1 instance x 3 workers", floor_ms=one,
               note=f"throughput {ops3:.0f}/s = {ops3 / ops1:.2f}x of 1 instance ({ops1:.0f}/s); "
                    f"{_check(rig, 'thr3', acked3, failed3, settle3)}; {rig.database}; "
                    "all on one 2-core machine")
        # The default interval: a few samples, each costs about one interval.
        a.stop()
        rig.instance("a", scopes, workers=1, interval=30)
        rig.instance("b", scopes, workers=1, interval=30)
        rig.start(["a", "b"])
        slow, missed = propagation(a, b, rig.tokens["a"][scope], rig.tokens["b"][scope], scope,
                                   3 if big else 4, 180, "propbench-30s")
        report("propagation A -> B, MEMORYUI_SYNC_INTERVAL=30 (default)", slow,
               floor=floor_name, floor_ms=floor,
               note=f"{missed} not seen within 180 s; expect about one interval (A's round, "
                    "then B's)")
    finally:
        rig.close()


def _check(rig: Rig, mark: str, acked: list[str], failed: dict[int, int],
           settle: float | None) -> str:
    """What a user would check: every acknowledged entry on the remote exactly once."""
    counts = count_on_remote(rig.bare, mark)
    lost = sum(1 for c in acked if counts.get(c, 0) == 0)
    doubled = sum(1 for c in acked if counts.get(c, 0) > 1)
    when = f"settled {settle:.1f} s after the load" if settle is not None else "NOT settled"
    why = ", ".join(f"{n} x HTTP {code}" if code else f"{n} x no answer"
                    for code, n in sorted(failed.items()))
    fails = f"{sum(failed.values())} failed ({why})" if failed else "0 failed"
    return (f"{len(acked)} acknowledged, {fails}; on the remote: {lost} lost, "
            f"{doubled} doubled; {when}")
