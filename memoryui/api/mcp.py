"""The MCP endpoint (`/mcp`): the registry's tools over streamable HTTP, for one scope.

Built on the official `mcp` SDK (v2): a low-level `Server` whose tools/list and tools/call
handlers read the registry, driven by a `StreamableHTTPSessionManager` in stateless mode
with JSON responses, so any worker process can answer any request (no session affinity).
`MCPEndpoint` is the ASGI app in front of it; `memoryui.asgi` routes `/mcp` here and hands
it the server's lifespan, which the session manager needs for its task group.

Which scope a request acts for: a scope token acts for its own scope (a different
`?scope=` / `X-Memoryui-Scope` is refused with 403); an admin token must name the scope
with `?scope=<scope>` or an `X-Memoryui-Scope` header (400 without it).

Order of checks on every request, each answered in JSON like the agent API: Host and
Origin against `ALLOWED_HOSTS` (421 / 403), the method (405 but for POST: stateless, so
no stream to open and no session to delete), body size against `MEMORYUI_MAX_BODY` (413),
bearer token (401), scope (400 / 403), Content-Type (415 but for application/json); then
the SDK, which checks Host and Origin again with `TransportSecuritySettings` built from
the same list.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlsplit

import mcp_types as types
from asgiref.sync import sync_to_async
from django.conf import settings
from django.core.handlers.asgi import ASGIRequest
from django.db import close_old_connections
from django.http.request import split_domain_port, validate_host
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import MCPError
from starlette.types import Message, Receive, Scope, Send

from memoryui.api import mcp_proposals
from memoryui.api.auth import token_for
from memoryui.api.common import actor_for, agent_store
from memoryui.middleware import DISK_FULL, is_disk_full
from memoryui.models import Token
from memoryui.store import Actor, StoreError, names
from memoryui.throttle import Throttled
from memoryui.tools.registry import Tool, ToolContext, ToolError, call_tool, tools_for
from memoryui.workspace import get_search_index, get_store

log = logging.getLogger("memoryui.mcp")

SCOPE_HEADER = b"x-memoryui-scope"
AUTH_KEY = "memoryui.mcp"  # where the ASGI scope carries the authenticated caller

INSTRUCTIONS = (
    "memoryui keeps your long-term memory as markdown files in a git repository that your "
    "team reviews. Read your memory before starting work and record what you learn as you "
    "go; every change you make is committed under your name."
)


@dataclass(frozen=True)
class Caller:
    """Who an MCP request acts for, decided once per HTTP request."""

    scope: str
    can_write_world: bool
    can_write_global: bool
    actor: Actor
    trailers: tuple[tuple[str, str], ...] = ()
    token: Token | None = None  # its write policies and read-only flag (api/common.py)


# -- Host / Origin -----------------------------------------------------------------------

def allowed_hosts() -> list[str]:
    """Django's effective ALLOWED_HOSTS (its DEBUG fallback included)."""
    hosts = list(settings.ALLOWED_HOSTS)
    if not hosts and settings.DEBUG:
        hosts = [".localhost", "127.0.0.1", "[::1]"]
    return hosts


def transport_security() -> TransportSecuritySettings:
    """The SDK's DNS-rebinding settings from ALLOWED_HOSTS (any port, http and https).

    The SDK matches exact names only, so when ALLOWED_HOSTS has Django wildcards
    (`.example.com`, `*`) its check is switched off and `host_problem` (Django's own
    rule, run first on every request) is the gate; it is never off for both.
    """
    hosts = allowed_hosts()
    if any(h == "*" or h.startswith(".") for h in hosts):
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    allowed, origins = [], list(settings.CSRF_TRUSTED_ORIGINS)
    for h in hosts:
        allowed += [h, f"{h}:*"]
        origins += [f"http://{h}", f"https://{h}", f"http://{h}:*", f"https://{h}:*"]
    return TransportSecuritySettings(enable_dns_rebinding_protection=True,
                                     allowed_hosts=allowed, allowed_origins=origins)


def host_problem(headers: dict[bytes, bytes]) -> tuple[int, str, str] | None:
    """(status, code, message) when Host or Origin is not one this site serves."""
    hosts = allowed_hosts()
    host = headers.get(b"host", b"").decode("latin-1")
    domain, _port = split_domain_port(host)
    if not domain or not validate_host(domain, hosts):
        return 421, "invalid_host", f"Invalid Host header {host!r}: not in ALLOWED_HOSTS"
    origin = headers.get(b"origin", b"").decode("latin-1")
    if origin and origin not in settings.CSRF_TRUSTED_ORIGINS:
        netloc = urlsplit(origin).netloc if "://" in origin else ""
        o_domain, _ = split_domain_port(netloc)
        if not o_domain or not validate_host(o_domain, hosts):
            return 403, "forbidden", f"Invalid Origin header {origin!r}: not an allowed host"
    return None


