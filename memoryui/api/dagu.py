"""Dagu's agent-memory REST API (`/settings/agent/memory`), mapped onto the layout.

Request and response shapes, status codes and the DAGName pattern are Dagu's, so a Dagu
client can point at memoryui unchanged. Errors use Dagu's own `{"code", "message"}` body
(not memoryui's `{"error": {...}}`) because Dagu clients parse that shape. Two deliberate
differences: GET returns the full text (Dagu's truncated GET loses data when the text is
saved back), and every PUT/DELETE is a git commit by `api-admin` with a `Memoryui-Token`
trailer naming the admin token used.

The global memory is the layout's GLOBAL kind and a DAG's memory is its MEMORY kind with
the DAG name as the scope; a layout without the kind answers 404.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import wraps
from posixpath import dirname

from django.http import HttpRequest, HttpResponse, JsonResponse

from memoryui.api.auth import bearer, token_for
from memoryui.api.common import (
    ApiError,
    actor_for,
    agent_store,
    check_writable,
    json_response,
    read_json_object,
)
from memoryui.middleware import log_unexpected, unexpected
from memoryui.store import DELETE, Actor, Kind, Store, StoreError
from memoryui.store.agentview import AgentStore
from memoryui.throttle import Throttled
from memoryui.workspace import get_store

DAG_NAME_RE = re.compile(r"^[a-zA-Z0-9_-]+$")


def dagu_error(code: str, message: str, status: int) -> JsonResponse:
    resp = JsonResponse({"code": code, "message": message}, status=status,
                        json_dumps_params={"ensure_ascii": False})
    if status == 401:
        resp["WWW-Authenticate"] = 'Bearer realm="memoryui"'
    return resp


def dagu_view(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Dagu's `requireAgentMemoryAdmin`: admin token only, Dagu's error bodies."""

    @wraps(view)
    def wrapped(request: HttpRequest, *args: object, **kwargs: object) -> HttpResponse:
        if request.method not in ("GET", "HEAD", "PUT", "DELETE"):
            resp = dagu_error("method_not_allowed", f"{request.method} is not allowed", 405)
            resp["Allow"] = "GET, PUT, DELETE"
            return resp
        raw = bearer(request)
        if raw is None:
            return dagu_error("unauthorized", "Authentication required", 401)
        try:
            tok = token_for(raw, request)
        except Throttled as exc:
            resp = dagu_error("too_many_requests", str(exc), 429)
            resp["Retry-After"] = str(exc.retry_after)
            return resp
        if tok is None:
            return dagu_error("unauthorized", "Invalid or revoked token", 401)
        if not tok.is_admin:
            return dagu_error("forbidden", "Insufficient permissions", 403)
        request.token = tok
        try:
            return view(request, *args, **kwargs)
        except ApiError as exc:
            code = "bad_request" if exc.status == 400 else exc.code
            return dagu_error(code, exc.message, exc.status)
        except StoreError as exc:
            code = "bad_request" if exc.status == 400 else exc.code
            return dagu_error(code, str(exc), exc.status)
        except Exception as exc:  # noqa: BLE001 - Dagu clients parse only Dagu's shape
            status, code, message = unexpected(exc)
            log_unexpected(request, exc, status)
            resp = dagu_error(code, message, status)
            resp._has_been_logged = True
            return resp

    wrapped.csrf_exempt = True  # type: ignore[attr-defined]
    return wrapped


def _path(store: Store | AgentStore, kind: Kind, dag: str | None = None) -> str:
    if not store.layout.supports(kind):
        what = "global memory" if kind == Kind.GLOBAL else "per-DAG memory"
        raise ApiError("not_found", f"Agent memory management is not available: the "
                       f"{store.layout.key} layout has no {what}", 404)
    return store.path_for(kind, dag)


