"""ASGI entry point: `/mcp` goes to the MCP endpoint, everything else to Django.

Django is served through its WSGI handler, each request whole in one thread of a fixed
pool (a2wsgi's `WSGIMiddleware`, MEMORYUI_THREADS threads): Django's ASGI handler runs a
synchronous project by hopping between the event loop and a thread made for each request,
which cost twice the CPU per request (a /healthz: 5.9 ms against 3.2 ms on the 2-core test
machine), and the pool's threads keep their database connections. A request whose body
comes chunked (no Content-Length) goes to Django's ASGI handler, since a WSGI request reads
only as many bytes as Content-Length says. Neither serves `lifespan`, so this router owns
those events and runs the MCP session manager's task group for the life of each worker
process. Any ASGI server runs `memoryui.asgi:application` (docs/deployment.md); `python
manage.py serve` runs it under uvicorn.
"""

import gc
import os

import django
from starlette.types import Receive, Scope, Send

from memoryui.startup import configured

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryui.settings")
configured(lambda: django.setup(set_prefix=False))  # a settings typo: one line, exit 2

from a2wsgi import WSGIMiddleware  # noqa: E402 - after setup, like the rest
from django.conf import settings  # noqa: E402
from django.core.handlers.asgi import ASGIHandler  # noqa: E402
from django.core.wsgi import get_wsgi_application  # noqa: E402
from django.urls import get_resolver  # noqa: E402

from memoryui.api.mcp import MCPEndpoint  # noqa: E402
from memoryui.workspace import start_sync_thread  # noqa: E402

django_app = WSGIMiddleware(get_wsgi_application(), workers=settings.MEMORYUI_THREADS)
django_chunked = ASGIHandler()

MCP_PATHS = ("/mcp", "/mcp/")
mcp_endpoint = MCPEndpoint()


def warm() -> None:
    """Load what a worker's first request would load: the URL configuration, which imports
    every view and what the views import (Markdown, the sanitizer, their regexes), about
    0.3 s of CPU. Lazily, the first request of each worker paid it, and with several
    workers each one's first request came whenever the kernel first handed it a
    connection (in the API bench, in the middle of a measured round)."""
    get_resolver().url_patterns  # noqa: B018 - the property imports the URL modules


async def lifespan(scope: Scope, receive: Receive, send: Send) -> None:
    """Enter the MCP session manager on startup and leave it on shutdown."""
    message = await receive()
    if message["type"] != "lifespan.startup":
        return
    started = False
    try:
        async with mcp_endpoint.run():
            warm()
            start_sync_thread(standby=True)  # rounds here only while no committer runs
            # What is loaded by now lives as long as the worker: frozen out of the
            # collector's view, a full collection no longer walks it (100+ ms pauses that
            # made an agent's call wait, seen as a remember p99 of 200 ms).
            gc.collect()
            gc.freeze()
            await send({"type": "lifespan.startup.complete"})
            started = True
            while (await receive())["type"] != "lifespan.shutdown":
                pass
    except Exception as exc:
        kind = "shutdown" if started else "startup"
        await send({"type": f"lifespan.{kind}.failed", "message": repr(exc)})
        return
    await send({"type": "lifespan.shutdown.complete"})


async def application(scope: Scope, receive: Receive, send: Send) -> None:
    if scope["type"] == "lifespan":
        await lifespan(scope, receive, send)
    elif scope["type"] == "http" and scope["path"] in MCP_PATHS:
        await mcp_endpoint(scope, receive, send)
    elif scope["type"] == "http" and _chunked(scope):
        await django_chunked(scope, receive, send)
    else:
        await django_app(scope, receive, send)


def _chunked(scope: Scope) -> bool:
    return any(name == b"transfer-encoding" for name, _value in scope["headers"])
