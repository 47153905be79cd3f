"""The ASGI app for `/git/`: HTTP Basic with a host token, then `git http-backend`.

Routed by `memoryui.asgi` before Django (whose handler reads a whole body): git's bodies
stream through (backend.py). The password is a memoryui token (any user name), checked by
the API's rules (`api/auth.token_for`: revoked tokens refused, failures throttled per
address), the database call in a thread. Only host tokens reach git; a scope token gets
403. Before each request the served ref is set to the workspace's HEAD (served.py); after a
push the process's store tells its listeners (the file catalogue, the search index) which
files changed, and a sync remote hears of them on the next round.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import io
import json
import logging
import os
import tempfile
from pathlib import Path

from django.conf import settings
from django.core.handlers.asgi import ASGIRequest
from django.db import close_old_connections
from starlette.types import Receive, Scope, Send

from memoryui.api.auth import _generation_file, generation, token_for
from memoryui.gitserve.backend import run_cgi
from memoryui.gitserve.rules import PushRules
from memoryui.gitserve.served import NAMESPACE, config_env, hooks_dir, refresh_mirror
from memoryui.models import TOKEN_PREFIX, Token
from memoryui.policies import limited
from memoryui.proposing import NotFound, announce
from memoryui.proposing import get as proposing_get
from memoryui.throttle import Throttled
from memoryui.workspace import get_store

log = logging.getLogger("memoryui.gitserve")

PREFIX = "/git/workspace.git"
SERVICES = {"git-upload-pack", "git-receive-pack"}


async def _reply(send: Send, status: int, text: str,
                 headers: list[tuple[bytes, bytes]] | None = None) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                            (b"cache-control", b"no-store"), *(headers or [])]})
    await send({"type": "http.response.body", "body": (text + "\n").encode()})


def _credential(scope: Scope) -> str | None:
    """The token a client sent: Basic's password (or its user name, as some git clients
    send a token), or a Bearer token."""
    for name, value in scope.get("headers", []):
        if name == b"authorization":
            kind, _, encoded = value.decode("latin-1").partition(" ")
            if kind.lower() == "bearer":
                return encoded.strip() or None
            if kind.lower() != "basic":
                return None
            try:
                decoded = base64.b64decode(encoded.strip(), validate=True).decode("utf-8")
            except (binascii.Error, UnicodeDecodeError):
                return None
            user, _, password = decoded.partition(":")
            if not password.startswith(TOKEN_PREFIX) and user.startswith(TOKEN_PREFIX):
                return user
            return password or None
    return None


def _authenticate(scope: Scope, raw: str) -> Token | None:
    """token_for in a thread, with a request built from the scope (throttling reads it)."""
    close_old_connections()
    try:
        return token_for(raw, ASGIRequest(scope, io.BytesIO()))
    finally:
        close_old_connections()


def _route(scope: Scope) -> tuple[str, str] | None:
    """(service, path inside the repository) for the smart-HTTP endpoints, else None."""
    path = scope["path"]
    if not path.startswith(PREFIX + "/"):
        return None
    rest = path[len(PREFIX):]
    query = scope.get("query_string", b"").decode("latin-1")
    params = dict(p.partition("=")[::2] for p in query.split("&") if p)
    if rest == "/info/refs" and scope["method"] in ("GET", "HEAD"):
        service = params.get("service", "")
        return (service, rest) if service in SERVICES else None
    if rest in ("/git-upload-pack", "/git-receive-pack") and scope["method"] == "POST":
        return rest[1:], rest
    return None


def _rules(tok: Token) -> PushRules:
    return PushRules(frozenset(tok.host_scopes or []), tok.can_write_world, tok.can_write_global,
                     tok.can_push_skills, tok.can_push_directives, settings.MEMORYUI_MAX_BODY)


def _cgi_env(scope: Scope, root: Path, path: str, tok: Token, result: str,
             policies: bool) -> dict[str, str]:
    headers = {k.decode("latin-1").lower(): v.decode("latin-1")
               for k, v in scope.get("headers", [])}
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "HTTP_"))}
    env.update(config_env(hooks_dir(root / ".git" / "memoryui")))
    client = scope.get("client") or ("127.0.0.1", 0)
    env.update({
        "GIT_PROJECT_ROOT": str(root), "PATH_INFO": "/.git" + path,
        "GIT_HTTP_EXPORT_ALL": "1", "GIT_NAMESPACE": NAMESPACE,
        "REQUEST_METHOD": scope["method"], "QUERY_STRING":
            scope.get("query_string", b"").decode("latin-1"),
        "REMOTE_USER": tok.name or f"token-{tok.pk}", "REMOTE_ADDR": str(client[0]),
        "CONTENT_TYPE": headers.get("content-type", ""),
        "SERVER_PROTOCOL": "HTTP/1.1", "GATEWAY_INTERFACE": "CGI/1.1",
        "MEMORYUI_GIT_WORKSPACE": str(root), "MEMORYUI_LAYOUT": settings.MEMORYUI_LAYOUT,
        "MEMORYUI_SECRETS": settings.MEMORYUI_SECRETS,
        "MEMORYUI_PUSH_RULES": _rules(tok).as_env(),
        "MEMORYUI_PUSH_POLICIES": "1" if policies else "0",
        "MEMORYUI_PUSH_ORIGIN": _origin(scope, headers),
        "MEMORYUI_PUSH_TOKEN_ID": str(tok.pk), "MEMORYUI_PUSH_TOKEN_NAME": tok.name,
        "MEMORYUI_TOKEN_GENERATION_FILE": _generation_file(),
        "MEMORYUI_TOKEN_GENERATION": str(generation()), "MEMORYUI_PUSH_RESULT": result,
    })
    if "content-length" in headers:
        env["CONTENT_LENGTH"] = headers["content-length"]
    if "content-encoding" in headers:
        env["HTTP_CONTENT_ENCODING"] = headers["content-encoding"]
    if "git-protocol" in headers:
        env["GIT_PROTOCOL"] = headers["git-protocol"]
    return env


def _limited(tok: Token) -> bool:
    """Whether any write policy but `write` can apply to this host's push."""
    close_old_connections()
    try:
        return limited(tok)
    finally:
        close_old_connections()


