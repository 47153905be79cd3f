"""Django under any ASGI server: each request whole in one pool thread (memoryui/pooled.py).

Driven through the ASGI interface as a server drives it, with Django's test database."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.conf import settings
from django.contrib.staticfiles import finders

from memoryui.pooled import PooledHandler

pytestmark = pytest.mark.django_db(transaction=True)


def call(handler: PooledHandler, method: str, path: str, chunks: Iterable[bytes] = (b"",),
         headers: list[tuple[bytes, bytes]] | None = None,
         disconnect: bool = False) -> list[dict]:
    """Run one request through the handler; the messages it sent back."""
    parts = list(chunks)
    incoming = [{"type": "http.request", "body": part, "more_body": i < len(parts) - 1}
                for i, part in enumerate(parts)]
    if disconnect:
        incoming = incoming[:1] + [{"type": "http.disconnect"}]
        incoming[0]["more_body"] = True
    sent: list[dict] = []
    scope = {"type": "http", "method": method, "path": path, "raw_path": path.encode(),
             "query_string": b"", "root_path": "", "scheme": "http",
             "server": ("127.0.0.1", 8000), "client": ("127.0.0.1", 40000),
             "headers": [(b"host", b"127.0.0.1"), *(headers or [])],
             "http_version": "1.1", "asgi": {"version": "3.0"}}

    async def receive() -> dict:
        return incoming.pop(0)

    async def send(message: dict) -> None:
        sent.append(message)

    # A thread of its own: an earlier test in this process (Playwright's sync API) may have
    # left an event loop running in this one, and a server runs its loop where it likes.
    with ThreadPoolExecutor(1) as runner:
        runner.submit(asyncio.run, handler(scope, receive, send)).result()
    return sent


def reply(sent: list[dict]) -> tuple[int, dict[bytes, bytes], bytes]:
    start = sent[0]
    body = b"".join(m.get("body", b"") for m in sent[1:])
    return start["status"], {k.lower(): v for k, v in start["headers"]}, body


@pytest.fixture
def handler() -> PooledHandler:
    pooled = PooledHandler(2)
    yield pooled
    pooled.pool.shutdown()


def test_a_request_runs_whole_in_one_thread_of_the_pool(handler: PooledHandler,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[str] = []
    real = handler.get_response

    def spy(request):  # type: ignore[no-untyped-def]
        seen.append(threading.current_thread().name)
        return real(request)

    monkeypatch.setattr(handler, "get_response", spy)
    status, headers, body = reply(call(handler, "GET", "/healthz"))
    assert status == 200 and json.loads(body)["ok"] is True
    assert seen and seen[0].startswith("memoryui-request")


def test_a_body_in_pieces_reaches_the_view_whole(handler: PooledHandler) -> None:
    """A chunked upload comes as several ASGI messages without Content-Length."""
    status, _, body = reply(call(handler, "POST", "/api/v1/agents/alpha/tools/remember",
                                 [b'{"content": ', b'"two pieces"}'],
                                 [(b"content-type", b"application/json")]))
    # No token: the API refuses with its own JSON error, having parsed nothing wrongly.
    assert status == 401 and json.loads(body)["error"]["code"]


def test_a_body_over_the_limit_is_answered_413_without_being_kept(
        handler: PooledHandler, settings: object) -> None:
    settings.MEMORYUI_MAX_BODY = 64  # type: ignore[attr-defined]
    status, _, body = reply(call(handler, "POST", "/api/v1/agents/alpha/tools/remember",
                                 [b"x" * 50, b"y" * 50]))
    assert status == 413 and b"larger than 64 bytes" in body


def test_a_client_gone_before_its_body_is_whole_gets_no_reply(handler: PooledHandler) -> None:
    assert call(handler, "POST", "/api/v1/agents/alpha/tools/remember", [b"{"],
                disconnect=True) == []


def test_a_static_file_is_sent_whole_with_its_length(handler: PooledHandler) -> None:
    """WhiteNoise answers with a streaming file; the pool thread reads it, so the event loop
    never waits on a disk read."""
    name = "memoryui/app.css"
    assert finders.find(name)
    status, headers, body = reply(call(handler, "GET", f"{settings.STATIC_URL}{name}"))
    assert status == 200 and body
    assert int(headers[b"content-length"]) == len(body)
