"""Sync publishing under steady native pushes, and what a push race costs against the backlog.

Part 1, live: N instances (in-process stores, each with its own clone and a thread running a
round every INTERVAL seconds, as the server's background thread does) share one bare
remote with K native hosts (plain clones) that each commit a daily-log entry and push
every second (pull --no-rebase and push again when rejected). An agent on every instance
remembers an entry every WRITE_EVERY seconds; a watcher reads the remote's branch every
50 ms and notes when each entry first appears there. Reported per instance: time to
publish (remember -> on the remote) p50/p99 and the entries still unpublished at the end,
rounds, retries and failed rounds; and the round's cost against its backlog (local
commits the remote lacked when it started). Floor: `git fetch` + `git push` of nothing by
the CLI in a clone of the same remote, measured in the same run.

Part 2, one race at a time: an instance with a backlog of B local commits (1, 250, 1000)
loses one push race (a native host pushes just before its push); the retry's cost is the
time from the rejected push to the accepted one (fetch, integrate, push again). It should
not grow with B.

Local paths only (file:// remotes), bounded duration:

    python -m bench.bench_sync_publish [--seconds 60] [--instances 3] [--pushers 2]
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import re
import shutil
import statistics
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pygit2

from memoryui.store import Actor, Kind, Store
from memoryui.store.sync import RemoteConfig, Syncer, bootstrap

DAY = dt.date.today().isoformat()
ENV = {**os.environ, "GIT_AUTHOR_NAME": "native", "GIT_AUTHOR_EMAIL": "native@agents",
       "GIT_COMMITTER_NAME": "native", "GIT_COMMITTER_EMAIL": "native@agents",
       "GIT_TERMINAL_PROMPT": "0"}


def _git(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=cwd, check=check, capture_output=True, text=True,
                          env=ENV, timeout=300)


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))]


def _remote(tmp: Path) -> str:
    bare = tmp / "remote.git"
    _git(tmp, "init", "--bare", "-q", "--initial-branch=main", str(bare))
    seed = tmp / "seed"
    _git(tmp, "clone", "-q", f"file://{bare}", str(seed))
    (seed / "README.md").write_text("bench\n")
    _git(seed, "add", "README.md")
    _git(seed, "commit", "-q", "-m", "seed")
    _git(seed, "push", "-q", "origin", "HEAD:main")
    return f"file://{bare}"


def _instance(tmp: Path, name: str, url: str, interval: float = 0) -> Syncer:
    config = RemoteConfig(url, branch="main", interval=interval)
    bootstrap(tmp / name, config)
    return Syncer(Store(tmp / name), config)


def _remember(store: Store, scope: str, text: str) -> None:
    path = store.path_for(Kind.DAILY, scope, DAY)
    store.append(path, f"\n## 10:00\n\n{text}\n", header=f"# {DAY}\n",
                 actor=Actor.agent(scope), tool="remember")


class Native:
    """A native host: a plain clone appending to its daily log, committing and pushing."""

    def __init__(self, url: str, path: Path, name: str):
        _git(path.parent, "clone", "-q", url, str(path))
        self.path, self.name, self.n = path, name, 0

    def commit_and_push(self, deadline: float) -> None:
        self.n += 1
        rel = f"agents/{self.name}/memory/daily/{DAY}.md"
        full = self.path / rel
        full.parent.mkdir(parents=True, exist_ok=True)
        with open(full, "a") as fh:
            fh.write(f"\n## 10:00\n\n{self.name} entry {self.n}\n")
        _git(self.path, "add", "--", rel)
        _git(self.path, "commit", "-q", "-m", f"{self.name} {self.n}")
        while time.monotonic() < deadline:
            if _git(self.path, "push", "-q", "origin", "HEAD:main", check=False).returncode == 0:
                return
            _git(self.path, "pull", "-q", "--no-rebase", "--no-edit", "origin", "main",
                 check=False)


def _floor(url: str, tmp: Path, n: int = 5) -> float:
    clone = tmp / "floor"
    _git(tmp, "clone", "-q", url, str(clone))
    times = []
    for _ in range(n):
        t = time.perf_counter()
        _git(clone, "fetch", "-q", "origin", "main")
        _git(clone, "push", "-q", "origin", "HEAD:refs/heads/floor")
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def live(tmp: Path, seconds: float, n_instances: int, n_pushers: int, interval: float,
         write_every: float) -> None:
    url = _remote(tmp)
    bare = pygit2.Repository(url[len("file://"):])
    instances = [_instance(tmp, f"inst{i}", url, interval) for i in range(n_instances)]
    natives = [Native(url, tmp / f"native{k}", f"native{k}") for k in range(n_pushers)]
    stop = threading.Event()
    end = time.monotonic() + seconds
    written: list[dict[int, float]] = [{} for _ in instances]
    seen: list[dict[int, float]] = [{} for _ in instances]
    rounds: list[list[tuple[int, float, int, bool, str | None]]] = [[] for _ in instances]
    lock = threading.Lock()

    def writer(i: int) -> None:
        n = 0
        while not stop.is_set():
            n += 1
            with lock:
                written[i][n] = time.monotonic()
            _remember(instances[i].store, f"inst{i}", f"bench inst{i} #{n}#")
            stop.wait(write_every)

    def rounder(i: int) -> None:
        s = instances[i]
        while not stop.is_set():
            head, tracking = s.store.head(), s.tracking_tip()
            backlog = s.git.repo.ahead_behind(head, tracking)[0] if head and tracking else 0
            t = time.monotonic()
            r = s.round(blocking=True)
            rounds[i].append((backlog, time.monotonic() - t, r.attempts, r.pushed, r.error))
            stop.wait(interval)

    def pusher(k: int) -> None:
        while not stop.is_set():
            t = time.monotonic()
            natives[k].commit_and_push(end + 30)
            stop.wait(max(0.0, 1.0 - (time.monotonic() - t)))

    def watcher() -> None:
        last = None
        marker = re.compile(r"bench inst(\d+) #(\d+)#")
        while not stop.is_set():
            ref = bare.references.get("refs/heads/main")
            tip = ref.target if ref is not None else None
            if tip != last and tip is not None:
                last, now = tip, time.monotonic()
                tree = bare[tip].peel(pygit2.Tree)
                for i in range(len(instances)):
                    try:
                        text = bare[tree[f"agents/inst{i}/memory/daily/{DAY}.md"].id].data
                    except KeyError:
                        continue
                    for m in marker.finditer(text.decode()):
                        seen[i].setdefault(int(m.group(2)), now)
            time.sleep(0.05)  # polling the remote's ref: the watcher's sampling period

    threads = [threading.Thread(target=f, args=(i,), daemon=True)
               for f, n in ((writer, n_instances), (rounder, n_instances), (pusher, n_pushers))
               for i in range(n)]
    threads.append(threading.Thread(target=watcher, daemon=True))
    for t in threads:
        t.start()
    while time.monotonic() < end:
        time.sleep(0.2)
    stop.set()
    for t in threads:
        t.join(timeout=120)
    finish = time.monotonic()
    floor = _floor(url, tmp)
    print(f"live: {n_instances} instances (round every {interval:g} s, a remember every "
          f"{write_every:g} s), {n_pushers} native pushers (every 1 s), {seconds:g} s")
    print(f"floor: git fetch + git push of nothing: {floor * 1000:.0f} ms")
    for i in range(len(instances)):
        waits = [seen[i].get(n, finish) - t for n, t in written[i].items()]
        missing = sum(1 for n in written[i] if n not in seen[i])
        rs = rounds[i]
        pushed = sum(1 for r in rs if r[3])
        failed = [r[4] for r in rs if r[4]]
        retries = sum(r[2] - 1 for r in rs)
        print(f"inst{i}: time to publish p50 {_pct(waits, .5):.2f} s, p99 {_pct(waits, .99):.2f} s,"
              f" max {max(waits, default=0):.2f} s; unpublished at the end {missing}/"
              f"{len(written[i])}; rounds {len(rs)}, pushed {pushed}, retries {retries}, "
              f"failed {len(failed)}")
        for lo, hi in ((0, 10), (10, 100), (100, 1000), (1000, 10**9)):
            cost = [r[1] for r in rs if lo <= r[0] < hi]
            if cost:
                print(f"    backlog {lo}-{hi if hi < 10**9 else 'more'}: {len(cost)} rounds, "
                      f"p50 {_pct(cost, .5) * 1000:.0f} ms, max {max(cost) * 1000:.0f} ms")
    for s in instances:
        s.store.close()


def _backlog(syncer: Syncer, n: int) -> None:
    """n local commits the remote lacks, made by git fast-import (one entry each)."""
    root = syncer.root
    path = syncer.store.path_for(Kind.DAILY, "ops", DAY)
    text = f"# {DAY}\n"
    lines = [f"reset refs/heads/main\nfrom {syncer.store.head()}\n"]
    for i in range(n):
        text += f"\n## 10:00\n\nbacklog entry {i}\n"
        data = text.encode()
        msg = f"remember {i}".encode()
        lines.append(f"commit refs/heads/main\ncommitter ops <ops@agents> {1700000000 + i} +0000\n"
                     f"data {len(msg)}\n{msg.decode()}\nM 100644 inline {path}\n"
                     f"data {len(data)}\n{text}\n")
    packs = set((root / ".git" / "objects" / "pack").glob("*.pack"))
    subprocess.run(["git", "fast-import", "--quiet"], cwd=root, input="".join(lines).encode(),
                   check=True, capture_output=True, env=ENV)
    # As loose objects, the way an instance's own commits are stored until housekeeping.
    for pack in set((root / ".git" / "objects" / "pack").glob("*.pack")) - packs:
        moved = pack.parent.parent.parent / pack.name
        pack.rename(moved)
        pack.with_suffix(".idx").unlink()
        with open(moved, "rb") as fh:
            subprocess.run(["git", "unpack-objects", "-q"], cwd=root, stdin=fh, check=True,
                           env=ENV)
        moved.unlink()
    _git(root, "read-tree", "-u", "--reset", "HEAD")


def race(tmp: Path, backlogs: list[int]) -> None:
    print("one lost push race: the retry's cost (rejected push -> accepted push)")
    for b in backlogs:
        base = tmp / f"race{b}"
        base.mkdir()
        url = _remote(base)
        native = Native(url, base / "native", "native")
        config = RemoteConfig(url, branch="main", interval=0)
        bootstrap(base / "a", config)
        probe = Syncer(Store(base / "a"), config)
        _backlog(probe, b)
        probe.store.close()
        syncer = Syncer(Store(base / "a"), config)  # opened on the backlog, as after a restart
        real_push: Callable = syncer.transport.push
        pushes: list[tuple[float, bool]] = []

        def push(sha: str, branch: str, real: Callable = real_push,
                 log: list[tuple[float, bool]] = pushes, host: Native = native) -> object:
            if not log:
                host.commit_and_push(time.monotonic() + 60)  # the race is lost once
            out = real(sha, branch)
            log.append((time.monotonic(), out.ok))
            return out

        syncer.transport.push = push  # type: ignore[method-assign]
        t = time.monotonic()
        r = syncer.round(blocking=True)
        total = time.monotonic() - t
        if not pushes:
            print(f"    backlog {b:5d}: no push ({r.summary()})")
            continue
        retry = pushes[1][0] - pushes[0][0] if len(pushes) > 1 else float("nan")
        print(f"    backlog {b:5d}: first attempt {(pushes[0][0] - t) * 1000:.0f} ms, retry "
              f"{retry * 1000:.0f} ms, round {total * 1000:.0f} ms (attempts {r.attempts}, "
              f"pushed {r.pushed}, error {r.error})")
        syncer.store.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--instances", type=int, default=3)
    ap.add_argument("--pushers", type=int, default=2)
    ap.add_argument("--interval", type=float, default=2)
    ap.add_argument("--write-every", type=float, default=0.5)
    ap.add_argument("--backlogs", default="1,250,1000")
    ap.add_argument("--skip-live", action="store_true")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-sync-publish-"))
    try:
        if not args.skip_live:
            live(tmp, args.seconds, args.instances, args.pushers, args.interval,
                 args.write_every)
        race(tmp, [int(b) for b in args.backlogs.split(",") if b])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
