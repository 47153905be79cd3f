"""`GET /api/v1/openapi.json`: an OpenAPI 3.1 description of every agent-facing endpoint.

Built per request from the tool registry, so the `tool` enum and the request-body schemas
are exactly the tools this workspace's layout offers.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse

from memoryui.api.common import api_view, json_response
from memoryui.tools.registry import tools_for
from memoryui.workspace import get_store

ERROR_CODES = ["invalid_arguments", "unauthorized", "forbidden", "not_found", "conflict",
               "payload_too_large", "method_not_allowed", "precondition_failed",
               "precondition_required", "unsupported_media_type", "insufficient_storage",
               "internal_error", "too_many_requests"]


def _ref(name: str) -> dict:
    return {"$ref": f"#/components/schemas/{name}"}


def _json(schema: dict, description: str) -> dict:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


ERROR_TEXTS = {
    400: "Invalid arguments: the message says what is wrong",
    401: "No token or an invalid or revoked token",
    403: "The token may not act here",
    404: "Not found",
    405: "Method not allowed",
    409: "Conflict",
    412: "If-Match is stale: the body carries the current text, its ETag and a diff",
    413: "Request body over 1 MiB, or content over the framework's cap",
    415: "Unsupported media type",
    428: "If-Match is required to change an existing file",
    500: "Unexpected server error (logged with its traceback on the server)",
    507: "The workspace disk is full: nothing was written, the old file is intact",
}


def _err(*statuses: int) -> dict:
    return {str(s): {"$ref": f"#/components/responses/E{s}"} for s in statuses}


def _dagu_err(*statuses: int) -> dict:
    return {str(s): {"$ref": "#/components/responses/DaguError"} for s in statuses}


def _param(name: str, where: str, schema: dict, description: str,
           required: bool = False) -> dict:
    return {"name": name, "in": where, "required": required or where == "path",
            "description": description, "schema": schema}


SCOPE = _param("scope", "path", {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,64}$"},
               "The scope (agent, DAG, project or workspace) the call acts for.")
DAG_NAME = _param("dagName", "path", {"type": "string", "pattern": "^[a-zA-Z0-9_-]+$"},
                  "The DAG whose memory this is (Dagu's DAGName).")
FILE_PATH = _param("path", "path", {"type": "string"},
                   "Workspace-relative file path; it may contain '/' (e.g. "
                   "agents/ops-bot/memory/MEMORY.md). No '..', hidden names or absolute paths.")
ETAG_HEADER = {"description": 'sha256 of the file\'s bytes, quoted: "<sha256>"',
               "schema": {"type": "string"}}


def _schemas(tool_names: list[str], tool_schemas: list[dict]) -> dict:
    return {
        "Error": {
            "type": "object", "required": ["error"],
            "properties": {"error": {
                "type": "object", "required": ["code", "message"],
                "properties": {"code": {"type": "string", "enum": ERROR_CODES},
                               "message": {"type": "string"}},
                "additionalProperties": True}}},
        "StaleError": {
            "type": "object", "required": ["error"],
            "properties": {"error": {
                "type": "object", "required": ["code", "message", "current", "etag", "diff"],
                "properties": {"code": {"const": "precondition_failed"},
                               "message": {"type": "string"},
                               "path": {"type": "string"},
                               "current": {"type": ["string", "null"]},
                               "etag": {"type": ["string", "null"]},
                               "diff": {"type": "string",
                                        "description": "Unified diff from the current text "
                                                       "to the text you sent."}}}}},
        "DaguError": {"type": "object", "required": ["code", "message"],
                      "properties": {"code": {"type": "string"}, "message": {"type": "string"}}},
        "AnthropicTool": {
            "type": "object", "required": ["name", "description", "input_schema"],
            "properties": {"name": {"type": "string"}, "description": {"type": "string"},
                           "input_schema": {"type": "object"}}},
        "OpenAITool": {
            "type": "object", "required": ["type", "function"],
            "properties": {"type": {"const": "function"}, "function": {
                "type": "object", "required": ["name", "description", "parameters"],
                "properties": {"name": {"type": "string"}, "description": {"type": "string"},
                               "parameters": {"type": "object"}}}}},
        "ToolName": {"type": "string", "enum": tool_names} if tool_names else
        {"type": "string"},
        "ToolArguments": {"anyOf": tool_schemas} if tool_schemas else {"type": "object"},
        "ToolResult": {"type": "object", "required": ["tool", "result"],
                       "properties": {"tool": {"type": "string"},
                                      "result": {"type": "string", "description":
                                                 "The text exactly as the framework's own "
                                                 "tool returns it."}}},
        "AgentMemoryResponse": {
            "type": "object",
            "properties": {"globalMemory": {"type": "string",
                                            "description": "The full text (not truncated)."},
                           "dagMemories": {"type": ["array", "null"],
                                           "items": {"type": "string"}},
                           "memoryDir": {"type": "string"}}},
        "AgentDAGMemoryResponse": {
            "type": "object", "required": ["dagName", "content"],
            "properties": {"dagName": {"type": "string"}, "content": {"type": "string"}}},
        "UpdateAgentMemoryRequest": {
            "type": "object", "required": ["content"], "additionalProperties": False,
            "properties": {"content": {"type": "string"}}},
        "FileEntry": {
            "type": "object", "required": ["path", "size", "sha256", "kind", "scope"],
            "properties": {"path": {"type": "string"}, "size": {"type": "integer"},
                           "sha256": {"type": "string"},
                           "kind": {"type": ["string", "null"]},
                           "scope": {"type": ["string", "null"]}}},
        "FileList": {"type": "object", "required": ["prefix", "files"],
                     "properties": {"prefix": {"type": "string"},
                                    "files": {"type": "array", "items": _ref("FileEntry")}}},
        "WriteResult": {
            "type": "object", "required": ["path", "sha256", "etag", "created", "changed"],
            "properties": {"path": {"type": "string"}, "sha256": {"type": "string"},
                           "etag": {"type": "string"}, "created": {"type": "boolean"},
                           "changed": {"type": "boolean"},
                           "commit": {"type": ["string", "null"], "description":
                                      "The commit, or null when it is grouped and made "
                                      "within a second."}}},
        "DeleteResult": {
            "type": "object", "required": ["path", "deleted"],
            "properties": {"path": {"type": "string"}, "deleted": {"const": True},
                           "commit": {"type": ["string", "null"]}}},
        "Commit": {
            "type": "object",
            "required": ["sha", "parents", "author", "email", "actor", "time", "subject",
                         "message", "changes"],
            "properties": {
                "sha": {"type": "string"}, "short": {"type": "string"},
                "parents": {"type": "array", "items": {"type": "string"}},
                "author": {"type": "string"}, "email": {"type": "string"},
                "actor": {"type": "string", "description": "agent:NAME, user:NAME, or "
                          "git:NAME for commits made outside memoryui"},
                "tools": {"type": "array", "items": {"type": "string"}},
                "time": {"type": "string", "format": "date-time"},
                "timestamp": {"type": "integer"},
                "subject": {"type": "string"}, "message": {"type": "string"},
                "trailers": {"type": "object", "additionalProperties": {
                    "type": "array", "items": {"type": "string"}}},
                "changes": {"type": "array", "items": {
                    "type": "object", "properties": {
                        "status": {"type": "string"}, "path": {"type": "string"},
                        "old_path": {"type": ["string", "null"]}}}}}},
        "History": {
            "type": "object", "required": ["commits", "limit", "offset"],
            "properties": {"commits": {"type": "array", "items": _ref("Commit")},
                           "limit": {"type": "integer"}, "offset": {"type": "integer"},
                           "next_offset": {"type": ["integer", "null"]},
                           "filters": {"type": "object"}}},
        "FileDiff": {
            "type": "object",
            "properties": {
                "path": {"type": "string"}, "old_path": {"type": ["string", "null"]},
                "status": {"type": "string",
                           "enum": ["added", "deleted", "modified", "renamed"]},
                "binary": {"type": "boolean"}, "additions": {"type": "integer"},
                "deletions": {"type": "integer"},
                "hunks": {"type": "array", "items": {
                    "type": "object", "properties": {
                        "header": {"type": "string"}, "old_start": {"type": "integer"},
                        "new_start": {"type": "integer"},
                        "lines": {"type": "array", "items": {
                            "type": "object", "properties": {
                                "op": {"type": "string", "enum": [" ", "+", "-", "\\"]},
                                "text": {"type": "string"},
                                "old_no": {"type": ["integer", "null"]},
                                "new_no": {"type": ["integer", "null"]}}}}}}}}},
        "CommitDetail": {"allOf": [_ref("Commit"), {
            "type": "object", "required": ["files", "patch"],
            "properties": {"files": {"type": "array", "items": _ref("FileDiff")},
                           "patch": {"type": "string"}}}]},
        "SearchResults": {
            "type": "object", "required": ["query", "total", "results"],
            "properties": {
                "query": {"type": "string"}, "total": {"type": "integer"},
                "results": {"type": "array", "items": {
                    "type": "object",
                    "properties": {
                        "path": {"type": "string"}, "kind": {"type": ["string", "null"]},
                        "scope": {"type": ["string", "null"]},
                        "date": {"type": ["string", "null"]}, "score": {"type": "number"},
                        "changed": {"type": "string", "format": "date-time",
                                    "description": "the file's last commit (git), or when "
                                                   "an uncommitted change was seen"},
                        "snippet": {"type": "string"},
                        "highlights": {"type": "array", "items": {
                            "type": "array", "items": {"type": "integer"}},
                            "description": "[start, end) offsets into the snippet"},
                        "entry_id": {"type": ["string", "null"]}}}}}},
    }


def build_spec() -> dict:
    """The OpenAPI document for this workspace (tools depend on the layout)."""
    layout = get_store().layout.key
    tools = sorted(tools_for(layout), key=lambda t: t.name)
    tool_names = sorted({t.name for t in tools})
    tool_schemas = [{"title": t.name, **t.input_schema} for t in tools]
    responses = {f"E{s}": _json(_ref("StaleError" if s == 412 else "Error"), text)
                 for s, text in ERROR_TEXTS.items()}
    responses["E401"]["headers"] = {"WWW-Authenticate": {"schema": {"type": "string"},
                                                         "description": "Bearer"}}
    responses["DaguError"] = _json(_ref("DaguError"), "Dagu's error body {code, message}")
    empty = {"description": "Done (empty body, as Dagu answers)"}
    dagu_security = [{"bearer": []}]
    text_body = {"required": True, "content": {
        "text/markdown": {"schema": {"type": "string"}},
        "text/plain": {"schema": {"type": "string"}}}}

    paths = {
        "/api/v1/tools": {"get": {
            "operationId": "listTools", "tags": ["tools"],
            "summary": "The memory tools this workspace offers",
            "description": "Anthropic shape by default; `format=openai` gives OpenAI "
                           "function items.",
            "parameters": [_param("format", "query",
                                  {"type": "string", "enum": ["anthropic", "openai"],
                                   "default": "anthropic"}, "Tool definition shape.")],
            "responses": {"200": _json({"type": "object", "required": ["tools"], "properties": {
                "tools": {"type": "array", "items": {"oneOf": [
                    _ref("AnthropicTool"), _ref("OpenAITool")]}}}}, "Tool definitions"),
                **_err(400, 401)}}},
        "/api/v1/agents/{scope}/tools/{tool}": {"post": {
            "operationId": "callTool", "tags": ["tools"],
            "summary": "Run a memory tool for a scope",
            "description": "The body is the tool's arguments. A scope token may act only "
                           "for its own scope; world and global writes need the grants. "
                           "`memory` with `command` is Anthropic's tool, with `action` "
                           "Duragent's.",
            "parameters": [SCOPE, _param("tool", "path", _ref("ToolName"), "Tool name.")],
            "requestBody": {"required": False, "content": {
                "application/json": {"schema": _ref("ToolArguments")}}},
            "responses": {"200": _json(_ref("ToolResult"), "The framework's result text"),
                          **_err(400, 401, 403, 404, 409, 413)}}},
        "/api/v1/settings/agent/memory": {
            "get": {"operationId": "getAgentMemory", "tags": ["dagu"],
                    "summary": "Dagu: global memory and the DAGs that have memory",
                    "security": dagu_security,
                    "responses": {"200": _json(_ref("AgentMemoryResponse"), "Memory"),
                                  **_dagu_err(401, 403, 404)}},
            "put": {"operationId": "updateAgentMemory", "tags": ["dagu"],
                    "summary": "Dagu: replace the global memory (one commit)",
                    "security": dagu_security,
                    "requestBody": {"required": True, "content": {"application/json": {
                        "schema": _ref("UpdateAgentMemoryRequest")}}},
                    "responses": {"200": empty, **_dagu_err(400, 401, 403, 404, 413)}},
            "delete": {"operationId": "deleteAgentMemory", "tags": ["dagu"],
                       "summary": "Dagu: delete the global memory (idempotent)",
                       "security": dagu_security,
                       "responses": {"200": empty, **_dagu_err(401, 403, 404)}}},
        "/api/v1/settings/agent/memory/dags/{dagName}": {
            "parameters": [DAG_NAME],
            "get": {"operationId": "getAgentDAGMemory", "tags": ["dagu"],
                    "summary": "Dagu: one DAG's memory ('' when it has none)",
                    "security": dagu_security,
                    "responses": {"200": _json(_ref("AgentDAGMemoryResponse"), "Memory"),
                                  **_dagu_err(400, 401, 403, 404)}},
            "put": {"operationId": "updateAgentDAGMemory", "tags": ["dagu"],
                    "summary": "Dagu: create or replace a DAG's memory (one commit)",
                    "security": dagu_security,
                    "requestBody": {"required": True, "content": {"application/json": {
                        "schema": _ref("UpdateAgentMemoryRequest")}}},
                    "responses": {"200": empty, **_dagu_err(400, 401, 403, 404, 413)}},
            "delete": {"operationId": "deleteAgentDAGMemory", "tags": ["dagu"],
                       "summary": "Dagu: delete a DAG's memory (idempotent)",
                       "security": dagu_security,
                       "responses": {"200": empty, **_dagu_err(400, 401, 403, 404)}}},
        "/api/v1/files": {"get": {
            "operationId": "listFiles", "tags": ["files"],
            "summary": "Files below a folder with size and sha256",
            "parameters": [_param("prefix", "query", {"type": "string"},
                                  "A folder, e.g. agents/ops-bot (default: everything).")],
            "responses": {"200": _json(_ref("FileList"), "Files the token may read"),
                          **_err(400, 401)}}},
        "/api/v1/files/{path}": {
            "parameters": [FILE_PATH],
            "get": {"operationId": "getFile", "tags": ["files"],
                    "summary": "A file's text, with its ETag",
                    "parameters": [_param("If-None-Match", "header", {"type": "string"},
                                          "304 when the ETag still matches.")],
                    "responses": {
                        "200": {"description": "The raw text",
                                "headers": {"ETag": ETAG_HEADER},
                                "content": {"text/markdown": {"schema": {"type": "string"}},
                                            "text/plain": {"schema": {"type": "string"}}}},
                        "304": {"description": "Not modified"},
                        **_err(400, 401, 403, 404)}},
            "put": {"operationId": "putFile", "tags": ["files"],
                    "summary": "Create or replace a file (one commit)",
                    "description": "The body is the raw UTF-8 text. Replacing an existing "
                                   "file needs `If-Match`; `If-None-Match: *` creates only.",
                    "parameters": [
                        _param("If-Match", "header", {"type": "string"},
                               "The ETag you loaded; required when the file exists."),
                        _param("If-None-Match", "header", {"type": "string"},
                               "`*`: fail with 412 if the file exists."),
                        _param("X-Memoryui-Message", "header", {"type": "string"},
                               "Commit message (default: tool and path).")],
                    "requestBody": text_body,
                    "responses": {
                        "200": {**_json(_ref("WriteResult"), "Replaced"),
                                "headers": {"ETag": ETAG_HEADER}},
                        "201": {**_json(_ref("WriteResult"), "Created"),
                                "headers": {"ETag": ETAG_HEADER}},
                        **_err(400, 401, 403, 412, 413, 415, 428)}},
            "delete": {"operationId": "deleteFile", "tags": ["files"],
                       "summary": "Delete a file (one commit)",
                       "parameters": [_param("If-Match", "header", {"type": "string"},
                                             "The ETag you loaded.", required=True)],
                       "responses": {"200": _json(_ref("DeleteResult"), "Deleted"),
                                     **_err(400, 401, 403, 404, 412, 428)}}},
        "/api/v1/history": {"get": {
            "operationId": "history", "tags": ["audit"],
            "summary": "Commits newest first, with filters",
            "parameters": [
                _param("path", "query", {"type": "string"}, "One file's history."),
                _param("actor", "query", {"type": "string"},
                       "agent:NAME / user:NAME (trailer) or a git author name."),
                _param("scope", "query", {"type": "string"}, "Only this scope's files."),
                _param("kind", "query", {"type": "string", "enum": [
                    "world", "global", "memory", "daily", "note", "scratchpad", "skill",
                    "directive"]}, "Only files of this kind."),
                _param("since", "query", {"type": "string"}, "YYYY-MM-DD or ISO 8601."),
                _param("until", "query", {"type": "string"}, "YYYY-MM-DD or ISO 8601."),
                _param("limit", "query", {"type": "integer", "minimum": 1, "maximum": 500,
                                          "default": 50}, "Page size."),
                _param("offset", "query", {"type": "integer", "minimum": 0, "default": 0},
                       "Commits to skip.")],
            "responses": {"200": _json(_ref("History"), "Commits"),
                          **_err(400, 401, 403)}}},
        "/api/v1/commits/{sha}": {"get": {
            "operationId": "getCommit", "tags": ["audit"],
            "summary": "One commit with its diff (files, hunks, patch text)",
            "parameters": [_param("sha", "path", {"type": "string",
                                                  "pattern": "^[0-9a-fA-F]{7,40}$"},
                                  "Commit id: 7 to 40 hex digits (a prefix several "
                                  "commits share is a 400).")],
            "responses": {"200": _json(_ref("CommitDetail"), "The commit"),
                          **_err(400, 401, 403, 404)}}},
        "/api/v1/search": {"get": {
            "operationId": "search", "tags": ["search"],
            "summary": "Ranked full-text search with highlighted snippets",
            "parameters": [
                _param("q", "query", {"type": "string"},
                       'Search terms: words, "phrases", prefix*, OR, AND, NOT / -word, '
                       "( ), name:/title:/body:/path:. Words match exactly as typed.",
                       required=True),
                _param("scope", "query", {"type": "string"}, "Only this scope."),
                _param("kind", "query", {"type": "string"}, "Only this kind."),
                _param("since", "query", {"type": "string", "format": "date"},
                       "From this date (YYYY-MM-DD, 1900-01-01 to 2999-12-31): a daily log's "
                       "date, for other files the day of their last change."),
                _param("until", "query", {"type": "string", "format": "date"},
                       "Until this date (YYYY-MM-DD, 1900-01-01 to 2999-12-31)."),
                _param("limit", "query", {"type": "integer", "minimum": 1, "maximum": 100,
                                          "default": 20}, "Hits to return.")],
            "responses": {"200": _json(_ref("SearchResults"), "Hits"),
                          **_err(400, 401, 403)}}},
        "/api/v1/openapi.json": {"get": {
            "operationId": "openapi", "tags": ["meta"], "security": [],
            "summary": "This document",
            "responses": {"200": _json({"type": "object"}, "OpenAPI 3.1")}}},
        "/mcp": {
            "post": {"operationId": "mcp", "tags": ["mcp"],
                     "summary": "MCP over streamable HTTP: the same tools for the token's scope",
                     "description": "JSON-RPC 2.0 messages (initialize, tools/list, "
                                    "tools/call) per the MCP streamable HTTP transport.",
                     "requestBody": {"required": True, "content": {"application/json": {
                         "schema": {"type": "object"}}}},
                     "responses": {
                         "200": {"description": "JSON-RPC response or an SSE stream",
                                 "content": {"application/json": {"schema": {"type": "object"}},
                                             "text/event-stream": {
                                                 "schema": {"type": "string"}}}},
                         **_err(401)}},
            "get": {"operationId": "mcpStream", "tags": ["mcp"],
                    "summary": "MCP server-to-client SSE stream",
                    "responses": {"200": {"description": "SSE stream", "content": {
                        "text/event-stream": {"schema": {"type": "string"}}}},
                        "405": {"description": "No standalone stream offered"},
                        **_err(401)}}},
    }
    _server_errors(paths)
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
        "tags": [{"name": n} for n in ("tools", "dagu", "files", "audit", "search", "mcp",
                                       "meta")],
        "paths": paths,
        "components": {
            "securitySchemes": {"bearer": {
                "type": "http", "scheme": "bearer",
                "description": "A token from `manage.py token create` or the tokens page: "
                               "bound to one scope (optional world/global grants) or admin."}},
            "schemas": _schemas(tool_names, tool_schemas),
            "responses": responses,
        },
    }


WRITES = {"post", "put", "delete"}


def _server_errors(paths: dict) -> None:
    """Every operation may answer 500; every write 507 when the disk is full."""
    for path, item in paths.items():
        if path == "/api/v1/openapi.json":
            continue
        for method, op in item.items():
            if method not in ("get", "put", "post", "delete"):
                continue
            dagu = "/settings/agent/memory" in path
            statuses = (500, 507) if method in WRITES and path != "/mcp" else (500,)
            for status in statuses:
                op["responses"].setdefault(
                    str(status), _dagu_err(status)[str(status)] if dagu else _err(status)[
                        str(status)])


@api_view("GET")
def openapi_json(request: HttpRequest) -> HttpResponse:
    """Public: the description of the API carries no workspace data."""
    return json_response(build_spec())
