"""The multi-instance cluster shared by the e2e tests of one module (starting three
servers is the slow part; the tests leave it settled for the next one).

Instance a reaches the remote over git:// (a real `git daemon`), b over smart HTTP with a
password in its URL, c over file://; a native agent host pushes over file://.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.e2e.cluster import PASSWORD, Instance, make_remote, start_all, stop_all
from tests.pg import pg_database
from tests.sync_fixtures import GitDaemon, HttpGit, NativeHost

# Playwright's sync API runs an event loop in this thread (see tests/browser/conftest.py).
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

SCOPES = ("ops-bot", "dev-bot")
FIRST_MEMORY = "# Ops bot\n\n- deploys on Fridays\n- the staging host is blue\n"


@dataclass
class Cluster:
    a: Instance
    b: Instance
    c: Instance
    bare: Path
    tips: Path
    native: NativeHost
    daemon: GitDaemon
    http: HttpGit
    tokens: dict[str, str]
    tmp: Path
    pages: list[str] = field(default_factory=list)  # every page fetched, for the secret check
    outputs: list[str] = field(default_factory=list)  # every command's output, likewise
    cookies: dict[str, str] = field(default_factory=dict)

    def cookie(self, inst: Instance) -> str:
        """The curator's session, signed in on instance a and used on every instance:
        sessions live in the shared database, so a load balancer needs no sticky sessions."""
        if "lead" not in self.cookies:
            self.cookies["lead"] = self.a.sign_in("lead", PASSWORD)
        return self.cookies["lead"]

    @property
    def instances(self) -> list[Instance]:
        return [self.a, self.b, self.c]


@pytest.fixture(scope="module")
def cluster(pg_server: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    tmp = tmp_path_factory.mktemp("e2e")
    bare, tips = make_remote(tmp / "remotes")
    native = NativeHost(f"file://{bare}", tmp / "native")
    native.write("agents/ops-bot/memory/MEMORY.md", FIRST_MEMORY)
    native.remember("the native host is up")
    native.commit("native: first memory")
    native.push()
    daemon = GitDaemon(tmp / "remotes").start()
    http = HttpGit(tmp / "remotes").start()
    database = pg_database(pg_server)
    a = Instance("a", tmp, url=daemon.url("memory.git"), database=database, workers=2)
    b = Instance("b", tmp, url=http.url("memory.git"), database=database, workers=1)
    c = Instance("c", tmp, url=f"file://{bare}", database=database, workers=1)
    instances = [a, b, c]
    try:
        # One database for all: migrate once; the curator and the tokens are made through
        # instance a's command line while the servers start (each its own process).
        a.migrate()
        with ThreadPoolExecutor(4) as pool:
            person = pool.submit(a.manage, "user", "lead", "--role", "curator")
            made = {scope: pool.submit(a.token, scope) for scope in SCOPES}
            start_all(instances)
            person.result()
            tokens = {scope: f.result() for scope, f in made.items()}
        yield Cluster(a, b, c, bare, tips, native, daemon, http, tokens, tmp)
    finally:
        stop_all(instances)
        daemon.stop()
        http.stop()
