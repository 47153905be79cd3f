"""The threaded ASGI handler `serve` runs Django with: every request answers exactly as under
Django's own ASGI handler (same statuses, bodies and headers through the same middleware),
a body over the limit is a 413 that never reaches a view even without Content-Length, and
the request's database work begins and ends in the thread that ran it."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path

import pytest
from django.core import signals
from django.core.handlers.asgi import ASGIHandler

from memoryui.handler import ThreadedHandler

REMEMBER = "/api/v1/agents/ops-bot/tools/remember"
VARYING = {b"date", b"set-cookie"}  # differ between any two replies
LOOP_THREADS: list[int] = []  # the threads `call` ran an event loop in


def call(app, method: str, path: str, body: bytes | list[bytes] = b"", *,
         headers: list[tuple[bytes, bytes]] = (), query: bytes = b"",
         disconnect: bool = False) -> tuple[int | None, dict[bytes, bytes], bytes]:
    """One request through an ASGI app in this process: (status, headers, body)."""
    parts = body if isinstance(body, list) else [body]
    messages = [{"type": "http.request", "body": p, "more_body": i < len(parts) - 1}
                for i, p in enumerate(parts)]
    if disconnect:
        messages = messages[:1] + [{"type": "http.disconnect"}]
        messages[0]["more_body"] = True
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
             "method": method, "scheme": "http", "path": path, "raw_path": path.encode(),
             "root_path": "", "query_string": query,
             "headers": [(b"host", b"127.0.0.1:8000"), *headers],
             "client": ("127.0.0.1", 50000), "server": ("127.0.0.1", 8000)}
    sent: list[dict] = []

    async def receive() -> dict:
        if messages:
            return messages.pop(0)
        await asyncio.Event().wait()  # a client that stays, as a real one waits for its reply
        raise AssertionError("unreachable")

    async def send(message: dict) -> None:
        sent.append(message)

    # In a thread of its own: a browser test before this one in the same pytest worker can
    # leave an event loop running in this thread (Playwright's sync API).
    failed: list[BaseException] = []

    def run() -> None:
        LOOP_THREADS.append(threading.get_ident())
        try:
            asyncio.run(app(scope, receive, send))
        except BaseException as exc:  # noqa: BLE001 - raised again below
            failed.append(exc)

    runner = threading.Thread(target=run)
    runner.start()
    runner.join()
    if failed:
        raise failed[0]
    start = next((m for m in sent if m["type"] == "http.response.start"), None)
    if start is None:
        return None, {}, b""
    out = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return start["status"], {k.lower(): v for k, v in start["headers"]}, out


@pytest.fixture
def apps(transactional_db, workspace):
    """Both handlers over the same settings, workspace and database."""
    return ThreadedHandler(threads=4), ASGIHandler()


def auth(token: str) -> list[tuple[bytes, bytes]]:
    return [(b"authorization", f"Bearer {token}".encode()),
            (b"content-type", b"application/json")]


def test_api_replies_match_djangos_own_handler(apps, make_token):
    threaded, django_asgi = apps
    tok = make_token("ops-bot")
    requests = [
        ("GET", "/healthz", b"", []),
        ("POST", REMEMBER, b'{"content": "same either way"}', auth(tok)),
        ("POST", "/api/v1/agents/ops-bot/tools/recall", b"{}", auth(tok)),
        ("POST", REMEMBER, b'{"content": 1}', auth(tok)),
        ("POST", REMEMBER, b"{}", []),
        ("GET", REMEMBER, b"", auth(tok)),
        ("GET", "/api/v1/nowhere", b"", auth(tok)),
        ("POST", "/api/v1/agents/other-bot/tools/remember", b"{}", auth(tok)),
    ]
    for method, path, body, headers in requests:
        a = call(threaded, method, path, body, headers=headers)
        b = call(django_asgi, method, path, body, headers=headers)
        assert a[0] == b[0], (method, path, a, b)
        strip = lambda h: {k: v for k, v in h.items() if k not in VARYING}  # noqa: E731
        assert strip(a[1]) == strip(b[1]), (method, path)
        if b"remember" in path.encode() and a[0] == 200:
            assert json.loads(a[2])["result"] == json.loads(b[2])["result"]
        elif b"recall" not in path.encode():
            assert a[2] == b[2], (method, path)
    assert b"content-security-policy" in a[1] and a[1][b"x-frame-options"] == b"DENY"


@pytest.mark.filterwarnings("ignore:StreamingHttpResponse must consume")  # Django's, on static
def test_pages_static_files_and_bad_hosts_match_djangos_own_handler(apps):
    threaded, django_asgi = apps
    for method, path, headers in [
        ("GET", "/login/", []),
        ("GET", "/static/memoryui/favicon.svg", []),
        ("GET", "/no-such-page", []),
        ("GET", "/healthz", [(b"host", b"evil.example")]),
    ]:
        a = call(threaded, method, path, headers=headers)
        b = call(django_asgi, method, path, headers=headers)
        assert a[0] == b[0], (path, a[0], b[0])
        assert set(a[1]) == set(b[1]), path
    status, headers, body = call(threaded, "GET", "/static/memoryui/favicon.svg")
    assert status == 200 and body.startswith(b"<svg") and headers[b"content-length"] == \
        str(len(body)).encode()


def test_a_chunked_body_over_the_limit_is_413_and_reaches_no_view(apps, make_token, settings,
                                                                   workspace):
    threaded, _ = apps
    settings.MEMORYUI_MAX_BODY = 1000
    tok = make_token("ops-bot")
    big = [b'{"content": "', *[b"q" * 400] * 5, b'"}']  # no Content-Length, 2 kB
    status, headers, body = call(threaded, "POST", REMEMBER, big, headers=auth(tok))
    assert status == 413
    assert json.loads(body)["error"]["code"] == "payload_too_large"
    assert not (workspace.root / "agents" / "ops-bot").exists()
    status, _, body = call(threaded, "POST", "/login/", [b"a=" + b"x" * 800, b"x" * 800])
    assert status == 413 and b"larger than 1000 bytes" in body
    # Exactly the limit is not refused for size.
    exact = b'{"content": "' + b"k" * (1000 - 15) + b'"}'
    assert len(exact) == 1000
    status, _, body = call(threaded, "POST", REMEMBER, [exact[:500], exact[500:]],
                           headers=auth(tok))
    assert status == 200, body


def test_a_client_gone_before_its_body_gets_no_reply_and_no_write(apps, make_token, workspace):
    threaded, _ = apps
    tok = make_token("ops-bot")
    status, _, _ = call(threaded, "POST", REMEMBER, [b'{"content": "half', b'"}'],
                        headers=auth(tok), disconnect=True)
    assert status is None
    assert not (workspace.root / "agents" / "ops-bot").exists()


def test_agent_calls_skip_the_browser_middleware_and_answer_the_same(apps, make_token):
    """/api/ goes through Django's chain of API_MIDDLEWARE (no CSRF check, no session), and
    a signed-in browser's cookies change nothing there: the token decides."""
    from django.middleware.csrf import CsrfViewMiddleware

    threaded, django_own = apps
    assert any(isinstance(hook.__self__, CsrfViewMiddleware)
               for hook in threaded._view_middleware)
    assert not any(isinstance(hook.__self__, CsrfViewMiddleware)
                   for hook in threaded.api._view_middleware)
    tok = make_token("ops-bot")
    cookies = [(b"cookie", b"sessionid=not-a-session; csrftoken=x")]
    replies = [call(app, "POST", REMEMBER, b'{"content": "with cookies"}',
                    headers=auth(tok) + cookies) for app in (threaded, django_own)]
    assert replies[0][0] == replies[1][0] == 200
    assert b"set-cookie" not in replies[0][1]
    assert json.loads(replies[0][2])["result"] == json.loads(replies[1][2])["result"]


