"""What `manage.py serve` does around a stock uvicorn: check that a worker can start, run
the committer process beside the server, and stop when workers keep dying.

uvicorn's own supervisor (0.54) stops when a worker reports a start failure (the app does
not import, its lifespan startup fails), but a worker that dies before it can report one
(the interpreter cannot read the virtualenv, say) is replaced every half second for as
long as the supervisor lives, and connections wait in the listen backlog meanwhile. So
`serve` first starts one interpreter the way a worker starts and imports the app, and
while it serves it counts its worker processes' replacements: past DEATHS_PER_WORKER per
worker within DEATH_WINDOW seconds it asks uvicorn to stop (SIGTERM to itself) and exits
non-zero with one line, as it does when a worker reported a failed start. The count comes
from the rank in the name multiprocessing gives each process ("SpawnProcess-N": the N-th
this process started), so the workers that died between two looks count too.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from pathlib import Path

log = logging.getLogger("memoryui.serve")

PREFLIGHT_TIMEOUT = 300.0  # seconds one interpreter may take to import the app
DEATHS_PER_WORKER = 3  # replacements per worker within DEATH_WINDOW: a crash loop
DEATH_WINDOW = 60.0
WATCH_FIRST = 0.05  # seconds between looks at the worker processes in their first minute
WATCH_EVERY = 2.0  # and afterwards
STARTUP_FAILURE = 3  # a uvicorn worker's exit status when it could not start (uvicorn.config)
COMMITTER_BACKOFF = (1.0, 2.0, 5.0, 10.0, 30.0)  # before restarting a committer that died
COMMITTER_STOP_TIMEOUT = 60.0  # it commits what is journaled before it exits
PARENT_FD = "MEMORYUI_PARENT_FD"  # a committer started by serve: the pipe that ends with it


def child_env(base: Path) -> dict[str, str]:
    """The environment of a process that imports memoryui as this one does."""
    env = dict(os.environ)
    env.setdefault("DJANGO_SETTINGS_MODULE", "memoryui.settings")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(base), env.get("PYTHONPATH", "")) if p)
    return env


def preflight(env: dict[str, str]) -> str | None:
    """None when a new interpreter imports the ASGI app; else the reason, in one line."""
    try:
        done = subprocess.run([sys.executable, "-c", "import memoryui.asgi"], env=env,
                              stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=PREFLIGHT_TIMEOUT)
    except subprocess.TimeoutExpired:
        return f"importing the app took over {PREFLIGHT_TIMEOUT:.0f} s"
    except OSError as exc:
        return f"{sys.executable}: {exc.strerror or exc}"
    if done.returncode == 0:
        return None
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    return lines[-1].strip() if lines else f"exit status {done.returncode}"


class CommitterChild:
    """`manage.py committer` as a child process, restarted (after a back-off) if it dies.
    A write the workers journal after it stopped is committed by the worker itself."""

    def __init__(self, env: dict[str, str]) -> None:
        self.env = env
        self.proc: subprocess.Popen | None = None
        self._lifeline: int | None = None  # the write end of the child's PARENT_FD pipe
        self.stopping = threading.Event()
        self._lock = threading.Lock()  # no restart slips in while `stop` runs
        self._thread = threading.Thread(target=self._keep, name="memoryui-committer-watch",
                                        daemon=True)

    def start(self) -> None:
        self._spawn()
        self._thread.start()

    def _spawn(self) -> None:
        # A pipe nobody writes to: the committer sees its end when this process ends, even
        # by SIGKILL, and stops rather than outlive the server it was started for.
        read, write = os.pipe()
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "django", "committer"], stdin=subprocess.DEVNULL,
                env={**self.env, PARENT_FD: str(read)}, pass_fds=(read,))
        finally:
            os.close(read)
        if self._lifeline is not None:
            os.close(self._lifeline)
        self._lifeline = write

    def _keep(self) -> None:
        failures = 0
        while self.proc is not None:
            began = time.monotonic()
            code = self.proc.wait()
            if self.stopping.is_set() or code == 0:
                return  # stopped (a Ctrl-C reaches it with the server): nothing to replace
            failures = 0 if time.monotonic() - began > DEATH_WINDOW else failures + 1
            pause = COMMITTER_BACKOFF[min(failures, len(COMMITTER_BACKOFF)) - 1] if failures else 0.0
            log.warning("the committer process ended (exit status %s); starting another in "
                        "%.0f s (the workers commit their own writes meanwhile)", code, pause)
            if self.stopping.wait(pause):
                return
            with self._lock:
                if self.stopping.is_set():
                    return
                self._spawn()

    def stop(self) -> None:
        with self._lock:
            self.stopping.set()
            proc = self.proc
        if proc is None or proc.poll() is not None:
            return
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(COMMITTER_STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            log.error("the committer did not stop within %.0f s; killed (its journaled "
                      "writes are committed by the next process on the workspace)",
                      COMMITTER_STOP_TIMEOUT)
            proc.kill()
            proc.wait()


def rank(name: str) -> int | None:
    """N in the name multiprocessing gives the N-th process this one started
    ("SpawnProcess-N"; Python's docs: "Process-N1:N2:...:Nk"); None for another name."""
    head, _, tail = name.rpartition("-")
    last = tail.rpartition(":")[2]
    return int(last) if head and last.isdigit() else None


class CrashWatch:
    """Watches the server's worker processes: asks this process to stop on a crash loop,
    and tells afterwards whether a worker reported a failed start (uvicorn's supervisor
    then stops, as after a stop signal)."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self.limit = DEATHS_PER_WORKER * workers
        self.tripped = ""  # the one line said when it stopped the server
        self._seen: dict[int, multiprocessing.process.BaseProcess] = {}
        self._started = 0  # worker processes started so far, as far as the looks tell
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="memoryui-crash-watch",
                                        daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._look()  # the last workers, so a late failed start is seen

    def failed_start(self) -> bool:
        return any(p.exitcode == STARTUP_FAILURE for p in list(self._seen.values()))

    def _look(self) -> int:
        """Note the worker processes alive now; how many workers were started since the
        last look beyond the first ones: the replacements, those that died unseen between
        two looks included (a worker failing at start lives a few milliseconds)."""
        alive = [p for p in multiprocessing.active_children() if p.pid is not None]
        new = [p for p in alive if p.pid not in self._seen]
        self._seen.update((p.pid, p) for p in new)  # type: ignore[misc]
        ranks = [rank(p.name) for p in new]
        if None in ranks:  # a name given by someone else: count the new ones seen
            first = max(0, min(len(new), self.workers - self._started))
            self._started += len(new)
            return len(new) - first
        newest = max([r for r in ranks if r is not None], default=self._started)
        replaced = max(0, newest - max(self._started, self.workers))
        self._started = max(self._started, newest)
        return replaced

    def _watch(self) -> None:
        began = time.monotonic()
        replaced: deque[float] = deque()
        while not self._stop.wait(WATCH_FIRST if time.monotonic() - began < DEATH_WINDOW
                                  else WATCH_EVERY):
            now = time.monotonic()
            replaced.extend([now] * self._look())
            while replaced and now - replaced[0] > DEATH_WINDOW:
                replaced.popleft()
            if len(replaced) > self.limit:
                self.tripped = (f"workers keep dying ({len(replaced)} replaced within "
                                f"{DEATH_WINDOW:.0f} s); see the errors above")
                os.kill(os.getpid(), signal.SIGTERM)  # uvicorn's own way to stop
                return
