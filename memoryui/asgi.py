"""ASGI entry point: `/mcp` goes to the MCP endpoint, `/git/` to served git (its bodies
streamed, never read whole: memoryui/gitserve), everything else to Django.

Django runs through `PooledHandler` (memoryui/pooled.py): Django's ASGI handler with the
synchronous middleware chain, each request whole in one thread of a fixed pool of
MEMORYUI_THREADS threads. Django's handler alone serves lifespan events to nobody, so this
router owns them and runs the MCP session manager's task group for the life of each worker
process. Any ASGI server runs `memoryui.asgi:application` (docs/deployment.md); `python
manage.py serve` runs it under uvicorn.

In front of all of it, uvicorn's `ProxyHeadersMiddleware` (an ASGI middleware that runs under
any server) takes the client's address and scheme from the proxy's `X-Forwarded-For` and
`X-Forwarded-Proto` when the peer is one of `FORWARDED_ALLOW_IPS`. granian reads no proxy
headers and `serve` leaves them to this; without it every client behind a proxy has the
proxy's address (one client's failed sign-ins would lock out all of them) and the links
memoryui builds (the git clone URL, the feeds) say http behind TLS.
"""

import gc
import os

import django
from starlette.types import Receive, Scope, Send
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

from memoryui.startup import configured

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryui.settings")
configured(lambda: django.setup(set_prefix=False))  # a settings typo: one line, exit 2

from django.conf import settings  # noqa: E402 - after setup, like the rest
from django.urls import get_resolver  # noqa: E402

from memoryui.api.mcp import MCPEndpoint  # noqa: E402
from memoryui.pooled import PooledHandler  # noqa: E402
from memoryui.workspace import start_sync_thread  # noqa: E402

django_app = PooledHandler(settings.MEMORYUI_THREADS)

MCP_PATHS = ("/mcp", "/mcp/")
mcp_endpoint = MCPEndpoint()


def warm() -> None:
    """Load what a worker's first request would load: the URL configuration, which imports
    every view and what the views import (Markdown, the sanitizer, their regexes), about
    0.3 s of CPU that no agent's call should wait for."""
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
            # collector's view, a full collection does not walk it (a pause of 100 ms or
            # more in the middle of an agent's call).
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


async def git(scope: Scope, receive: Receive, send: Send) -> None:
    """Served git, its code loaded on the first `/git/` request: most workers never get one."""
    from memoryui.gitserve.app import application as git_app

    await git_app(scope, receive, send)


async def route(scope: Scope, receive: Receive, send: Send) -> None:
    if scope["type"] == "lifespan":
        await lifespan(scope, receive, send)
    elif scope["type"] == "http" and scope["path"] in MCP_PATHS:
        await mcp_endpoint(scope, receive, send)
    elif scope["type"] == "http" and scope["path"].startswith("/git/"):
        await git(scope, receive, send)
    else:
        await django_app(scope, receive, send)


# (starlette's and uvicorn's type names for one ASGI signature differ)
application = ProxyHeadersMiddleware(route,  # type: ignore[arg-type]
                                     trusted_hosts=settings.FORWARDED_ALLOW_IPS)
