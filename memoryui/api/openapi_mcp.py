"""`/mcp` in the OpenAPI document: JSON-RPC 2.0 over MCP's streamable HTTP transport.

Which scope a call acts for, the guards before the SDK (`memoryui.api.mcp`) and the SDK's
own answers (JSON-RPC errors for a body that is not a JSON-RPC message, 406 for an
`Accept` without application/json) are all stated here.
"""

from __future__ import annotations

from memoryui.api import openapi_params as rules
from memoryui.api.openapi_schemas import err, json_body, param, ref

_ID = {"type": ["string", "integer"]}
# The SDK reads `"params": null` as params left out.
_PARAMS = {"type": ["object", "null"]}

MCP_SCHEMAS: dict = {
    "JSONRPCMessage": {
        "description": "One JSON-RPC 2.0 message: a request (with `id`, answered with "
                       "200), a notification or a response (answered with 202).",
        "anyOf": [
            {"title": "request", "type": "object", "required": ["jsonrpc", "id", "method"],
             "properties": {"jsonrpc": {"const": "2.0"}, "id": _ID,
                            "method": {"type": "string"}, "params": _PARAMS}},
            {"title": "notification", "type": "object", "required": ["jsonrpc", "method"],
             "properties": {"jsonrpc": {"const": "2.0"}, "method": {"type": "string"},
                            "params": _PARAMS}},
            {"title": "result", "type": "object", "required": ["jsonrpc", "id", "result"],
             "properties": {"jsonrpc": {"const": "2.0"}, "id": _ID,
                            "result": {"type": "object"}}},
            {"title": "error", "type": "object", "required": ["jsonrpc", "id", "error"],
             "properties": {"jsonrpc": {"const": "2.0"},
                            "id": {"type": ["string", "integer", "null"]},
                            "error": ref("JSONRPCErrorObject")}}]},
    "JSONRPCErrorObject": {
        "type": "object", "required": ["code", "message"],
        "properties": {"code": {"type": ["integer", "boolean"],
                                "description": "An integer (the SDK reads a boolean as 0 "
                                               "or 1)."},
                       "message": {"type": "string"}, "data": {}}},
    "JSONRPCResponse": {
        "type": "object", "required": ["jsonrpc", "id"],
        "properties": {"jsonrpc": {"const": "2.0"}, "id": {"type": ["string", "integer"]},
                       "result": {"type": "object"}, "error": ref("JSONRPCErrorObject")}},
    "JSONRPCError": {
        "type": "object", "required": ["jsonrpc", "id", "error"],
        "properties": {"jsonrpc": {"const": "2.0"},
                       "id": {"type": ["string", "integer", "null"]},
                       "error": ref("JSONRPCErrorObject")}},
}


def mcp_paths() -> dict:
    scope = param("scope", "query", {"type": "string", "pattern": rules.SCOPE_PATTERN},
                  "The scope the call acts for. An admin token must name it (here or in "
                  "an `X-Memoryui-Scope` header that agrees; 400 otherwise); a scope token "
                  "may leave it out and acts for its own scope (naming another is a 403).",
                  required=True)
    return {"/mcp": {"post": {
        "operationId": "mcp", "tags": ["mcp"],
        "summary": "MCP over streamable HTTP: the same tools for one scope",
        "description": "JSON-RPC 2.0 messages (initialize, tools/list, tools/call) per the "
                       "MCP streamable HTTP transport, stateless: every request stands "
                       "alone and answers in JSON. `Accept` must allow application/json. "
                       "Other methods answer 405: there is no server-to-client stream "
                       "and no session to delete. A tool's failure is a result with "
                       "`isError: true`, as MCP has it.",
        "parameters": [scope],
        "requestBody": {"required": True, "content": {"application/json": {
            "schema": ref("JSONRPCMessage")}}},
        "responses": {
            "200": json_body(ref("JSONRPCResponse"), "The JSON-RPC response (a failed "
                             "call is a JSON-RPC error in it)"),
            "202": {"description": "A notification or a response: accepted, no body"},
            "400": json_body({"anyOf": [ref("Error"), ref("JSONRPCError")]},
                             "Not a JSON-RPC 2.0 message (a JSON-RPC error), or the scope is "
                             "missing, invalid, or named twice differently"),
            "403": {"$ref": "#/components/responses/E403"},
            "406": json_body(ref("JSONRPCError"), "`Accept` does not allow "
                             "application/json"),
            **err(401, 413, 415, 421, 500),
            "503": json_body(ref("Error"), "Served without the ASGI lifespan the MCP "
                             "endpoint needs (use `memoryui serve`)"),
            "507": {"$ref": "#/components/responses/E507"}}}}}
