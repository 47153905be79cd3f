"""The OpenAPI document is valid 3.1 and describes every endpoint the API serves."""

from __future__ import annotations

import pytest
from jsonschema import Draft202012Validator
from openapi_spec_validator import validate

from memoryui.store.names import InvalidName, validate_relpath

EXPECTED = {
    "/api/v1/tools": {"get"},
    "/api/v1/agents/{scope}/tools/remember": {"post"},
    "/api/v1/settings/agent/memory": {"get", "put", "delete"},
    "/api/v1/settings/agent/memory/dags/{dagName}": {"get", "put", "delete"},
    "/api/v1/files": {"get"},
    "/api/v1/files/{path}": {"get", "put", "delete"},
    "/api/v1/history": {"get"},
    "/api/v1/commits/{sha}": {"get"},
    "/api/v1/search": {"get"},
    "/api/v1/openapi.json": {"get"},
    "/mcp": {"post"},
}
METHODS = {"get", "put", "post", "delete", "patch", "head", "options"}


@pytest.fixture
def spec(client, workspace) -> dict:
    resp = client.get("/api/v1/openapi.json")  # public: no token needed
    assert resp.status_code == 200
    assert resp["Content-Type"] == "application/json"
    return resp.json()


def test_document_is_valid_openapi_31(spec):
    assert spec["openapi"].startswith("3.1")
    validate(spec)  # raises on any schema violation


def test_every_endpoint_and_method_is_described(spec):
    for path, methods in EXPECTED.items():
        assert path in spec["paths"], path
        described = set(spec["paths"][path]) & METHODS
        assert methods <= described, (path, described)


def test_every_operation_documents_its_errors(spec):
    for path, item in spec["paths"].items():
        for method, op in item.items():
            if method not in METHODS or path == "/api/v1/openapi.json":
                continue
            assert "401" in op["responses"], (path, method)
            assert any(code.startswith("2") for code in op["responses"]), (path, method)


def test_tool_names_match_the_tools_endpoint(client, spec, make_token):
    token = make_token("ops-bot")
    listed = client.get("/api/v1/tools", HTTP_AUTHORIZATION=f"Bearer {token}").json()["tools"]
    enum = spec["components"]["schemas"]["ToolName"]["enum"]
    assert sorted(enum) == sorted({t["name"] for t in listed})
    assert "remember" in enum


def test_each_tool_has_an_operation_with_its_own_schema(client, spec, make_token):
    token = make_token("ops-bot")
    listed = client.get("/api/v1/tools", HTTP_AUTHORIZATION=f"Bearer {token}").json()["tools"]
    for tool in listed:
        op = spec["paths"][f"/api/v1/agents/{{scope}}/tools/{tool['name']}"]["post"]
        schema = op["requestBody"]["content"]["application/json"]["schema"]
        assert tool["input_schema"] == schema or any(
            tool["input_schema"] in (alt, *alt.get("allOf", [])) for alt in schema["anyOf"])


def test_bearer_security_is_declared(spec):
    bearer = spec["components"]["securitySchemes"]["bearer"]
    assert (bearer["type"], bearer["scheme"]) == ("http", "bearer")
    assert spec["security"] == [{"bearer": []}]


PATHS = ["agents/ops-bot/memory/MEMORY.md", "world/runbook.md", "a", "9:x", "a:b/c:d",
         "notes/café ünïcode.md", "a b/c", "x\u0084y", "a/\x7f", "a\u200bb", "C:/x", "c:",
         "../x", "a/../b", ".hidden", "a/.b", " a", "a ", "a/ b", "a//b", "/a", "a/",
         "a\\b", "a\u3000b", "x\u0378y", "a\u2028b", "a\ue000b", 'a"b', "x" * 50]


@pytest.mark.parametrize("write", [False, True])
def test_path_patterns_state_the_rule_the_code_enforces(spec, write):
    """A path the document's pattern allows is one the code accepts, and the other way
    round (C0/C1 controls, format characters, drives, dot names, edges, '"' for writes)."""
    op = spec["paths"]["/api/v1/files/{path}"]["put" if write else "get"]
    schema = next(p["schema"] for p in op["parameters"] if p["name"] == "path")
    documented = Draft202012Validator(schema)
    for path in PATHS:
        try:
            validate_relpath(path, write=write)
            accepted = True
        except InvalidName:
            accepted = False
        assert documented.is_valid(path) == accepted, (path, write)


def test_prefix_pattern_refuses_what_the_listing_refuses(client, spec, make_token):
    """The documented example and pattern: what the listing accepts, and what it refuses."""
    schema = next(p["schema"] for p in spec["paths"]["/api/v1/files"]["get"]["parameters"]
                  if p["name"] == "prefix")
    token = make_token(admin=True)
    examples = [(example, True) for example in schema["examples"]]
    for prefix, ok in [*examples, ("/world/", True), ("", True), ("\u0084", False),
                       ("a\x1fb", False), ("../x", False)]:
        assert Draft202012Validator(schema).is_valid(prefix) == ok, prefix
        resp = client.get("/api/v1/files", {"prefix": prefix},
                          HTTP_AUTHORIZATION=f"Bearer {token}")
        assert (resp.status_code == 200) == ok, (prefix, resp.status_code)