def _origin(scope: Scope, headers: dict[str, str]) -> str:
    """The address the host reached (for the inbox links it is told of)."""
    host = headers.get("host", "")
    return f"{scope.get('scheme', 'http')}://{host}" if host else ""


def _announce(ids: list[str]) -> None:
    """The webhook for proposals a push made: from this long-lived process, not the hook."""
    close_old_connections()
    try:
        for pid in ids:
            try:
                announce(proposing_get(pid))
            except NotFound:
                continue
    finally:
        close_old_connections()


def _pushed(result: str) -> None:
    """After a push: this process's listeners hear of the files it changed."""
    try:
        data = json.loads(Path(result).read_text() or "{}")
    except (OSError, ValueError):
        return  # nothing was integrated (refused, or up to date)
    if not data:
        return  # nothing was integrated (refused, or up to date)
    if data.get("error"):
        log.error("git push by %s failed in memoryui's hook:\n%s",
                  data.get("pusher", "a host"), data["error"])
    if data.get("proposals"):
        _announce(list(data["proposals"]))
        log.info("git push by %s: %d proposal(s)", data.get("pusher", "a host"),
                 len(data["proposals"]))
        return
    if "new" not in data:
        return  # the hook failed before anything was integrated
    paths = data.get("paths") or []
    if paths:
        get_store().notify(paths)
    log.info("git push by %s: %d commit(s), %d file(s)", data.get("pusher", "a host"),
             len(data.get("commits") or []), len(paths))


async def application(scope: Scope, receive: Receive, send: Send) -> None:
    route = _route(scope)
    if route is None:
        await _reply(send, 404, "Not found: memoryui serves git's smart HTTP at "
                                f"{PREFIX} (clone, fetch, push).")
        return
    service, path = route
    raw = _credential(scope)
    challenge = [(b"www-authenticate", b'Basic realm="memoryui"')]
    if raw is None:
        await _reply(send, 401, "Authentication required: a memoryui host token as the "
                                "password.", challenge)
        return
    try:
        tok = await asyncio.to_thread(_authenticate, scope, raw)
    except Throttled as exc:
        await _reply(send, 429, str(exc), [(b"retry-after", str(exc.retry_after).encode())])
        return
    if tok is None:
        await _reply(send, 401, "Invalid or revoked token.", challenge)
        return
    if not tok.is_host:
        await _reply(send, 403, "This token has no git access: git needs a host token "
                                "(token create --git --scopes ...).")
        return
    store = await asyncio.to_thread(get_store)
    root = store.root
    await asyncio.to_thread(refresh_mirror, root)
    fd, result = tempfile.mkstemp(prefix="push-", dir=store.git.state_dir)
    os.close(fd)
    try:
        async def finished(_code: int) -> None:
            if service == "git-receive-pack" and path != "/info/refs":
                await asyncio.to_thread(_pushed, result)
        env = _cgi_env(scope, root, path, tok, result, service == "git-receive-pack" and
                       await asyncio.to_thread(_limited, tok))
        await run_cgi(env, receive, send, finished)
    finally:
        os.unlink(result)