def test_a_request_starts_and_finishes_in_the_thread_that_ran_it(apps):
    """request_finished closes the database connection the view opened: in its thread."""
    threaded, _ = apps
    seen: list[tuple[str, int]] = []

    def started(**_: object) -> None:
        seen.append(("started", threading.get_ident()))

    def finished(**_: object) -> None:
        seen.append(("finished", threading.get_ident()))

    signals.request_started.connect(started)
    signals.request_finished.connect(finished)
    try:
        assert call(threaded, "GET", "/healthz")[0] == 200
    finally:
        signals.request_started.disconnect(started)
        signals.request_finished.disconnect(finished)
    assert [s for s, _ in seen] == ["started", "finished"]
    assert seen[0][1] == seen[1][1]
    assert seen[0][1] not in (threading.get_ident(), LOOP_THREADS[-1])


def test_an_unexpected_error_is_the_json_500_with_its_traceback_logged(apps, settings,
                                                                         caplog):
    settings.ROOT_URLCONF = "tests.api.boom_urls"
    threaded = ThreadedHandler(threads=2)
    status, _, body = call(threaded, "GET", "/api/v1/boom")
    assert status == 500
    assert json.loads(body)["error"]["code"] == "internal_error"
    logged = [r for r in caplog.records if r.name == "django.request" and r.exc_info]
    assert logged and "boom: an unexpected failure" in str(logged[0].exc_info[1])


def test_request_threads_are_named_in_the_os() -> None:
    """`top -H` shows a worker's request threads as request_N (see store/threadnames.py)."""
    pool = ThreadedHandler(2).pool
    try:
        names = {pool.submit(lambda: Path(f"/proc/self/task/{threading.get_native_id()}/comm")
                             .read_text().strip()).result() for _ in range(4)}
    finally:
        pool.shutdown()
    assert names and names <= {"request_0", "request_1"}
