"""Hostile and broken requests: oversized bodies (with and without Content-Length), invalid
UTF-8, bad JSON, wrong types, unknown fields and tools, path traversal. Each gets a clear
4xx, never a 500, and nothing is written (least of all outside the workspace)."""

from __future__ import annotations

import json

import pytest

from memoryui.store import Actor
from tests.api.realserver import RealServer

MIB = 1024 * 1024
REMEMBER = "/api/v1/agents/ops-bot/tools/remember"


@pytest.fixture
def token(make_token) -> str:
    return make_token("ops-bot")


@pytest.fixture
def admin(make_token) -> str:
    return make_token(admin=True)


def post(client, url: str, data: bytes, token: str, ctype: str = "application/json"):
    return client.post(url, data, content_type=ctype, HTTP_AUTHORIZATION=f"Bearer {token}")


def err(resp) -> dict:
    return resp.json()["error"]


def test_body_over_1_mib_is_413_before_parsing(client, workspace, token):
    body = json.dumps({"content": "x" * MIB}).encode()
    resp = post(client, REMEMBER, body, token)
    assert resp.status_code == 413
    assert err(resp)["code"] == "payload_too_large"
    assert workspace.list_files() == []


def test_body_of_exactly_the_limit_is_not_refused_for_size(client, workspace, token, settings):
    settings.MEMORYUI_MAX_BODY = 64
    body = json.dumps({"content": "y" * (64 - 15)}).encode()
    assert len(body) == 64
    assert post(client, REMEMBER, body, token).status_code == 200
    over = json.dumps({"content": "y" * (64 - 14)}).encode()
    assert post(client, REMEMBER, over, token).status_code == 413


def test_files_put_over_1_mib_is_413(client, workspace, admin):
    resp = client.put("/api/v1/files/agents/ops-bot/memory/big.md", b"z" * (MIB + 1),
                      content_type="text/markdown", HTTP_AUTHORIZATION=f"Bearer {admin}")
    assert resp.status_code == 413
    assert workspace.list_files() == []


def test_invalid_utf8_is_400(client, workspace, token):
    resp = post(client, REMEMBER, b'{"content": "caf\xe9"}', token)
    assert resp.status_code == 400
    assert err(resp)["code"] == "invalid_arguments"
    assert "UTF-8" in err(resp)["message"]


@pytest.mark.parametrize("body,fragment", [
    (b'{"content": ', "line 1 column"),
    (b'{"content": "a",}', "line 1 column"),
    (b'{"content": NaN}', "NaN"),
    (b"[" * 100000 + b"]" * 100000, "invalid JSON"),
])
def test_bad_json_is_400_saying_where(client, workspace, token, body, fragment):
    resp = post(client, REMEMBER, body, token)
    assert resp.status_code == 400
    assert fragment in err(resp)["message"]
    assert workspace.list_files() == []


@pytest.mark.parametrize("body", [b"[]", b'"text"', b"42", b"null", b"true"])
def test_non_object_json_is_400(client, workspace, token, body):
    resp = post(client, REMEMBER, body, token)
    assert resp.status_code == 400
    assert "JSON object" in err(resp)["message"]


@pytest.mark.parametrize("args,fragment", [
    ({"content": 5}, "content"),
    ({"content": ["a"]}, "content"),
    ({"content": None}, "content"),
])
def test_wrong_types_are_400(client, workspace, token, args, fragment):
    resp = post(client, REMEMBER, json.dumps(args).encode(), token)
    assert resp.status_code == 400
    assert err(resp)["code"] == "invalid_arguments"
    assert fragment in err(resp)["message"]
    assert workspace.list_files() == []


def test_recall_days_of_the_wrong_type_is_400(client, workspace, token):
    resp = post(client, "/api/v1/agents/ops-bot/tools/recall", b'{"days": "3"}', token)
    assert resp.status_code == 400
    assert "days" in err(resp)["message"]


def test_unknown_fields_are_400(client, workspace, token):
    resp = post(client, REMEMBER, b'{"content": "x", "mood": "happy"}', token)
    assert resp.status_code == 400
    assert "mood" in err(resp)["message"]
    assert workspace.list_files() == []


def test_unknown_tool_is_404(client, workspace, token):
    resp = post(client, "/api/v1/agents/ops-bot/tools/rm_rf", b"{}", token)
    assert resp.status_code == 404
    assert err(resp)["code"] == "not_found"


TRAVERSALS = [
    "../outside.md",
    "agents/../../outside.md",
    "%2e%2e/outside.md",
    "agents/%2e%2e/%2e%2e/outside.md",
    "/etc/passwd",
    "agents\\..\\..\\outside.md",
    ".git/config",
    "agents/ops-bot/.hidden.md",
    "agents/ops-bot/memory/a%00b.md",
]


