"""ASGI entry point: `/mcp` goes to the MCP endpoint, everything else to Django.

Django is served by its own ASGI handler, which serves only HTTP, so this router owns the
`lifespan` events and runs the MCP session manager's task group for the life of each
worker process. Any ASGI server runs `memoryui.asgi:application` (docs/deployment.md);
`python manage.py serve` runs it under uvicorn.
"""

import gc
import os

import django
from starlette.types import Receive, Scope, Send

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryui.settings")
django.setup(set_prefix=False)

from django.core.handlers.asgi import ASGIHandler  # noqa: E402 - after setup, like the rest
from django.urls import get_resolver  # noqa: E402

from memoryui.api.mcp import MCPEndpoint  # noqa: E402
from memoryui.store import memory  # noqa: E402
from memoryui.workspace import start_sync_thread  # noqa: E402

memory.tune()
django_app = ASGIHandler()

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
    else:
        await django_app(scope, receive, send)
