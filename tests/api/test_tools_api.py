"""The agent tool API: discovery in both shapes, calls with the framework's exact texts,
attribution of every write to the calling agent, and the error envelope."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import jsonschema
import pytest

from memoryui.store import Kind


def call(client, token: str | None, scope: str, tool: str, body: object = None,
         raw: bytes | None = None):
    headers = {"HTTP_AUTHORIZATION": f"Bearer {token}"} if token else {}
    data = raw if raw is not None else (b"" if body is None else json.dumps(body).encode())
    return client.post(f"/api/v1/agents/{scope}/tools/{tool}", data=data,
                       content_type="application/json", **headers)


def auth(token: str) -> dict:
    return {"HTTP_AUTHORIZATION": f"Bearer {token}"}


@pytest.fixture
def own(make_token) -> str:
    return make_token("ops-bot")


def test_tools_are_listed_in_anthropic_shape(client, workspace, own):
    resp = client.get("/api/v1/tools", **auth(own))
    assert resp.status_code == 200
    tools = {t["name"]: t for t in resp.json()["tools"]}
    assert {"recall", "remember", "reflect", "update_world", "memory"} <= set(tools)
    remember = tools["remember"]
    assert set(remember) == {"name", "description", "input_schema"}
    assert remember["input_schema"]["type"] == "object"
    assert "content" in remember["input_schema"]["properties"]
    assert remember["description"]


def test_tools_are_listed_in_openai_shape(client, workspace, own):
    resp = client.get("/api/v1/tools?format=openai", **auth(own))
    assert resp.status_code == 200
    items = resp.json()["tools"]
    assert items and all(i["type"] == "function" for i in items)
    by_name = {i["function"]["name"]: i["function"] for i in items}
    assert by_name["recall"]["parameters"]["type"] == "object"
    anthropic = client.get("/api/v1/tools", **auth(own)).json()["tools"]
    assert sorted(by_name) == sorted(t["name"] for t in anthropic)


def test_unknown_format_is_a_400(client, workspace, own):
    resp = client.get("/api/v1/tools?format=gemini", **auth(own))
    assert resp.status_code == 400
    assert resp.json()["error"]["code"] == "invalid_arguments"
    assert "gemini" in resp.json()["error"]["message"]


def test_remember_writes_the_daily_entry_and_commits_as_the_agent(client, workspace, own):
    resp = call(client, own, "ops-bot", "remember", {"content": "Deploys happen on Tuesdays."})
    assert resp.status_code == 200, resp.content
    body = resp.json()
    assert body["tool"] == "remember"
    m = re.fullmatch(r"Remembered\. Written to (agents/ops-bot/memory/daily/"
                     r"(\d{4}-\d{2}-\d{2})\.md)", body["result"])
    assert m, body["result"]
    path, date = m.groups()
    text = workspace.read(path)
    assert text.startswith(f"# {date}\n\n## ")
    assert text.endswith("\n\nDeploys happen on Tuesdays.\n")
    [commit] = workspace.log(path)
    assert commit.author == "ops-bot"
    assert commit.email == "ops-bot@agents.memoryui"
    assert commit.actor == "agent:ops-bot"
    assert "remember" in commit.tools


def test_recall_returns_what_was_remembered(client, workspace, own):
    call(client, own, "ops-bot", "remember", {"content": "The staging DB is pg-2."})
    resp = call(client, own, "ops-bot", "recall")  # empty body: default arguments
    assert resp.status_code == 200
    result = resp.json()["result"]
    assert result.startswith("# Recent Experiences\n\n")
    assert "The staging DB is pg-2." in result


def test_recall_with_nothing_stored_says_so(client, workspace, own):
    resp = call(client, own, "ops-bot", "recall", {"days": 3})
    assert resp.json() == {"tool": "recall", "result": "No memories found"}


def test_action_based_memory_tool_dispatches_to_duragent(client, workspace, own):
    resp = call(client, own, "ops-bot", "memory", {"action": "remember", "content": "x1"})
    assert resp.status_code == 200
    assert resp.json()["result"].startswith("Remembered. Written to agents/ops-bot/")


def test_missing_argument_is_a_400_with_the_framework_text(client, workspace, own):
    resp = call(client, own, "ops-bot", "remember", {})
    assert resp.status_code == 400
    err = resp.json()["error"]
    assert err["code"] == "invalid_arguments"
    assert "content" in err["message"]
    assert workspace.list_files() == []


def test_unknown_tool_is_a_404_listing_the_offered_tools(client, workspace, own):
    resp = call(client, own, "ops-bot", "forget_everything", {})
    assert resp.status_code == 404
    err = resp.json()["error"]
    assert err["code"] == "not_found"
    assert "forget_everything" in err["message"] and "remember" in err["message"]


def test_world_write_needs_the_grant(client, workspace, make_token):
    plain, granted = make_token("ops-bot"), make_token("ops-bot", world=True)
    args = {"topic": "Networking", "content": "VPN is wg0."}
    denied = call(client, plain, "ops-bot", "update_world", args)
    assert denied.status_code == 403
    assert denied.json()["error"]["code"] == "forbidden"
    assert not workspace.exists("memory/world/networking.md")
    ok = call(client, granted, "ops-bot", "update_world", args)
    assert ok.status_code == 200, ok.content
    assert workspace.read("memory/world/networking.md") == "VPN is wg0."
    assert workspace.log("memory/world/networking.md")[0].author == "ops-bot"


def test_scope_token_cannot_act_for_another_scope(client, workspace, own):
    resp = call(client, own, "web-bot", "remember", {"content": "sneaky"})
    assert resp.status_code == 403
    assert resp.json()["error"]["code"] == "forbidden"
    assert "ops-bot" in resp.json()["error"]["message"]
    assert workspace.list_files() == []


def test_admin_token_acts_for_any_scope_as_that_agent(client, workspace, make_token):
    admin = make_token(admin=True)
    resp = call(client, admin, "web-bot", "remember", {"content": "from the orchestrator"})
    assert resp.status_code == 200
    path = resp.json()["result"].removeprefix("Remembered. Written to ")
    assert workspace.address_of(path).kind == Kind.DAILY
    assert workspace.log(path)[0].author == "web-bot"


def test_invalid_scope_name_is_a_400_for_admins(client, workspace, make_token):
    admin = make_token(admin=True)
    resp = call(client, admin, "bad.scope", "remember", {"content": "x"})
    assert resp.status_code == 400
    assert "scope" in resp.json()["error"]["message"]
    assert workspace.list_files() == []


def test_get_on_the_call_endpoint_is_405(client, workspace, own):
    resp = client.get("/api/v1/agents/ops-bot/tools/recall", **auth(own))
    assert resp.status_code == 405
    assert resp["Allow"] == "POST"
    assert resp.json()["error"]["code"] == "method_not_allowed"


def test_unknown_api_path_answers_json_404(client, workspace, own):
    resp = client.get("/api/v1/nope", **auth(own))
    assert resp.status_code == 404
    assert resp.json()["error"]["code"] == "not_found"


# -- attribution: the token trailer -----------------------------------------------

def trailer_values(ws: Path, path: str) -> list[str]:
    """`Memoryui-Token` of each commit touching `path`, newest first, as git prints it."""
    out = subprocess.run(
        ["git", "log", "--format=%(trailers:key=Memoryui-Token,valueonly,separator=%x2C)",
         "--", path], cwd=ws, capture_output=True, text=True, check=True).stdout
    return [line for line in out.splitlines() if line]


def test_tool_writes_carry_the_token_trailer_like_files_and_dagu_writes(
        client, workspace, own, make_token):
    admin = make_token(admin=True)
    resp = call(client, own, "ops-bot", "remember", {"content": "with a trailer"})
    daily = resp.json()["result"].removeprefix("Remembered. Written to ")
    call(client, own, "ops-bot", "reflect", {"content": "# Memory\n"})
    call(client, admin, "ops-bot", "memory", {"command": "create", "path": "/memories/a.md",
                                              "file_text": "one\n"})
    call(client, own, "ops-bot", "memory", {"command": "rename", "old_path": "/memories/a.md",
                                            "new_path": "/memories/b.md"})
    call(client, own, "ops-bot", "memory", {"command": "delete", "path": "/memories/b.md"})
    ws = workspace.root
    assert trailer_values(ws, daily) == [own[:12]]
    assert trailer_values(ws, "agents/ops-bot/memory/MEMORY.md") == [own[:12]]
    # create by the admin token acting for the agent; rename and delete by the scope token
    assert trailer_values(ws, "agents/ops-bot/memory/a.md") == [own[:12], admin[:12]]
    assert trailer_values(ws, "agents/ops-bot/memory/b.md") == [own[:12], own[:12]]
    assert {c.author for c in workspace.log(limit=20)} == {"ops-bot"}


# -- the duragent `memory` tool admits both forms ---------------------------

@pytest.mark.parametrize("fmt", ["anthropic", "openai"])
def test_a_client_validating_against_the_listing_can_use_both_forms(client, workspace, own,
                                                                     fmt):
    tools = client.get(f"/api/v1/tools?format={fmt}", **auth(own)).json()["tools"]
    if fmt == "openai":
        schema = next(t["function"]["parameters"] for t in tools
                      if t["function"]["name"] == "memory")
    else:
        schema = next(t["input_schema"] for t in tools if t["name"] == "memory")
    validator = jsonschema.Draft202012Validator(schema)
    forms = [{"action": "remember", "content": f"via {fmt}"},
             {"command": "create", "path": f"/memories/{fmt}.md", "file_text": "x\n"},
             {"command": "view", "path": "/memories", "view_range": [1, 2]}]
    for args in forms:
        assert not list(validator.iter_errors(args)), args  # what a strict client checks
        resp = call(client, own, "ops-bot", "memory", args)
        assert resp.status_code == 200, resp.content
    assert workspace.read(f"agents/ops-bot/memory/{fmt}.md") == "x\n"


def test_replies_carry_text_as_utf8_whatever_encoder_wrote_them(client, workspace, own):
    """An ASCII reply goes through JSON's faster ASCII encoder (the same bytes); text with
    other characters still comes back as UTF-8, never as \\u escapes."""
    for entry in ("deployed the api at 09:00", "déployé l'API à 09:00 — ✓"):
        assert call(client, own, "ops-bot", "remember", {"content": entry}).status_code == 200
        resp = call(client, own, "ops-bot", "recall", {"days": 1})
        assert resp.status_code == 200
        assert entry.encode() in resp.content and b"\\u" not in resp.content
        assert entry in json.dumps(resp.json(), ensure_ascii=False)
