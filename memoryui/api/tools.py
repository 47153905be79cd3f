"""Agent tools over HTTP: discovery in Anthropic or OpenAI shape, and one call endpoint.

Views only translate HTTP to `call_tool` and back; the registry owns argument checks and
the framework texts, so the API, MCP and the UI answer alike.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse

from memoryui.api.auth import require_token
from memoryui.api.common import (
    actor_for,
    agent_store,
    api_view,
    bad_request,
    forbidden,
    json_response,
    read_json,
)
from memoryui.store import names
from memoryui.tools.registry import ToolContext, call_tool, tools_for
from memoryui.workspace import get_search_index, get_store

FORMATS = ("anthropic", "openai")


@require_token()
@api_view("GET")
def list_tools(request: HttpRequest) -> HttpResponse:
    """`{"tools": [...]}` for this workspace's layout, ready to hand to a model."""
    fmt = request.GET.get("format", "anthropic")
    if fmt not in FORMATS:
        raise bad_request(f"unknown format {fmt!r}; use one of: {', '.join(FORMATS)}")
    tools = sorted(tools_for(get_store().layout.key), key=lambda t: t.name)
    items = [t.openai() if fmt == "openai" else t.anthropic() for t in tools]
    return json_response({"tools": items})


@require_token()
@api_view("POST")
def run_tool(request: HttpRequest, scope: str, tool: str) -> HttpResponse:
    """Run one tool for a scope; 200 `{"tool", "result"}` with the framework's exact text."""
    tok = request.token
    if not tok.may_act_for(scope):
        raise forbidden(f"this token acts only for scope '{tok.scope}', not '{scope}'")
    names.validate_scope(scope)
    args = read_json(request, empty={})
    store = get_store()
    actor, trailers = actor_for(tok, scope)
    ctx = ToolContext(store=agent_store(tok, store, scope), scope=scope, actor=actor,
                      can_write_world=tok.can_write_world or tok.is_admin,
                      can_write_global=tok.can_write_global or tok.is_admin,
                      trailers=trailers, search_index=get_search_index)
    result = call_tool(ctx, tool, args)
    return json_response({"tool": tool, "result": result})