# -- the MCP server ----------------------------------------------------------------------

def _layout() -> str:
    return settings.MEMORYUI_LAYOUT


def mcp_tool(t: Tool) -> types.Tool:
    """A registry tool as MCP lists it: schema as-is, hints from the tool's flags."""
    return types.Tool(
        name=t.name, title=t.title or None, description=t.description,
        input_schema=t.input_schema,
        annotations=types.ToolAnnotations(
            title=t.title or None, read_only_hint=t.read_only,
            destructive_hint=False if t.read_only else t.destructive,
            idempotent_hint=t.idempotent, open_world_hint=False),
    )


def _caller(ctx: ServerRequestContext) -> Caller:
    request = ctx.request
    caller = getattr(request, "scope", {}).get(AUTH_KEY) if request is not None else None
    if not isinstance(caller, Caller):  # only reachable if the endpoint is mounted unguarded
        raise PermissionError("MCP request without an authenticated caller")
    return caller


async def list_tools(ctx: ServerRequestContext,
                     params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
    caller = _caller(ctx)
    return types.ListToolsResult(tools=[mcp_tool(t) for t in tools_for(_layout())]
                                 + mcp_proposals.offered(caller.token))


def _run(caller: Caller, name: str, args: dict[str, Any]) -> str:
    store = get_store()
    close_old_connections()
    if mcp_proposals.handles(name):
        return mcp_proposals.run(caller.token, name, args)
    acting = agent_store(caller.token, store, caller.scope) if caller.token is not None \
        else store
    ctx = ToolContext(store=acting, scope=caller.scope, actor=caller.actor,
                      can_write_world=caller.can_write_world,
                      can_write_global=caller.can_write_global,
                      trailers=list(caller.trailers), search_index=get_search_index)
    return call_tool(ctx, name, args)


async def call(ctx: ServerRequestContext,
               params: types.CallToolRequestParams) -> types.CallToolResult:
    caller = _caller(ctx)
    try:
        text = await sync_to_async(_run, thread_sensitive=False)(
            caller, params.name, dict(params.arguments or {}))
    except ToolError as exc:
        return _result(exc.message, error=True)
    except StoreError as exc:
        return _result(str(exc), error=True)
    except Exception:
        log.exception("MCP tool %s failed for scope %s", params.name, caller.scope)
        raise MCPError(code=types.INTERNAL_ERROR, message="internal error; see the server "
                       "log") from None
    return _result(text)


def _result(text: str, error: bool = False) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)],
                                is_error=error)


def _input_schema(name: str) -> dict | None:
    for t in tools_for(_layout()):
        if t.name == name:
            return t.input_schema
    return None


def build_server() -> Server:
    return Server("memoryui", version="0.1.0", title="memoryui", instructions=INSTRUCTIONS,
                  on_list_tools=list_tools, on_call_tool=call,
                  get_tool_input_schema=_input_schema)


# -- the ASGI endpoint ---------------------------------------------------------------------

def _authenticate(raw: str | None, wanted: str | None, scope: Scope
                  ) -> Caller | tuple[int, str, str] | Throttled:
    """The caller for a bearer token, or (status, code, message), or Throttled (runs in a
    thread: ORM)."""
    close_old_connections()
    if not raw:
        return 401, "unauthorized", "Authentication required: send 'Authorization: Bearer <token>'"
    try:  # the request only tells the throttle which address asks
        tok = token_for(raw, ASGIRequest(scope, io.BytesIO()))
    except Throttled as exc:
        return exc
    if tok is None:
        return 401, "unauthorized", "invalid or revoked token"
    if tok.is_admin:
        if not wanted:
            return (400, "invalid_arguments", "an admin token must name the scope it acts "
                    "for: add ?scope=<scope> to the URL or send an X-Memoryui-Scope header")
        acting = wanted
    else:
        if not tok.scope:
            return 403, "forbidden", "this token is bound to no scope"
        if wanted and wanted != tok.scope:
            return 403, "forbidden", f"this token acts only for scope '{tok.scope}', not '{wanted}'"
        acting = tok.scope
    try:
        names.validate_scope(acting)
    except StoreError as exc:
        return 400, "invalid_arguments", str(exc)
    actor, trailers = actor_for(tok, acting)
    return Caller(acting, tok.can_write_world or tok.is_admin,
                  tok.can_write_global or tok.is_admin, actor, tuple(trailers), tok)


async def _json_error(send: Send, status: int, code: str, message: str,
                      headers: list[tuple[bytes, bytes]] | None = None) -> None:
    body = json.dumps({"error": {"code": code, "message": message}},
                      ensure_ascii=False).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode()), *(headers or [])]})
    await send({"type": "http.response.body", "body": body})


