"""Real Chromium (Debian's package) driven by Playwright against a live Django server."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

# Playwright's sync API runs an event loop in this thread; Django's ORM refuses to be
# used from a thread with a running loop unless told this is fine (tests only).
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
SCREENSHOTS = Path(__file__).parent / "screenshots"
CHROMIUM_ARGS = [
    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-dev-shm-usage",
]


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    if not Path(CHROMIUM).exists():
        pytest.fail(f"Debian's chromium is not installed at {CHROMIUM}: run the test command "
                    "from README (it installs it with apt)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield b
        b.close()


@pytest.fixture
def live_workspace(workspace, live_server):
    """A live server on a fresh workspace; returns (base_url, store)."""
    return live_server.url, workspace


@pytest.fixture
def page_for(browser, live_server, make_user) -> Iterator[object]:
    """Factory: page_for("curator") -> a new browser context signed in with that role."""
    from tests.conftest import PASSWORD

    contexts = []

    def make(role: str = "curator", name: str | None = None):
        user = make_user(role, name)
        ctx = browser.new_context(viewport={"width": 1360, "height": 900})
        contexts.append(ctx)
        page = ctx.new_page()
        page.goto(f"{live_server.url}/accounts/login/")
        page.fill("input[name=username]", user.username)
        page.fill("input[name=password]", PASSWORD)
        page.click("button[type=submit], input[type=submit]")
        page.wait_for_load_state("networkidle")
        return page

    yield make
    for ctx in contexts:
        ctx.close()


def screenshot(page, name: str) -> Path:
    """Save a screenshot of a main page (the README shows the best one)."""
    SCREENSHOTS.mkdir(exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=False)
    return path


def watch_console(page) -> list[str]:
    """Collect console errors and CSP violations: a page must not break its own policy.

    The browser asks for /favicon.ico on its own; there is none, so that error is ignored.
    """
    errors: list[str] = []

    def on_console(m) -> None:
        if m.type == "error" and "favicon" not in (m.location or {}).get("url", ""):
            errors.append(m.text)

    page.on("console", on_console)
    page.on("pageerror", lambda e: errors.append(str(e)))
    return errors


def htmx_idle(page) -> None:
    """Wait until htmx has swapped, settled and processed new content.

    Playwright can type into a freshly swapped element before htmx has attached its
    triggers (settling takes ~20 ms); a person cannot, so tests wait here.
    """
    page.wait_for_function(
        "() => !document.querySelector('.htmx-request, .htmx-swapping, .htmx-settling')")
    page.wait_for_timeout(60)