def _content(request: HttpRequest) -> str:
    """`UpdateAgentMemoryRequest`: `{"content": string}`, required."""
    try:
        body = read_json_object(request, allowed=("content",))
    except ApiError as exc:
        if exc.status == 400 and "empty" in exc.message:
            raise ApiError("bad_request", "Invalid request body", 400) from None
        raise
    if "content" not in body:
        raise ApiError("bad_request", 'request body has an error: property "content" is '
                       "missing", 400)
    if not isinstance(body["content"], str):
        raise ApiError("bad_request", 'request body has an error: property "content" must '
                       "be a string", 400)
    return body["content"]


def _check_name(dag: str) -> str:
    if not DAG_NAME_RE.match(dag):
        raise ApiError("bad_request", f'parameter "dagName" in path has an error: string '
                       f'"{dag}" doesn\'t match the regular expression "^[a-zA-Z0-9_-]+$"',
                       400)
    return dag


def _dag_memories(store: Store | AgentStore) -> list[str] | None:
    """Scopes that have a memory file, sorted; None (JSON null) when there are none."""
    if not store.layout.supports(Kind.MEMORY):
        return None
    found = [s for s in store.scopes() if store.exists(store.path_for(Kind.MEMORY, s))]
    return found or None


@dagu_view
def global_memory(request: HttpRequest) -> HttpResponse:
    tok = request.token
    store = agent_store(tok, get_store())  # its own proposals read back, writes proposed
    path = _path(store, Kind.GLOBAL)
    if _put(request, store, path, "dagu: update global memory"):
        return HttpResponse(status=200)
    if request.method == "DELETE":
        actor, trailers = actor_for(tok)
        if store.exists(path):
            store.update(path, _remove, actor=actor, tool="agent_memory_delete",
                         message="dagu: delete global memory", trailers=trailers)
        return HttpResponse(status=200)
    return json_response({"globalMemory": store.read(path) or "",
                          "dagMemories": _dag_memories(store),
                          "memoryDir": dirname(path) or "."})


@dagu_view
def dag_memory(request: HttpRequest, dag: str) -> HttpResponse:
    tok = request.token
    _check_name(dag)
    store = agent_store(tok, get_store(), dag)  # Dagu's writer acts for the DAG
    path = _path(store, Kind.MEMORY, dag)
    if _put(request, store, path, f"dagu: update memory of DAG {dag}"):
        return HttpResponse(status=200)
    if request.method == "DELETE":
        actor, trailers = actor_for(tok)
        folder = dirname(path) + "/"
        message = f"dagu: delete memory of DAG {dag}"
        if folder == store.layout.scope_prefix(dag):
            # Dagu removes the whole `dags/{name}/` folder; it holds only that memory.
            _delete_tree(store, folder, actor, trailers, message)
        elif store.exists(path):
            # Elsewhere the folder holds the scope's other files: remove the memory only.
            store.update(path, _remove, actor=actor, tool="agent_memory_delete",
                         message=message, trailers=trailers)
        return HttpResponse(status=200)
    return json_response({"dagName": dag, "content": store.read(path) or ""})


def _put(request: HttpRequest, store: Store | AgentStore, path: str, message: str) -> bool:
    """A PUT's whole-file write (True when the request was one); any write needs a token
    that may write."""
    tok = request.token
    if request.method in ("PUT", "DELETE"):
        check_writable(tok)
    if request.method != "PUT":
        return False
    content = _content(request)
    actor, trailers = actor_for(tok)
    store.write(path, content, actor=actor, tool="agent_memory_update", message=message,
                trailers=trailers)
    return True


def _remove(_old: str | None) -> object:
    return DELETE


def _delete_tree(store: Store | AgentStore, folder: str, actor: Actor, trailers: list,
                 message: str) -> None:
    """Remove every file of a DAG's folder (normally just its MEMORY.md)."""
    for path in store.list_files(folder):
        store.update(path, _remove, actor=actor, tool="agent_memory_delete",
                     message=message, trailers=trailers)