class MCPEndpoint:
    """ASGI app for `/mcp`: guards (host, size, token, scope), then the SDK's transport."""

    def __init__(self) -> None:
        self.server = build_server()
        self.max_body = settings.MEMORYUI_MAX_BODY
        self.manager = StreamableHTTPSessionManager(
            app=self.server, json_response=True, stateless=True,
            security_settings=transport_security(), max_request_body_size=self.max_body)
        self.running = False

    @contextlib.asynccontextmanager
    async def run(self) -> AsyncIterator[None]:
        """Owns the session manager's task group for the life of the server process."""
        async with self.manager.run():
            self.running = True
            try:
                yield
            finally:
                self.running = False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        started = False

        async def tracked(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self._serve(scope, receive, tracked)
        except Exception as exc:  # the JSON catch-all, like ApiErrorMiddleware for Django
            log.error("MCP request failed: %s %s", scope.get("method"), scope.get("path"),
                      exc_info=True)
            if started:
                return
            if is_disk_full(exc):
                await _json_error(send, 507, "insufficient_storage", DISK_FULL)
            else:
                await _json_error(send, 500, "internal_error", "internal server error: the "
                                  "error is in the server log")

    async def _serve(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = dict(scope.get("headers") or [])
        problem = host_problem(headers)
        if problem:
            await _json_error(send, *problem)
            return
        if scope.get("method") != "POST":
            # Stateless: no server-to-client stream to open (GET would idle forever) and
            # no session to delete; MCP's transport answers 405 for both.
            await _json_error(send, 405, "method_not_allowed", f"{scope.get('method')} is "
                              "not allowed here; send JSON-RPC messages with POST",
                              headers=[(b"allow", b"POST")])
            return
        try:
            length = int(headers.get(b"content-length", b"0") or 0)
        except ValueError:
            length = 0
        if length > self.max_body:
            await _json_error(send, 413, "payload_too_large",
                              f"request body is larger than {self.max_body} bytes")
            return
        raw = _bearer(headers)
        wanted = _wanted_scopes(scope, headers)
        if len(wanted) > 1:
            await _json_error(send, 400, "invalid_arguments", "?scope= and X-Memoryui-Scope "
                              f"name different scopes: {', '.join(sorted(wanted))}")
            return
        who = await sync_to_async(_authenticate, thread_sensitive=True)(
            raw, next(iter(wanted), None), scope)
        if isinstance(who, Throttled):
            await _json_error(send, 429, "too_many_requests", str(who),
                              headers=[(b"retry-after", str(who.retry_after).encode())])
            return
        if not isinstance(who, Caller):
            extra = [(b"www-authenticate", b'Bearer realm="memoryui"')] if who[0] == 401 else []
            await _json_error(send, *who, headers=extra)
            return
        ctype = headers.get(b"content-type", b"").decode("latin-1").split(";")[0]
        if ctype.strip().lower() != "application/json":
            await _json_error(send, 415, "unsupported_media_type", "send JSON-RPC messages "
                              f"as application/json, not {ctype.strip() or 'no Content-Type'}")
            return
        if not self.running:
            await _json_error(send, 503, "unavailable", "the MCP endpoint needs the ASGI "
                              "lifespan; serve memoryui with `python manage.py serve`")
            return
        body = await _read_capped(receive, self.max_body)
        if body is None:
            await _json_error(send, 413, "payload_too_large",
                              f"request body is larger than {self.max_body} bytes")
            return
        scope[AUTH_KEY] = who
        await self.manager.handle_request(scope, _replay(body, receive), send)


def _bearer(headers: dict[bytes, bytes]) -> str | None:
    kind, _, value = headers.get(b"authorization", b"").decode("latin-1").partition(" ")
    if kind.lower() != "bearer" or not value.strip():
        return None
    return value.strip()


def _wanted_scopes(scope: Scope, headers: dict[bytes, bytes]) -> set[str]:
    """Scopes named by `?scope=` and `X-Memoryui-Scope` (all must agree)."""
    query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
    values = set(query.get("scope") or [])
    if headers.get(SCOPE_HEADER):
        values.add(headers[SCOPE_HEADER].decode("latin-1").strip())
    return values


async def _read_capped(receive: Receive, limit: int) -> list[Message] | None:
    """Buffer the request body (chunked bodies have no Content-Length); None when too big."""
    messages: list[Message] = []
    size = 0
    while True:
        message = await receive()
        messages.append(message)
        if message["type"] != "http.request":
            return messages
        size += len(message.get("body", b""))
        if size > limit:
            return None
        if not message.get("more_body", False):
            return messages


def _replay(messages: list[Message], receive: Receive) -> Receive:
    pending = list(messages)

    async def replayed() -> Message:
        if pending:
            return pending.pop(0)
        return await receive()

    return replayed
