"""`GET /api/v1/openapi.json`: an OpenAPI 3.1 description of every agent-facing endpoint.

Built per request from the tool registry: each tool this workspace's layout offers has an
operation of its own whose request body is exactly that tool's schema. Parameter rules
come from `openapi_params`, schemas and error answers from `openapi_schemas`, `/mcp` from
`openapi_mcp`.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse

from memoryui.api import openapi_params as rules
from memoryui.api.common import api_view, json_response
from memoryui.api.openapi_mcp import MCP_SCHEMAS, mcp_paths
from memoryui.api.openapi_proposals import PROPOSAL_SCHEMAS, proposal_paths
from memoryui.api.openapi_schemas import (
    dagu_err,
    err,
    json_body,
    param,
    ref,
    responses,
    schemas,
)
from memoryui.tools.registry import Tool, tools_for, variants
from memoryui.workspace import get_store

SCOPE = param("scope", "path", {"type": "string", "pattern": rules.SCOPE_PATTERN},
              "The scope (agent, DAG, project or workspace) the call acts for.")
DAG_NAME = param("dagName", "path", {"type": "string", "pattern": "^[a-zA-Z0-9_-]+$",
                                     "maxLength": 64},
                 "The DAG whose memory this is: Dagu's DAGName, at most 64 characters.")
PATH_TEXT = ("Workspace-relative file path; it may contain '/' (e.g. "
             "agents/ops-bot/memory/MEMORY.md). No '..', hidden names, absolute paths, "
             "control characters, or white space at either end of a name; a name is at "
             "most 200 UTF-8 bytes, the path at most 1024 characters.")
ETAG_HEADER = {"description": 'sha256 of the file\'s bytes, quoted: "<sha256>"',
               "schema": {"type": "string"}}
WRITE_ERRORS = (413, 422, 507)


def _tool_paths(layout: str, tools: list[Tool]) -> dict:
    """One operation per tool name: its body is that tool's own schema (`memory` has two,
    Anthropic's with `command` and Duragent's with `action`)."""
    paths = {}
    for name in sorted({t.name for t in tools}):
        group = variants(layout, name)
        schema = (group[0].input_schema if len(group) == 1 else
                  {"anyOf": [_dispatched(t) for t in group]})
        paths[f"/api/v1/agents/{{scope}}/tools/{name}"] = {"post": {
            "operationId": f"callTool_{name}", "tags": ["tools"],
            "summary": f"Run `{name}` for a scope",
            "description": "The body is the tool's arguments (an empty body is `{}`). A scope "
                           "token may act only for its own scope; world and global writes "
                           "need the grants. An argument the framework refuses (a bad "
                           "name, an unknown file) is a 400 whose message is the "
                           "framework's text.",
            "parameters": [SCOPE],
            "requestBody": {"required": False, "content": {
                "application/json": {"schema": schema}}},
            "responses": {"200": json_body(ref("ToolResult"), "The framework's result text"),
                          **err(400, 401, 403, 404, 409, *WRITE_ERRORS, 500)}}}
    return paths


def _dispatched(t: Tool) -> dict:
    """`memory` runs Anthropic's tool when the body has `command`, Duragent's otherwise."""
    if t.dialect == "anthropic":
        return t.input_schema
    return {"allOf": [t.input_schema, {"not": {"required": ["command"]}}]}


def _dagu_memory(op: str, response: str, summaries: tuple[str, str, str],
                 bad_name: tuple[int, ...] = ()) -> dict:
    """Get, put and delete of one Dagu memory file: `op` names the operations, `bad_name`
    is (400,) where the path names a DAG that may be malformed."""
    get, put, delete = summaries
    empty = {"description": "Done (empty body, as Dagu answers)"}
    body = {"required": True, "content": {"application/json": {
        "schema": ref("UpdateAgentMemoryRequest")}}}
    security: list[dict[str, list[str]]] = [{"bearer": []}]
    return {
        "get": {"operationId": f"get{op}", "tags": ["dagu"], "summary": get, "security": security,
                "responses": {"200": json_body(ref(response), "Memory"),
                              **dagu_err(*bad_name, 401, 403, 404, 500)}},
        "put": {"operationId": f"update{op}", "tags": ["dagu"], "summary": put,
                "security": security, "requestBody": body,
                "responses": {"200": empty,
                              **dagu_err(400, 401, 403, 404, 409, *WRITE_ERRORS, 500)}},
        "delete": {"operationId": f"delete{op}", "tags": ["dagu"], "summary": delete,
                   "security": security,
                   "responses": {"200": empty,
                                 **dagu_err(*bad_name, 401, 403, 404, 409, 500, 507)}},
    }


def _dagu_paths() -> dict:
    return {
        "/api/v1/settings/agent/memory": _dagu_memory(
            "AgentMemory", "AgentMemoryResponse",
            ("Dagu: global memory and the DAGs that have memory",
             "Dagu: replace the global memory (one commit)",
             "Dagu: delete the global memory (idempotent)")),
        "/api/v1/settings/agent/memory/dags/{dagName}": {
            "parameters": [DAG_NAME],
            **_dagu_memory(
                "AgentDAGMemory", "AgentDAGMemoryResponse",
                ("Dagu: one DAG's memory ('' when it has none, as Dagu answers)",
                 "Dagu: create or replace a DAG's memory (one commit)",
                 "Dagu: delete a DAG's memory (idempotent)"), bad_name=(400,))},
    }


def _file_paths() -> dict:
    text_body = {"required": False, "description": "The raw text; no body writes an empty file.",
                 "content": {
        "text/markdown": {"schema": rules.TEXT}, "text/plain": {"schema": rules.TEXT}}}
    read_path = param("path", "path", rules.relpath(), PATH_TEXT)
    write_path = param("path", "path", rules.relpath(write=True),
                       PATH_TEXT + " A name written is printable text without '\"' or "
                       "'\\\\'.")
    return {
        "/api/v1/files": {"get": {
            "operationId": "listFiles", "tags": ["files"],
            "summary": "Files below a folder with size and sha256",
            "parameters": [param("prefix", "query", rules.prefix(),
                                 "A folder, e.g. agents/ops-bot (slashes around it are "
                                 "dropped; default: everything).")],
            "responses": {"200": json_body(ref("FileList"), "Files the token may read"),
                          **err(400, 401, 500)}}},
        "/api/v1/files/{path}": {
            "get": {"operationId": "getFile", "tags": ["files"],
                    "summary": "A file's text, with its ETag",
                    "parameters": [read_path, param(
                        "If-None-Match", "header", {"type": "string"},
                        "304 when the ETag still matches.")],
                    "responses": {
                        "200": {"description": "The raw text",
                                "headers": {"ETag": ETAG_HEADER},
                                "content": {"text/markdown": {"schema": {"type": "string"}},
                                            "text/plain": {"schema": {"type": "string"}}}},
                        "304": {"description": "Not modified"},
                        **err(400, 401, 403, 404, 500)}},
            "put": {"operationId": "putFile", "tags": ["files"],
                    "summary": "Create or replace a file (one commit)",
                    "description": "The body is the raw UTF-8 text. Replacing an existing "
                                   "file needs `If-Match` (428 without it, 412 when it is "
                                   "stale); `If-None-Match: *` creates only (412 when the "
                                   "file exists).",
                    "parameters": [
                        write_path,
                        param("If-Match", "header", rules.IF_MATCH,
                              "The ETag you loaded (`*`: any current version); required "
                              "when the file exists."),
                        param("If-None-Match", "header", {"type": "string"},
                              "`*`: fail with 412 if the file exists."),
                        param("X-Memoryui-Message", "header", {"type": "string"},
                              "Commit message (default: tool and path).")],
                    "requestBody": text_body,
                    "responses": {
                        "200": {**json_body(ref("WriteResult"), "Replaced"),
                                "headers": {"ETag": ETAG_HEADER}},
                        "201": {**json_body(ref("WriteResult"), "Created"),
                                "headers": {"ETag": ETAG_HEADER}},
                        **err(400, 401, 403, 409, 412, 415, 428, *WRITE_ERRORS, 500)}},
            "delete": {"operationId": "deleteFile", "tags": ["files"],
                       "summary": "Delete a file (one commit)",
                       "parameters": [read_path, param(
                           "If-Match", "header", rules.IF_MATCH,
                           "The ETag you loaded (428 without it, 412 when it is stale).",
                           required=True)],
                       "responses": {"200": json_body(ref("DeleteResult"), "Deleted"),
                                     **err(400, 401, 403, 404, 409, 412, 428, 500, 507)}}},
    }


def _audit_paths() -> dict:
    return {
        "/api/v1/history": {"get": {
            "operationId": "history", "tags": ["audit"],
            "summary": "Commits newest first, with filters",
            "description": "An empty filter is the filter left out. A scope token sees its "
                           "own scope (the default) or a path it may read.",
            "parameters": [
                param("path", "query", rules.history_path(), "One file's history."),
                param("actor", "query", rules.HISTORY_ACTOR,
                      "agent:NAME / user:NAME (trailer) or a git author name."),
                param("scope", "query", rules.HISTORY_SCOPE, "Only this scope's files."),
                param("kind", "query", rules.HISTORY_KIND, "Only files of this kind."),
                param("since", "query", rules.HISTORY_TIME,
                      "YYYY-MM-DD or ISO 8601, years 1970 to 2099."),
                param("until", "query", rules.HISTORY_TIME,
                      "YYYY-MM-DD or ISO 8601, years 1970 to 2099."),
                param("limit", "query", {"type": "integer", "minimum": 1, "maximum": 500,
                                         "default": 50}, "Page size."),
                param("offset", "query", {"type": "integer", "minimum": 0,
                                          "maximum": 10**9, "default": 0},
                      "Commits to skip.")],
            "responses": {"200": json_body(ref("History"), "Commits"),
                          **err(400, 401, 403, 500)}}},
        "/api/v1/commits/{sha}": {"get": {
            "operationId": "getCommit", "tags": ["audit"],
            "summary": "One commit with its diff (files, hunks, patch text)",
            "parameters": [param("sha", "path", {"type": "string",
                                                 "pattern": "^[0-9a-fA-F]{7,40}$"},
                                 "Commit id: 7 to 40 hex digits (a prefix several "
                                 "commits share is a 400).")],
            "responses": {"200": json_body(ref("CommitDetail"), "The commit"),
                          **err(400, 401, 403, 404, 500)}}},
        "/api/v1/writes/{write}": {"get": {
            "operationId": "getWriteCommit", "tags": ["audit"],
            "summary": "The commit that holds a write, by the `write` id a PUT or DELETE "
                       "answered (null until the committer has made it)",
            "parameters": [param("write", "path", {"type": "string",
                                                   "pattern": "^[0-9a-f]{32}$"},
                                 "The write's id: 32 lowercase hex digits.")],
            "responses": {"200": json_body(ref("WriteCommit"), "The write's commit"),
                          **err(400, 401, 500)}}},
        "/api/v1/search": {"get": {
            "operationId": "search", "tags": ["search"],
            "summary": "Ranked full-text search with highlighted snippets",
            "description": "White space around a parameter is dropped and a blank one is "
                           "left out. A query the grammar cannot read, or `since` after "
                           "`until`, is a 400 that says where (`position`, `column`, "
                           "`caret`).",
            "parameters": [
                param("q", "query", rules.SEARCH_QUERY,
                      'Search terms: words, "phrases", prefix*, OR, AND, NOT / -word, '
                      "( ), name:/title:/body:/path:. Words match exactly as typed.",
                      required=True),
                param("scope", "query", rules.SEARCH_SCOPE, "Only this scope."),
                param("kind", "query", rules.SEARCH_KIND, "Only this kind."),
                param("mode", "query", rules.SEARCH_MODE,
                      "hybrid (the default): keyword and meaning rankings fused; keyword: "
                      "keywords alone."),
                param("since", "query", rules.SEARCH_DATE,
                      "From this date (YYYY-MM-DD, 1900-01-01 to 2999-12-31): a daily log's "
                      "date, for other files the day of their last change."),
                param("until", "query", rules.SEARCH_DATE,
                      "Until this date (YYYY-MM-DD, 1900-01-01 to 2999-12-31)."),
                param("limit", "query", {"type": "integer", "minimum": 1, "maximum": 100,
                                         "default": 20}, "Hits to return.")],
            "responses": {"200": json_body(ref("SearchResults"), "Hits"),
                          **err(400, 401, 403, 500, 503)}}},
    }


def build_spec() -> dict:
    """The OpenAPI document for this workspace (tools depend on the layout)."""
    layout = get_store().layout.key
    tools = sorted(tools_for(layout), key=lambda t: t.name)
    paths = {
        "/api/v1/tools": {"get": {
            "operationId": "listTools", "tags": ["tools"],
            "summary": "The memory tools this workspace offers",
            "description": "Anthropic shape by default; `format=openai` gives OpenAI "
                           "function items.",
            "parameters": [param("format", "query",
                                 {"type": "string", "enum": ["anthropic", "openai"],
                                  "default": "anthropic"}, "Tool definition shape.")],
            "responses": {"200": json_body({
                "type": "object", "required": ["tools"], "properties": {
                    "tools": {"type": "array", "items": {"oneOf": [
                        ref("AnthropicTool"), ref("OpenAITool")]}}}}, "Tool definitions"),
                **err(400, 401, 500)}}},
        **_tool_paths(layout, tools),
        **_dagu_paths(),
        **_file_paths(),
        **_audit_paths(),
        **proposal_paths(),
        "/api/v1/openapi.json": {"get": {
            "operationId": "openapi", "tags": ["meta"], "security": [],
            "summary": "This document",
            "responses": {"200": json_body({"type": "object"}, "OpenAPI 3.1")}}},
        **mcp_paths(),
    }
    return {
        "openapi": "3.1.0",
        "info": {"title": "memoryui agent API", "version": "1",
                 "description": f"Agent memory over HTTP for the {layout} layout: the "
                                "framework tools, Dagu's REST API, files and audit. Every "
                                "write is an attributed git commit. JSON errors are "
                                '`{"error": {"code", "message"}}`; the Dagu endpoints use '
                                'Dagu\'s own `{"code", "message"}`.'},
        "servers": [{"url": "/"}],
        "security": [{"bearer": []}],
        "tags": [{"name": n} for n in ("tools", "dagu", "files", "audit", "search",
                                       "proposals", "mcp", "meta")],
        "paths": paths,
        "components": {
            "securitySchemes": {"bearer": {
                "type": "http", "scheme": "bearer",
                "description": "A token from `memoryui token create` or the tokens page: "
                               "bound to one scope (optional world/global grants) or admin."}},
            "schemas": {**schemas(sorted({t.name for t in tools})), **MCP_SCHEMAS,
                        **PROPOSAL_SCHEMAS},
            "responses": responses(),
        },
    }


@api_view("GET")
def openapi_json(request: HttpRequest) -> HttpResponse:
    """Public: the description of the API carries no workspace data."""
    return json_response(build_spec())
