"""Django's ASGI handler for a synchronous project: each request whole in one pool thread.

Every view and middleware of memoryui is synchronous. Django's own `ASGIHandler` runs such
a chain from the event loop through `sync_to_async`, hopping between the loop and a thread
made for the request at each step; a WSGI adapter (a2wsgi) keeps one thread but crosses
back to the loop for every piece of the body and of the reply. Either costs about twice
the CPU of the request itself. `PooledHandler` is Django's `ASGIHandler` with the
synchronous chain (`load_middleware(is_async=False)`): the loop reads the body, one thread
of a fixed pool runs the request, the loop sends the reply. The pool's threads keep their
database connections (`CONN_MAX_AGE`), as a threaded WSGI server's do.

A body is kept up to `MEMORYUI_MAX_BODY` bytes; a longer one (a chunked body has no
Content-Length for the middleware to judge) is read to its end and answered 413.
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
from django.http import HttpResponse, HttpResponseBase
from django.urls import set_script_prefix
from starlette.types import Receive, Scope, Send

from memoryui.middleware import too_large
from memoryui.store.threadnames import name_os_thread

log = logging.getLogger("django.request")


class PooledHandler(ASGIHandler):
    """`ASGIHandler` whose synchronous middleware chain runs in one pool thread a request."""

    def __init__(self, threads: int) -> None:
        BaseHandler.__init__(self)
        self.load_middleware(is_async=False)
        self.pool = ThreadPoolExecutor(threads, thread_name_prefix="memoryui-request",
                                       initializer=name_os_thread)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            raise ValueError(f"Django serves HTTP connections, not {scope['type']}")
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

    async def _read(self, receive: Receive) -> bytearray | None:
        """The body, cut at one byte over the limit (the rest is read and dropped)."""
        body, limit = bytearray(), settings.MEMORYUI_MAX_BODY
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return None
            if len(body) <= limit:
                body += message.get("body", b"")[: limit + 1 - len(body)]
            if not message.get("more_body", False):
                return body

    def respond(self, scope: Scope, body: bytearray) -> HttpResponseBase:
        """Everything Django does for a request, in this pool thread; `response.close()`
        sends `request_finished` here too, so the database connection is looked after by
        the thread that holds it."""
        set_script_prefix(get_script_prefix(scope))
        signals.request_started.send(sender=self.__class__, scope=scope)
        limit = settings.MEMORYUI_MAX_BODY
        response: HttpResponseBase | None
        try:
            request, response = self.create_request(scope, io.BytesIO(body[: limit]))
            if request is not None:
                response = (too_large(request, limit) if len(body) > limit
                            else self.get_response(request))
            assert response is not None
            if response.streaming:
                response = _whole(response)
        except Exception as exc:  # noqa: BLE001 - a reply must still go out
            log.error("%s %s failed outside the middleware", scope.get("method"),
                      scope.get("path"), exc_info=True)
            response = HttpResponse(f"internal server error: {type(exc).__name__}",
                                    status=500, content_type="text/plain; charset=utf-8")
        response.close()
        return response


def _whole(response: HttpResponseBase) -> HttpResponse:
    """A streaming reply (a static file) read in the request's thread, so the loop never
    blocks on a file and the file is closed where it was opened."""
    content = b"".join(response.streaming_content)
    whole = HttpResponse(content, status=response.status_code)
    for name, value in response.items():
        whole[name] = value
    whole.cookies = response.cookies
    whole._resource_closers = response._resource_closers  # closed with the copy
    response._resource_closers = []
    return whole
