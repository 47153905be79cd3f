"""Two stacks served from the same cores at the same time: their ratio of `remember` calls
a second, measured where neither can have a faster moment of the machine than the other.

On a shared virtual machine the speed of a core moves by a quarter or more from one
minute to the next, so two stacks measured one after the other (bench_stock) differ by as
much as the machine did between them. Here both run at once, each on a fresh workspace,
with the server processes of both kept to `--server-cpus`: Linux shares those cores evenly
between the two stacks' sessions, and the one that does less work per call answers more
calls. Each stack has its own client process (16 keep-alive clients, on `--client-cpus`)
sending `remember` as fast as its server answers; the calls each stack answered in the
window in which both were loaded, divided, give the ratio. Every round runs the pair
twice, each stack starting first once.

    python -m bench.bench_together --baseline DIR [--stack uvicorn] [--workers 2] [--rounds 3]

`--baseline DIR` is `manage.py serve` of another checkout (the main branch, say); the
stock stack (`--stack`, beside `manage.py committer`) runs this checkout. At the end every
acknowledged entry must be on disk once in both workspaces and `git status` clean.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import statistics
import sys
import tempfile
from multiprocessing.queues import Queue
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.bench_api import http_remember, verify  # noqa: E402
from bench.bench_stock import CLIENTS, SCOPES, WORKERS, Stack, settle  # noqa: E402
from tests.api.realserver import RealServer  # noqa: E402

CALLS = 6000  # per stack and pair: about 10 s each at half a core


class Side:
    """One stack of a pair: its server, tokens and what its clients sent."""

    def __init__(self, kind: str, root: Path, tmp: Path, cpus: str, workers: int) -> None:
        self.kind = kind
        self.server = RealServer(tmp / kind, workers=workers)
        self.server.migrate()
        self.tokens = {s: self.server.token(s) for s in SCOPES}
        self.stack = Stack(kind, self.server, cpus, workers, root)
        self.sent: dict[str, str] = {}
        self.errors = 0  # calls answered with anything but 200


def drive(side: Side, calls: int, cpus: set[int], answers: Queue) -> None:
    """(In a client process) `calls` remember calls as fast as the server answers; puts
    the time each answered call ended (perf_counter: one clock for every process), what
    was sent and the calls that failed."""
    os.sched_setaffinity(0, cpus)
    starts: list[float] = []
    lat, _wall, sent, errors = http_remember(side.server, side.tokens, calls, CLIENTS,
                                             starts=starts)
    answers.put((sorted(s + ms / 1000 for s, ms in zip(starts, lat, strict=True)), sent,
                 len(errors)))


def pair(first: Side, second: Side, calls: int, client_cpus: set[int]) -> dict[str, float]:
    """Both stacks loaded at once; each one's calls a second in the window both were."""
    sides = [first, second]
    for side in sides:
        side.stack.start()
    try:
        for side in sides:
            side.sent.update(http_remember(side.server, side.tokens, 200, CLIENTS)[2])
        for side in sides:
            settle(side.stack)
        context = multiprocessing.get_context("fork")
        queues = [context.Queue() for _ in sides]
        procs = [context.Process(target=drive, args=(side, calls, client_cpus, q))
                 for side, q in zip(sides, queues, strict=True)]
        for proc in procs:
            proc.start()
        results = [q.get() for q in queues]
        for proc in procs:
            proc.join()
        for side, (_ends, sent, errors) in zip(sides, results, strict=True):
            side.sent.update(sent)
            side.errors += errors
        settle(first.stack)
        settle(second.stack)
    finally:
        for side in sides:
            side.stack.stop()
    return rates_while_both({side.kind: ends
                             for side, (ends, *_) in zip(sides, results, strict=True)})


def rates_while_both(ends: dict[str, list[float]]) -> dict[str, float]:
    """Each stack's answers a second in the window in which every stack was answering
    (from the latest first answer to the earliest last one), from the sorted times its
    calls ended: a stack alone on the core before or after the other is not counted."""
    begin = max(times[0] for times in ends.values())
    end = min(times[-1] for times in ends.values())
    if end <= begin:
        raise ValueError("the stacks were never loaded at the same time")
    return {kind: sum(1 for t in times if begin <= t <= end) / (end - begin)
            for kind, times in ends.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", type=Path, required=True)
    parser.add_argument("--stack", default="uvicorn", choices=("uvicorn", "gunicorn", "granian"))
    parser.add_argument("--workers", type=int, default=WORKERS)
    parser.add_argument("--server-cpus", default="0")
    parser.add_argument("--client-cpus", default="1")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--calls", type=int, default=CALLS)
    args = parser.parse_args()
    client_cpus = {int(c) for c in args.client_cpus.split(",")}
    os.sched_setaffinity(0, client_cpus)
    ratios: list[float] = []
    with tempfile.TemporaryDirectory(prefix="memoryui-together-") as tmp:
        for n in range(2 * args.rounds):
            base = Side("baseline", args.baseline.resolve(), Path(tmp) / f"p{n}",
                        args.server_cpus, args.workers)
            stock = Side(args.stack, ROOT, Path(tmp) / f"p{n}", args.server_cpus,
                         args.workers)
            rates = pair(*((base, stock) if n % 2 == 0 else (stock, base)), args.calls,
                         client_cpus)
            ratio = rates[args.stack] / rates["baseline"]
            ratios.append(ratio)
            print(f"pair {n + 1} ({'baseline' if n % 2 == 0 else args.stack} started first): "
                  f"baseline {rates['baseline']:.0f}/s, {args.stack} {rates[args.stack]:.0f}/s"
                  f" at the same time: {ratio:.2f}x", flush=True)
            for side in (base, stock):
                print(f"  {side.kind}: {side.errors} failed calls; "
                      f"{verify(side.server.workspace, side.sent)}")
    print(f"{args.stack} / baseline, {args.workers} workers each on CPU {args.server_cpus}: "
          f"median {statistics.median(ratios):.2f}x "
          f"(pairs {min(ratios):.2f}-{max(ratios):.2f}x)")


if __name__ == "__main__":
    main()
