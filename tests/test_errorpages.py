"""Django's own error answers: the styled pages for people, JSON for every /api/ and /mcp
path and for clients that ask for JSON (handler400/403/404/500, ApiErrorMiddleware)."""

from __future__ import annotations

import pytest

JSON = {"HTTP_ACCEPT": "application/json"}


@pytest.fixture
def boom_urls(settings) -> None:
    settings.ROOT_URLCONF = "tests.api.boom_urls"


def _is_json_error(resp, status: int, code: str) -> dict:
    assert resp.status_code == status
    assert resp["Content-Type"].startswith("application/json")
    body = resp.json()
    assert body["error"]["code"] == code and body["error"]["message"]
    return body


@pytest.mark.parametrize("path", ["/no/such/page", "/s/"])
def test_an_unknown_url_gets_the_styled_404_page(client_as, workspace, path):
    resp = client_as("viewer").get(path)
    assert resp.status_code == 404
    assert resp["Content-Type"].startswith("text/html")
    html = resp.content.decode()
    assert '<header class="topbar">' in html and "<h1>Not found</h1>" in html
    assert "Accept" in resp["Vary"]


def test_an_anonymous_404_is_styled_too(client, db):
    resp = client.get("/no/such/page")
    assert resp.status_code == 404 and "<h1>Not found</h1>" in resp.content.decode()
    assert "Sign in" in resp.content.decode()


def test_a_json_client_gets_a_json_404(client_as, workspace):
    body = _is_json_error(client_as("viewer").get("/no/such/page", **JSON), 404, "not_found")
    assert "<" not in body["error"]["message"]


@pytest.mark.parametrize("path", [
    "/api/v1/tools%0A",  # a newline escapes the catch-all's `.*`
    "/api/v1/files%0A/x",
    "/api/nothing",
    "/api/",
    "/mcp/anything",
])
def test_every_api_404_is_json(client, db, path):
    _is_json_error(client.get(path), 404, "not_found")


def test_djangos_own_405_under_api_is_json_and_keeps_allow(client, db, boom_urls):
    resp = client.get("/api/v1/post-only")
    _is_json_error(resp, 405, "method_not_allowed")
    assert resp["Allow"] == "POST"
    assert "GET" in resp.json()["error"]["message"]


def test_a_bad_host_is_a_json_400_under_api_and_a_page_for_people(client, db):
    api = client.get("/api/v1/tools", HTTP_HOST="evil.example")
    _is_json_error(api, 400, "invalid_arguments")
    page = client.get("/", HTTP_HOST="evil.example")
    assert page.status_code == 400 and page["Content-Type"].startswith("text/html")
    assert "<h1>Bad request</h1>" in page.content.decode()


def test_a_role_denial_is_the_styled_403_page_or_json(client_as, workspace):
    viewer = client_as("viewer")
    page = viewer.get("/settings/tokens/")
    assert page.status_code == 403
    assert "<h1>Permission denied</h1>" in page.content.decode()
    assert "this needs the admin role" in page.content.decode().lower()
    body = _is_json_error(viewer.get("/settings/tokens/", **JSON), 403, "forbidden")
    assert body["error"]["message"] == "this needs the admin role"


def test_a_500_for_a_json_client_is_json(client, db, boom_urls):
    client.raise_request_exception = False
    _is_json_error(client.get("/boom", **JSON), 500, "internal_error")
    page = client.get("/boom")
    assert page.status_code == 500 and "Something went wrong" in page.content.decode()
