"""Several real memoryui instances on one git remote and one shared Postgres.

`Cluster` starts `manage.py serve` processes, each with its own workspace folder (a clone
of the remote, made by the server's own bootstrap), var folder, search index and port, all
on one throwaway Postgres database; tokens and people are created once, through the
command line of one instance, and used on every instance. The remote is a bare repository
whose `post-receive` hook writes down every tip it is given, so a test can check that no
push ever dropped a commit.

No fixed sleeps: `wait_until` polls a condition against a deadline.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from tests.api.realserver import ROOT, RealServer
from tests.sync_fixtures import git, make_bare

PASSWORD = "lead-password-e2e"
# One SECRET_KEY for every instance: sessions are rows in the shared database, but Django
# checks each session's auth hash (and signs flash-message cookies) with SECRET_KEY, so a
# session made on one instance is only valid on another when the keys match.
SECRET_KEY = "e2e-cluster-shared-secret-key-" + "x" * 30
TIPS_HOOK = """#!/bin/sh
# Every tip this remote was given, in order (the test checks none was ever dropped).
while read old new ref; do echo "$ref $new" >> "{log}"; done
"""


def wait_until(cond: Callable[[], object], timeout: float, what: str,
               every: float = 0.05, explain: Callable[[], str] | None = None) -> object:
    """Poll `cond` until it returns something truthy; fail naming `what` at the deadline,
    with what `explain` says of the state then (the instances' heads, status and logs)."""
    end = time.monotonic() + timeout
    last_exc: Exception | None = None
    while True:
        try:
            value = cond()
            if value:
                return value
        except Exception as exc:  # noqa: BLE001 - a condition may fail until it holds
            last_exc = exc
        if time.monotonic() > end:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}"
                                 + (f" (last error: {last_exc!r})" if last_exc else "")
                                 + (f"\n{_said(explain)}" if explain else ""))
        time.sleep(every)  # a poll interval, not a pace


def make_remote(base: Path) -> tuple[Path, Path]:
    """A bare remote with a tip-logging hook: (repository, tips log)."""
    bare = make_bare(base / "memory.git")
    log = base / "tips.log"
    log.touch()
    hook = bare / "hooks" / "post-receive"
    hook.write_text(TIPS_HOOK.format(log=log))
    hook.chmod(0o755)
    return bare, log


def remote_tips(log: Path) -> list[str]:
    return [ln.split()[1] for ln in log.read_text().splitlines()
            if ln.startswith("refs/heads/main ")]


class Instance(RealServer):
    """One memoryui instance of the cluster (a `serve` process and its own clone)."""

    def __init__(self, name: str, tmp: Path, *, url: str, database: str, workers: int,
                 env: dict[str, str] | None = None):
        super().__init__(tmp / name, workers=workers, env={
            "DATABASE_URL": database,
            "SECRET_KEY": SECRET_KEY,
            "MEMORYUI_REMOTE": url,
            "MEMORYUI_SYNC_INTERVAL": "1",
            "MEMORYUI_PASSWORD": PASSWORD,
            "LOG_LEVEL": "INFO",
            **(env or {}),
        })
        self.name = name

    def head(self) -> str | None:
        out = git(self.workspace, "rev-parse", "--verify", "--quiet", "HEAD", check=False)
        return out.strip() or None

    def tree(self) -> str | None:
        out = git(self.workspace, "rev-parse", "--verify", "--quiet", "HEAD^{tree}",
                  check=False)
        return out.strip() or None

    def clean(self) -> bool:
        """Every write memoryui made is committed (nothing pending in the working tree)."""
        return git(self.workspace, "status", "--porcelain", "--untracked-files=all") == ""

    def manage_out(self, *args: str) -> subprocess.CompletedProcess:
        """A manage.py command whose failure is an answer, not an exception."""
        return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=self.env,
                              capture_output=True, text=True, timeout=300)

    def page(self, cookie: str, path: str) -> tuple[int, str]:
        reply = self.send("GET", path, headers={"Cookie": cookie})
        return reply.status, reply.body.decode()

    def log_text(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""


def start_all(instances: list[Instance]) -> None:
    """Start every instance at once (the slow part is each process importing Django)."""
    with ThreadPoolExecutor(len(instances)) as pool:
        list(pool.map(lambda i: i.start(), instances))


def stop_all(instances: list[Instance]) -> None:
    with ThreadPoolExecutor(len(instances)) as pool:
        list(pool.map(lambda i: i.stop(), instances))


def _said(explain: Callable[[], str]) -> str:
    try:
        return explain()
    except Exception as exc:  # noqa: BLE001 - the timeout itself is what must be reported
        return f"(could not describe the state: {exc!r})"


def describe(instances: list[Instance], bare: Path) -> str:
    """Where each instance stands against the remote's tip: its HEAD, what `git status`
    shows and the end of its log (for a settle that timed out)."""
    tip = git(bare, "rev-parse", "main").strip()
    out = [f"remote tip {tip}"]
    for i in instances:
        status = git(i.workspace, "--no-optional-locks", "status", "--porcelain",
                     "--untracked-files=all", check=False)
        out.append(f"instance {i.name}: HEAD {i.head()}; status: {status.strip()[:800]!r}")
        out += [f"  {line}" for line in i.log_text().splitlines()[-25:]]
    return "\n".join(out)


def settled(instances: list[Instance], bare: Path, extra: Callable[[], bool] | None = None
            ) -> bool:
    """Every instance's HEAD is the remote's tip and nothing is left uncommitted."""
    tip = git(bare, "rev-parse", "main").strip()
    return all(i.head() == tip and i.clean() for i in instances) and (extra is None or extra())
