"""The sign-in throttle in a real browser: the styled sign-in page says when to try again."""

from __future__ import annotations

from tests.browser.conftest import new_context
from tests.conftest import PASSWORD


def test_a_locked_out_name_sees_when_to_try_again(browser, live_server, make_user, settings):
    settings.AXES_FAILURE_LIMIT = 3
    make_user("viewer", "vera")
    ctx = new_context(browser)
    page = ctx.new_page()
    try:
        page.goto(f"{live_server.url}/accounts/login/")
        for password in ("wrong-1", "wrong-2", "wrong-3", PASSWORD):
            page.fill("input[name=username]", "vera")
            page.fill("input[name=password]", password)
            with page.expect_navigation():
                page.click("button[type=submit]")
        alert = page.locator(".login [role=alert]")
        assert "Too many failed sign-ins" in alert.inner_text()
        assert "Try again in 15 minutes" in alert.inner_text()
        # still the sign-in page, the form there for when the time has passed
        assert page.locator("h1").inner_text() == "Sign in"
        assert page.locator("input[name=password]").is_visible()
        assert "/accounts/login/" in page.url
        assert page.goto(f"{live_server.url}/").url.startswith(
            f"{live_server.url}/accounts/login/")  # not signed in
    finally:
        ctx.close()
