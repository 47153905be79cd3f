"""Django under uvicorn with one thread hop per request, as a threaded WSGI server runs it.

memoryui's views and middleware are all synchronous. Django's own ASGI handler runs them
from the event loop by hopping: each request gets a fresh thread-sensitive executor (a
thread made and joined per request), every sync middleware runs there, control returns to
the loop between the middleware and the view, and out again. Profiled under agent traffic
(issue 15), that was 20 ms of a 36 ms `remember` at half load, with the tool call itself
16 ms. This handler keeps Django's request, middleware chain, URL resolution, signals and
error handling (it is Django's `ASGIHandler` with the synchronous chain) and runs the whole
request in one thread of a fixed pool, then sends the reply from the loop.

Bodies are read before the thread is taken and kept up to `MEMORYUI_MAX_BODY` bytes: a
longer one (a chunked body has no Content-Length for the middleware to judge) is read to
its end and answered 413 without being stored.
"""

from __future__ import annotations

import asyncio
import contextvars
import io
import logging
from concurrent.futures import ThreadPoolExecutor

from django.conf import settings
from django.core import signals
from django.core.handlers.asgi import ASGIHandler, get_script_prefix
from django.core.handlers.base import BaseHandler
from django.http import HttpResponseBase
from django.http.response import HttpResponse
from django.urls import set_script_prefix
from starlette.types import Receive, Scope, Send

from memoryui.middleware import json_error, too_large
from memoryui.store.threadnames import name_os_thread

log = logging.getLogger("django.request")


class ThreadedHandler(ASGIHandler):
    """Django's ASGI handler with the synchronous middleware chain run in a thread pool.

    `/api/` requests go through a second chain, built by Django from `API_MIDDLEWARE`
    (the browser-only middleware left out), so its view, exception and template hooks
    are all Django's own.
    """

    def __init__(self, threads: int) -> None:
        BaseHandler.__init__(self)
        self.load_middleware(is_async=False)
        self.api = api_chain()
        self.pool = ThreadPoolExecutor(threads, thread_name_prefix="memoryui-request",
                                       initializer=name_os_thread)

    @property
    def max_body(self) -> int:
        """Read when used, as the body-size middleware reads it."""
        return settings.MEMORYUI_MAX_BODY

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            raise ValueError(f"Django serves only HTTP connections, not {scope['type']}")
        body = await self._read(receive)
        if body is None:
            return  # the client went away before its request was whole
        loop = asyncio.get_running_loop()
        context = contextvars.copy_context()
        response = await loop.run_in_executor(self.pool, context.run, self.respond, scope, body)
        try:
            await self.send_response(response, send)
        except asyncio.CancelledError:
            pass  # the client went away while the reply was sent
        finally:
            if response.streaming and response.is_async:
                await loop.run_in_executor(self.pool, response.close)

    async def _read(self, receive: Receive) -> bytes | bytearray | None:
        """The body, cut at one byte over the limit (the rest is read and dropped)."""
        body, limit = bytearray(), self.max_body
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return None
            if len(body) <= limit:
                body += message.get("body", b"")[: limit + 1 - len(body)]
            if not message.get("more_body", False):
                return body

    def respond(self, scope: Scope, body: bytes | bytearray) -> HttpResponseBase:
        """Everything Django does for a request, in this pool thread: the database
        connection it opens is closed by `request_finished` in the same thread."""
        set_script_prefix(get_script_prefix(scope))
        signals.request_started.send(sender=self.__class__, scope=scope)
        limit = self.max_body
        try:
            if len(body) > limit:
                request, response = self.create_request(scope, io.BytesIO())
                if request is not None:
                    response = too_large(request, limit)
            else:
                request, response = self.create_request(scope, io.BytesIO(body))
                if request is not None:
                    chain = self.api if request.path.startswith("/api/") else self
                    response = chain.get_response(request)
            if response.streaming and not response.is_async:
                response = _whole(response)
        except Exception as exc:  # noqa: BLE001 - the reply must still go out
            log.error("%s %s failed outside the middleware", scope.get("method"),
                      scope.get("path"), exc_info=True)
            if str(scope.get("path", "")).startswith(("/api/", "/mcp")):
                response = json_error(exc)  # API clients parse JSON, whatever failed
            else:
                response = HttpResponse(f"internal server error: {type(exc).__name__}",
                                        status=500, content_type="text/plain; charset=utf-8")
        if not (response.streaming and response.is_async):
            response.close()  # sends request_finished here, in the thread that asked
        return response


def api_chain() -> BaseHandler:
    """A handler whose middleware chain is `API_MIDDLEWARE` (Django reads the list from
    settings while it builds a chain, and only then)."""
    handler = BaseHandler()
    full = settings.MIDDLEWARE
    settings.MIDDLEWARE = settings.API_MIDDLEWARE
    try:
        handler.load_middleware(is_async=False)
    finally:
        settings.MIDDLEWARE = full
    return handler


def _whole(response: HttpResponseBase) -> HttpResponse:
    """A synchronous streaming reply (a static file) read here, so the loop never blocks
    on it and the file is closed in this thread."""
    content = b"".join(response.streaming_content)  # type: ignore[attr-defined]
    whole = HttpResponse(content, status=response.status_code)
    for name, value in response.items():
        whole[name] = value
    whole.cookies = response.cookies
    whole._resource_closers = response._resource_closers  # closed with the copy
    response._resource_closers = []
    return whole
