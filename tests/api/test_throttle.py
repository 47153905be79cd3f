"""Bearer tokens that fail are throttled per address: 429 JSON with Retry-After on /api,
/mcp and the Atom feed, the right token included, while other addresses go on."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

import pytest
from asgiref.sync import async_to_sync

BAD = "mui_not-a-real-token-at-all-0000000000000000"


@pytest.fixture(autouse=True)
def _three_failures(settings) -> None:
    settings.AXES_FAILURE_LIMIT = 3
    settings.MEMORYUI_TOKEN_CACHE = 0  # every request verifies its token


def _tools(client, token: str, address: str = "10.1.0.1"):
    return client.get("/api/v1/tools", HTTP_AUTHORIZATION=f"Bearer {token}",
                      REMOTE_ADDR=address)


def test_an_address_failing_with_tokens_gets_429_with_retry_after(client, workspace,
                                                                  make_token):
    good = make_token("ops-bot")
    for _ in range(2):
        assert _tools(client, BAD).status_code == 401
    refused = _tools(client, BAD)  # the third failure
    assert refused.status_code == 429
    assert refused["Content-Type"] == "application/json"
    body = refused.json()["error"]
    assert body["code"] == "too_many_requests" and "try again in" in body["message"]
    assert 800 < int(refused["Retry-After"]) <= 900 and body["retry_after"] > 800
    # the right token from that address is refused too: guessing gains nothing
    assert _tools(client, good).status_code == 429
    # another address is not held back
    assert _tools(client, good, address="10.1.0.2").status_code == 200


def test_the_dagu_endpoints_and_the_feed_are_throttled_too(client, workspace, make_token):
    for _ in range(3):
        _tools(client, BAD, address="10.1.0.5")
    dagu = client.get("/api/v1/settings/agent/memory", HTTP_AUTHORIZATION=f"Bearer {BAD}",
                      REMOTE_ADDR="10.1.0.5")
    assert dagu.status_code == 429 and dagu.json()["code"] == "too_many_requests"
    assert int(dagu["Retry-After"]) > 0
    feed = client.get(f"/activity.atom?token={make_token(admin=True)}", REMOTE_ADDR="10.1.0.5")
    assert feed.status_code == 429 and int(feed["Retry-After"]) > 0


def test_the_failed_tokens_are_not_kept(client, db, workspace):
    from axes.models import AccessAttempt

    client.get(f"/activity.atom?token={BAD}", REMOTE_ADDR="10.1.0.6")
    [attempt] = AccessAttempt.objects.filter(ip_address="10.1.0.6")
    assert BAD not in attempt.get_data and attempt.username is None


def _mcp(token: str, address: str) -> tuple[int, dict, dict]:
    """One request to the MCP endpoint, in process: authentication comes before the SDK."""
    from memoryui.api.mcp import MCPEndpoint

    sent: list[dict] = []
    scope = {"type": "http", "method": "POST", "path": "/mcp", "raw_path": b"/mcp",
             "query_string": b"", "root_path": "", "scheme": "http", "http_version": "1.1",
             "server": ("127.0.0.1", 8000), "client": (address, 5555),
             "headers": [(b"host", b"127.0.0.1"), (b"authorization", f"Bearer {token}".encode()),
                         (b"content-type", b"application/json")]}

    async def receive() -> dict:
        return {"type": "http.request", "body": b"{}", "more_body": False}

    async def send(message: dict) -> None:
        sent.append(message)

    # In a thread of its own: a browser test before this one in the same process may have left
    # Playwright's event loop running in this thread.
    with ThreadPoolExecutor(1) as pool:
        pool.submit(async_to_sync(MCPEndpoint()), scope, receive, send).result()
    start, body = sent[0], sent[1]
    return start["status"], dict(start["headers"]), json.loads(body["body"])


@pytest.mark.django_db(transaction=True)  # the endpoint closes stale connections itself
def test_mcp_is_throttled_per_address(workspace, make_token):
    good = make_token("ops-bot")
    for _ in range(2):
        assert _mcp(BAD, "10.1.0.7")[0] == 401
    assert _mcp(BAD, "10.1.0.7")[0] == 429
    status, headers, body = _mcp(good, "10.1.0.7")
    assert status == 429 and body["error"]["code"] == "too_many_requests"
    assert int(headers[b"retry-after"]) > 0
    assert _mcp(good, "10.1.0.8")[0] != 429
