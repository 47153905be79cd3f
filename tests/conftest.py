"""Shared fixtures: real git workspaces in tmp_path, people with roles, agent tokens."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from memoryui.store import Actor, Store
from tests.pg import pg_server as _pg_server

PASSWORD = "correct-horse-battery"

# A throwaway PostgreSQL server on 127.0.0.1 for the whole session (tests/pg.py).
pg_server = pytest.fixture(scope="session")(_pg_server)


@pytest.fixture(scope="session", autouse=True)
def _var_dir_outside_the_checkout(tmp_path_factory: pytest.TempPathFactory) -> None:
    """No test writes into the checkout's var/ (nor shares it with another xdist worker):
    one without the `workspace` fixture gets a throwaway workspace and index of its own."""
    from django.conf import settings

    var = tmp_path_factory.mktemp("var")
    settings.VAR_DIR = var
    settings.MEMORYUI_WORKSPACE = var / "workspace"
    settings.MEMORYUI_SEARCH_DB = var / "search.sqlite3"


@pytest.fixture(scope="session")
def django_db_modify_db_settings(django_db_modify_db_settings_parallel_suffix: None,
                                 tmp_path_factory: pytest.TempPathFactory) -> None:
    """SQLite's test database in a file (WAL, with the settings' busy timeout), not Django's
    shared-cache memory database: there the test thread adding a person while a live
    server's thread still read the users table failed with "database table is locked"
    (SQLITE_LOCKED, which no busy timeout waits out; seen once in a browser test)."""
    from django.conf import settings

    db = settings.DATABASES["default"]
    if db["ENGINE"].endswith("sqlite3"):
        db.setdefault("TEST", {})["NAME"] = str(tmp_path_factory.mktemp("db") / "test.sqlite3")


@pytest.fixture(autouse=True)
def _commit_at_once(settings) -> None:
    """Django-side stores commit before each write returns (production groups for 0.2 s)."""
    settings.MEMORYUI_COMMIT_DELAY = 0


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    """Real Chromium (Debian's package) through Playwright, one for the whole run: the
    browser tests and the cluster's end-to-end test share it (Playwright's sync API runs
    one event loop in the thread, so a second one started beside it fails)."""
    from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS

    if not Path(CHROMIUM).exists():
        pytest.fail(f"Debian's chromium is not installed at {CHROMIUM}: run the test command "
                    "from README (it installs it with apt)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield b
        b.close()


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    """A fresh workspace (git init-ed) committing every write at once."""
    s = Store(tmp_path / "ws")
    yield s
    s.close()


@pytest.fixture
def agent() -> Actor:
    return Actor.agent("ops-bot")


@pytest.fixture
def workspace(tmp_path: Path, settings) -> Iterator[Store]:
    """The Django-side Store pointed at a fresh workspace for this test."""
    from memoryui.workspace import get_store, reset_store

    settings.MEMORYUI_WORKSPACE = tmp_path / "ws"
    settings.MEMORYUI_SEARCH_DB = tmp_path / "search.sqlite3"
    reset_store()
    yield get_store()
    reset_store()


@pytest.fixture
def make_user(db) -> Callable[..., object]:
    """Factory: make_user("curator") -> a signed-up person with that role."""
    from memoryui.management.commands.user import set_person

    def make(role: str = "viewer", name: str | None = None) -> object:
        return set_person(name or role, role, PASSWORD)

    return make


@pytest.fixture
def client_as(client, make_user) -> Callable[[str], object]:
    """Factory: client_as("admin") -> the Django test client signed in with that role."""

    def login(role: str):
        user = make_user(role)
        client.force_login(user)
        return client

    return login


@pytest.fixture
def make_token(db) -> Callable[..., str]:
    """Factory: make_token("ops-bot", world=True) -> the raw bearer token."""
    from memoryui.models import Token

    def make(scope: str = "", *, world: bool = False, global_: bool = False,
             admin: bool = False) -> str:
        return Token.issue(scope=scope, world=world, global_=global_, admin=admin)[1]

    return make


class FixedClock:
    """A settable local clock for tools that write by date and time."""

    def __init__(self, when: dt.datetime):
        self.when = when

    def __call__(self) -> dt.datetime:
        return self.when


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(dt.datetime(2026, 2, 12, 14, 3, tzinfo=dt.UTC))
