"""The components of the OpenAPI document: its schemas, the shared error answers, and the
helpers the paths are written with."""

from __future__ import annotations

ERROR_CODES = ["invalid_arguments", "unauthorized", "forbidden", "not_found", "conflict",
               "payload_too_large", "method_not_allowed", "precondition_failed",
               "precondition_required", "unsupported_media_type", "secret_found",
               "insufficient_storage", "unavailable", "invalid_host", "internal_error",
               "too_many_requests"]


WRITE_ID = {"type": ["string", "null"], "description":
            "The write's id: GET /api/v1/writes/{id} gives the commit that holds it once "
            "made; null when nothing changed."}


def ref(name: str) -> dict:
    return {"$ref": f"#/components/schemas/{name}"}


def json_body(schema: dict, description: str) -> dict:
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
    421: "The Host header names a host this server does not serve (ALLOWED_HOSTS)",
    422: "The text adds a secret and the secrets policy blocks it: nothing was written "
         "(the message names each kind and line, never the value)",
    428: "If-Match is required to change an existing file",
    500: "Unexpected server error (logged with its traceback on the server)",
    503: "Temporarily unavailable (the search index is locked or being rebuilt): retry",
    429: "Too many failed sign-ins from this address: retry after the Retry-After seconds",
    507: "The workspace disk is full: nothing was written, the old file is intact",
}


def _throttled(statuses: tuple[int, ...]) -> tuple[int, ...]:
    """An operation that checks a token can also answer 429: an address whose tokens keep
    failing is throttled (memoryui/throttle.py)."""
    return tuple(sorted({*statuses, 429})) if 401 in statuses else statuses


def err(*statuses: int) -> dict:
    """References to the shared `{"error": {...}}` answers."""
    return {str(s): {"$ref": f"#/components/responses/E{s}"} for s in _throttled(statuses)}


def dagu_err(*statuses: int) -> dict:
    """References to Dagu's own `{"code", "message"}` answer."""
    return {str(s): {"$ref": "#/components/responses/DaguError"} for s in _throttled(statuses)}


def param(name: str, where: str, schema: dict, description: str,
          required: bool = False) -> dict:
    return {"name": name, "in": where, "required": required or where == "path",
            "description": description, "schema": schema}


def responses() -> dict:
    """The shared answers: one per status, 412 with the stale file's text."""
    out = {f"E{s}": json_body(ref("StaleError" if s == 412 else "Error"), text)
           for s, text in ERROR_TEXTS.items()}
    out["E401"]["headers"] = {"WWW-Authenticate": {"schema": {"type": "string"},
                                                   "description": "Bearer"}}
    out["DaguError"] = json_body(ref("DaguError"), "Dagu's error body {code, message}")
    return out


def schemas(tool_names: list[str]) -> dict:
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
            "properties": {"content": {"type": "string", "pattern": "^[^\\x00]*$",
                                       "description": "The text (no NUL byte)."}}},
        "FileEntry": {
            "type": "object", "required": ["path", "size", "sha256", "kind", "scope"],
            "properties": {"path": {"type": "string"}, "size": {"type": "integer"},
                           "sha256": {"type": "string"},
                           "kind": {"type": ["string", "null"]},
                           "scope": {"type": ["string", "null"]}}},
        "FileList": {"type": "object", "required": ["prefix", "files"],
                     "properties": {"prefix": {"type": "string"},
                                    "files": {"type": "array", "items": ref("FileEntry")}}},
        "WriteResult": {
            "type": "object", "required": ["path", "sha256", "etag", "created", "changed"],
            "properties": {"path": {"type": "string"}, "sha256": {"type": "string"},
                           "etag": {"type": "string"}, "created": {"type": "boolean"},
                           "changed": {"type": "boolean"},
                           "commit": {"type": ["string", "null"], "description":
                                      "The commit, or null when it is grouped and made "
                                      "within a second."},
                           "write": WRITE_ID}},
        "DeleteResult": {
            "type": "object", "required": ["path", "deleted"],
            "properties": {"path": {"type": "string"}, "deleted": {"const": True},
                           "commit": {"type": ["string", "null"]}, "write": WRITE_ID}},
        "WriteCommit": {
            "type": "object", "required": ["write", "commit"],
            "properties": {"write": {"type": "string"},
                           "commit": {"type": ["string", "null"], "description":
                                      "The commit that holds the write; null until it is "
                                      "made."}}},
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
            "properties": {"commits": {"type": "array", "items": ref("Commit")},
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
                "too_large": {"type": "boolean", "description":
                              "Both versions together are over MEMORYUI_RENDER_LIMIT: not "
                              "diffed line by line (no hunks, nothing in the patch)"},
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
        "CommitDetail": {"allOf": [ref("Commit"), {
            "type": "object", "required": ["files", "patch"],
            "properties": {"files": {"type": "array", "items": ref("FileDiff")},
                           "patch": {"type": "string"}}}]},
        "SearchResults": {
            "type": "object", "required": ["query", "total", "results", "mode"],
            "properties": {
                "query": {"type": "string"}, "total": {"type": "integer"},
                "mode": {"type": "string", "enum": ["hybrid", "keyword"],
                         "description": "what ranked the hits: keywords and meaning "
                                        "together, or keywords alone"},
                "notice": {"type": "string",
                           "description": "why meaning did not help a hybrid search "
                                          "(present only then)"},
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
