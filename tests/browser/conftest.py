"""Real Chromium (Debian's package) driven by Playwright against a live Django server."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import expect

# CI is a loaded 2-core machine running Chromium, the live server and other tests at once:
# Playwright's defaults (5 s for an `expect`) fail there although nothing is wrong. These
# only bound a hang; every wait returns as soon as its condition holds.
EXPECT_TIMEOUT_MS = 30_000
ACTION_TIMEOUT_MS = 60_000
NAVIGATION_TIMEOUT_MS = 90_000
expect.set_options(timeout=EXPECT_TIMEOUT_MS)

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


@pytest.fixture
def live_workspace(workspace, live_server):
    """A live server on a fresh workspace; returns (base_url, store)."""
    return live_server.url, workspace


def new_context(browser, **options):
    """A browser context with CI-proof default timeouts (use instead of browser.new_context)."""
    ctx = browser.new_context(**{"viewport": {"width": 1360, "height": 900}, **options})
    ctx.set_default_timeout(ACTION_TIMEOUT_MS)
    ctx.set_default_navigation_timeout(NAVIGATION_TIMEOUT_MS)
    return ctx


def sign_in(page, base_url: str, username: str) -> None:
    """Sign in through the login form and wait until the browser has left the login page."""
    from tests.conftest import PASSWORD

    page.goto(f"{base_url}/accounts/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit], input[type=submit]")
    page.wait_for_url(lambda url: "/accounts/login/" not in url)
    page.wait_for_load_state()


@pytest.fixture
def page_for(browser, live_server, make_user) -> Iterator[object]:
    """Factory: page_for("curator") -> a new browser context signed in with that role."""
    contexts = []

    def make(role: str = "curator", name: str | None = None):
        user = make_user(role, name)
        ctx = new_context(browser)
        contexts.append(ctx)
        page = ctx.new_page()
        sign_in(page, live_server.url, user.username)
        return page

    yield make
    for ctx in contexts:
        ctx.close()


def screenshot(page, name: str) -> Path:
    """Save a screenshot of a main page (the README shows the best one).

    caret="initial": Playwright's caret hiding leaves `style=""` on form fields, which a
    later htmx swap or history restore copies back, and the strict CSP reports."""
    SCREENSHOTS.mkdir(exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=False, caret="initial")
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
    triggers (a person cannot). htmx marks each phase with a class: `htmx-request` while
    the request runs, `htmx-swapping`/`htmx-settling` on the target, and `htmx-added` on
    new content until htmx has processed it (attached its triggers, then fired
    `htmx:load`); when none is left in the page, everything swapped in is live. After a
    full page load, htmx processes the page in its DOMContentLoaded handler, which has run
    once the document is complete (window.htmx is defined before it runs).
    """
    page.wait_for_function(
        "() => window.htmx !== undefined && document.readyState === 'complete' && "
        "!document.querySelector('.htmx-request, .htmx-swapping, .htmx-settling, "
        ".htmx-added')")
