"""ASGI entry point: `/mcp` goes to the MCP endpoint, everything else to Django.

Django is served by `ThreadedHandler` (one pool thread per request, see
`memoryui/handler.py`), which serves only HTTP, so this router owns the `lifespan` events
and runs the MCP session manager's task group for the life of each worker process.
`python manage.py serve` runs `memoryui.asgi:application` under uvicorn.
"""

import gc
import os

import django
from starlette.types import Receive, Scope, Send

from memoryui.startup import configured

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryui.settings")
configured(lambda: django.setup(set_prefix=False))  # a settings typo: one line, exit 2

from django.conf import settings  # noqa: E402 - after setup, like everything below
from django.urls import get_resolver  # noqa: E402

from memoryui import handoff  # noqa: E402
from memoryui.api.mcp import MCPEndpoint  # noqa: E402
from memoryui.handler import ThreadedHandler  # noqa: E402
from memoryui.store import memory  # noqa: E402
from memoryui.workspace import start_sync_thread  # noqa: E402

memory.tune()
django_app = ThreadedHandler(settings.MEMORYUI_THREADS)

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
            start_sync_thread()  # background sync rounds in this worker, when configured
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
    if scope["type"] == "http":
        send = handoff.closing(send)  # when asked, this reply moves its connection on
    if scope["type"] == "lifespan":
        await lifespan(scope, receive, send)
    elif scope["type"] == "http" and scope["path"] in MCP_PATHS:
        await mcp_endpoint(scope, receive, send)
    else:
        await django_app(scope, receive, send)
