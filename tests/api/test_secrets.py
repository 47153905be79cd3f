"""A blocked agent write, in each framework's own error shape: kind and line named, the value
never echoed, nothing written, no commit. Admin-token writes (Dagu) count as agents'."""

from __future__ import annotations

import json
import re
import subprocess

import pytest

from memoryui.secrets.guard import refusal  # noqa: F401 (the one text, tested in tests/secrets)
from tests.api.test_mcp import Server, server, session, text_of  # noqa: F401 (fixture)
from tests.secrets.samples import AWS, GITHUB, STRIPE

REFUSED = re.compile(r"Refused: the text contains a secret \(([A-Za-z ]+)\) on line (\d+)\. "
                     r"Nothing was written\.")


@pytest.fixture
def layout(request, workspace, settings):
    from memoryui.workspace import get_store, reset_store

    reset_store()
    settings.MEMORYUI_LAYOUT = request.param
    store = get_store()
    yield store
    reset_store()


def call(client, token: str, scope: str, tool: str, body: dict):
    return client.post(f"/api/v1/agents/{scope}/tools/{tool}", data=json.dumps(body).encode(),
                       content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {token}")


def snapshot(store) -> tuple[list[str], str | None]:
    store.flush()
    return store.list_files(), store.head()


def refused(resp, kind: str, secret: str) -> int:
    """The error envelope's message: kind named, value absent; returns the line."""
    assert resp.status_code == 422, resp.content
    assert secret.encode() not in resp.content
    err = resp.json()["error"]
    assert err["code"] == "secret_found"
    m = REFUSED.fullmatch(err["message"])
    assert m and m.group(1) == kind, err["message"]
    return int(m.group(2))


@pytest.mark.parametrize("layout,tool,body,kind,secret", [
    ("duragent", "remember", {"content": f"Deployed.\nCI key: {AWS}"}, "AWS Access Key", AWS),
    ("duragent", "memory", {"command": "create", "path": "/memories/keys.md",
                            "file_text": f"# Keys\n{GITHUB}\n"}, "GitHub Token", GITHUB),
    ("zerostack", "memory_write", {"target": "daily", "content": f"paid with {STRIPE}"},
     "Stripe Access Key", STRIPE),
    ("jutul", "remember", {"title": "CI access", "content": f"The key is {AWS}."},
     "AWS Access Key", AWS),
], indirect=["layout"])
def test_each_framework_refuses_an_agent_write_with_a_secret(client, layout, make_token, tool,
                                                             body, kind, secret):
    token = make_token("ops-bot")
    before = snapshot(layout)
    line = refused(call(client, token, "ops-bot", tool, body), kind, secret)
    assert line >= 1
    assert snapshot(layout) == before  # no file, no commit
    if tool == "memory":
        assert line == 2


@pytest.mark.parametrize("layout", ["dagu"], indirect=True)
def test_dagu_rest_refuses_with_its_own_error_body(client, layout, make_token):
    admin = {"HTTP_AUTHORIZATION": f"Bearer {make_token(admin=True)}"}
    before = snapshot(layout)
    resp = client.put("/api/v1/settings/agent/memory",
                      json.dumps({"content": f"# Global\n\n- deploy key {AWS}\n"}).encode(),
                      content_type="application/json", **admin)
    assert resp.status_code == 422
    assert resp.json() == {"code": "secret_found", "message": (
        "Refused: the text contains a secret (AWS Access Key) on line 3. Nothing was written.")}
    assert snapshot(layout) == before


@pytest.mark.parametrize("layout", ["duragent"], indirect=True)
def test_files_api_refuses_as_json_and_allows_a_pragma_line(client, layout, make_token):
    token = make_token("ops-bot")
    path = "agents/ops-bot/memory/MEMORY.md"
    before = snapshot(layout)
    resp = client.put(f"/api/v1/files/{path}", f"# Memory\n\nstripe {STRIPE}\n".encode(),
                      content_type="text/markdown", HTTP_AUTHORIZATION=f"Bearer {token}")
    assert refused(resp, "Stripe Access Key", STRIPE) == 3
    assert snapshot(layout) == before
    ok = client.put(f"/api/v1/files/{path}",
                    f"# Memory\n\nexample {STRIPE}  <!-- memoryui: allow-secret -->\n".encode(),
                    content_type="text/markdown", HTTP_AUTHORIZATION=f"Bearer {token}")
    assert ok.status_code == 201, ok.content
    assert layout.secrets.flagged() == {}


@pytest.mark.parametrize("layout", ["duragent"], indirect=True)
def test_flag_mode_commits_and_records(client, layout, make_token, settings):
    layout.secrets.mode = "flag"
    resp = call(client, make_token("ops-bot"), "ops-bot", "remember",
                {"content": f"the key: {AWS}"})
    assert resp.status_code == 200, resp.content
    [(path, findings)] = layout.secrets.flagged().items()
    assert path.startswith("agents/ops-bot/memory/daily/")
    assert [f.kind for f in findings] == ["AWS Access Key"]
    assert AWS in layout.read(path)


def test_mcp_tool_error_names_the_secret_and_writes_nothing(server: Server) -> None:  # noqa: F811
    async def flow(c) -> tuple:
        return await text_of(c, "memory", {"command": "create", "path": "/memories/ci.md",
                                           "file_text": f"# CI\n\nkey {AWS}\n"})

    def head() -> str:
        return subprocess.run(["git", "rev-parse", "-q", "--verify", "HEAD"], cwd=server.workspace,
                              capture_output=True, text=True).stdout

    before = head()
    text, is_error = session(server.url, server.ops)(flow)
    assert is_error is True
    assert text == ("Refused: the text contains a secret (AWS Access Key) on line 3. "
                    "Nothing was written.")
    assert not (server.workspace / "agents/ops-bot/memory/ci.md").exists()
    assert not list(server.workspace.rglob("ci.md"))
    assert head() == before