@pytest.mark.parametrize("path", TRAVERSALS)
def test_path_traversal_in_files_api_is_400_and_writes_nothing(client, workspace, admin,
                                                               tmp_path, path):
    outside = tmp_path / "outside.md"
    git_config = (workspace.root / ".git" / "config").read_bytes()
    auth = {"HTTP_AUTHORIZATION": f"Bearer {admin}"}
    put = client.put(f"/api/v1/files/{path}", b"pwned\n", content_type="text/markdown", **auth)
    assert put.status_code == 400, put.content
    assert put.json()["error"]["code"] == "invalid_arguments"
    assert client.get(f"/api/v1/files/{path}", **auth).status_code == 400
    delete = client.delete(f"/api/v1/files/{path}", HTTP_IF_MATCH='"x"', **auth)
    assert delete.status_code == 400
    assert not outside.exists()
    assert not any(p.name == "outside.md" for p in tmp_path.rglob("*"))
    assert (workspace.root / ".git" / "config").read_bytes() == git_config
    assert workspace.list_files() == []


def test_writes_through_a_symlink_are_refused(client, workspace, admin, tmp_path):
    target = tmp_path / "elsewhere"
    target.mkdir()
    (workspace.root / "agents").mkdir()
    (workspace.root / "agents" / "ops-bot").symlink_to(target)
    resp = client.put("/api/v1/files/agents/ops-bot/MEMORY.md", b"pwned\n",
                      content_type="text/markdown", HTTP_AUTHORIZATION=f"Bearer {admin}")
    assert resp.status_code == 400
    assert "symbolic link" in resp.json()["error"]["message"]
    assert list(target.iterdir()) == []


def test_dagu_body_over_the_limit_is_413(client, workspace, admin):
    body = json.dumps({"content": "d" * MIB}).encode()
    resp = client.put("/api/v1/settings/agent/memory", body, content_type="application/json",
                      HTTP_AUTHORIZATION=f"Bearer {admin}")
    assert resp.status_code == 413
    assert not workspace.exists("memory/MEMORY.md")


def test_content_over_the_framework_cap_is_a_clear_413(client, workspace, token):
    """Duragent has no cap of its own; memoryui refuses huge entries with a clear 413."""
    resp = post(client, REMEMBER, json.dumps({"content": "c" * (900 * 1024)}).encode(), token)
    assert resp.status_code == 413
    assert err(resp)["code"] == "payload_too_large"
    assert workspace.list_files() == []


def test_existing_file_untouched_by_refused_requests(client, workspace, admin):
    workspace.write("agents/ops-bot/memory/MEMORY.md", "keep\n", actor=Actor.agent("ops-bot"),
                    tool="reflect")
    resp = client.put("/api/v1/files/agents/ops-bot/memory/MEMORY.md", b"\xff",
                      content_type="text/markdown", HTTP_IF_MATCH='"x"',
                      HTTP_AUTHORIZATION=f"Bearer {admin}")
    assert resp.status_code == 400
    assert workspace.read("agents/ops-bot/memory/MEMORY.md") == "keep\n"


def test_chunked_body_without_content_length_is_capped_by_the_real_server(tmp_path):
    """The middleware can only judge Content-Length; the view caps chunked bodies itself."""
    server = RealServer(tmp_path, workers=1)
    server.migrate()
    tok = server.token("ops-bot")
    with server:
        server.start()
        conn = server.connection()
        conn.putrequest("POST", REMEMBER)
        conn.putheader("Authorization", f"Bearer {tok}")
        conn.putheader("Content-Type", "application/json")
        conn.putheader("Transfer-Encoding", "chunked")
        conn.endheaders()
        chunk = b'{"content": "' + b"q" * (64 * 1024)
        for part in [chunk] + [b"q" * (64 * 1024)] * 20 + [b'"}']:
            conn.send(f"{len(part):x}\r\n".encode() + part + b"\r\n")
        conn.send(b"0\r\n\r\n")
        resp = conn.getresponse()
        body = json.loads(resp.read())
        assert resp.status == 413
        assert body["error"]["code"] == "payload_too_large"
        conn.close()
        # A small chunked body works (the stream is read, not the header).
        conn = server.connection()
        conn.request("POST", REMEMBER, body=iter([b'{"content": ', b'"chunked ok"}']),
                     headers={"Authorization": f"Bearer {tok}",
                              "Content-Type": "application/json"},
                     encode_chunked=True)
        ok = conn.getresponse()
        assert ok.status == 200, ok.read()
        assert json.loads(ok.read())["result"].startswith("Remembered.")
        conn.close()
    daily = list((server.workspace / "agents" / "ops-bot" / "memory" / "daily").glob("*.md"))
    assert len(daily) == 1
    text = daily[0].read_text()
    assert "chunked ok" in text and "qqqq" not in text
