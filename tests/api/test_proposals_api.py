"""Proposals over HTTP: agents' writes under `propose` (tools, files API, Dagu), read-only
tokens and the `read` policy refused, the inbox endpoints (list, show, approve, reject) with
their 409s, the edge cases (file deleted since, token revoked, policy changed) and the
webhook POSTed to a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import json
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from memoryui.models import Token
from memoryui.policies import set_policy
from memoryui.store import Actor
from tests.waiting import wait_for

MEM = "agents/ops-bot/memory/MEMORY.md"
WORLD = "memory/world/people.md"


def auth(token: str) -> dict:
    return {"HTTP_AUTHORIZATION": f"Bearer {token}"}


def tool(client, token: str, name: str, scope: str = "ops-bot", **args: object):
    return client.post(f"/api/v1/agents/{scope}/tools/{name}", data=json.dumps(args),
                       content_type="application/json", **auth(token))


def post(client, token: str, url: str, body: object = None):
    return client.post(url, data=json.dumps(body or {}), content_type="application/json",
                       **auth(token))


@pytest.fixture
def tokens(workspace, make_token) -> dict[str, str]:
    workspace.write(MEM, "# Me\n\n- likes tea\n", actor=Actor.user("lead"), tool="edit")
    set_policy("*", "memory", "propose")
    set_policy("*", "world", "propose")
    return {"ops": make_token("ops-bot", world=True), "qa": make_token("qa-bot", world=True),
            "admin": make_token(admin=True)}


def only_proposal(client, admin: str) -> dict:
    [p] = client.get("/api/v1/proposals", **auth(admin)).json()["proposals"]
    return p


def test_a_proposed_write_answers_as_the_framework_and_waits(client, workspace, tokens):
    ops, qa, admin = tokens["ops"], tokens["qa"], tokens["admin"]
    resp = tool(client, ops, "reflect", content="# Me\n\n- likes coffee\n")
    assert resp.json() == {"tool": "reflect", "result": f"Reflected. Updated {MEM}"}
    assert tool(client, ops, "reflect").json()["result"] == \
        "Current MEMORY.md:\n\n# Me\n\n- likes coffee\n"
    assert workspace.read(MEM) == "# Me\n\n- likes tea\n"
    assert tool(client, ops, "update_world", topic="people", content="Alice").status_code == 200
    assert "Alice" not in tool(client, qa, "recall", scope="qa-bot").json()["result"]
    assert client.get(f"/api/v1/files/{MEM}", **auth(admin)).content == b"# Me\n\n- likes tea\n"
    assert client.get(f"/api/v1/files/{MEM}", **auth(ops)).content == \
        b"# Me\n\n- likes coffee\n"
    listed = client.get("/api/v1/proposals", **auth(admin)).json()
    assert listed["open"] == 2 and {p["path"] for p in listed["proposals"]} == {MEM, WORLD}
    # a scope token sees its own scope's proposals, never another's
    assert len(client.get("/api/v1/proposals", **auth(ops)).json()["proposals"]) == 2
    assert client.get("/api/v1/proposals", **auth(qa)).json()["proposals"] == []
    pid = next(p["id"] for p in listed["proposals"] if p["path"] == MEM)
    assert client.get(f"/api/v1/proposals/{pid}", **auth(qa)).status_code == 404
    shown = client.get(f"/api/v1/proposals/{pid}", **auth(ops)).json()["proposal"]
    assert shown["proposed_text"] == "# Me\n\n- likes coffee\n"
    assert "-- likes tea" in shown["diff"] and "+- likes coffee" in shown["diff"]
    assert not shown["stale"] and shown["policy_now"] == "propose"
    # deciding needs an admin token
    assert post(client, ops, f"/api/v1/proposals/{pid}/approve").status_code == 403
    done = post(client, admin, f"/api/v1/proposals/{pid}/approve")
    assert done.status_code == 200, done.content
    sha = done.json()["commit"]
    assert workspace.read(MEM) == "# Me\n\n- likes coffee\n"
    body = subprocess.run(["git", "-C", str(workspace.root), "log", "-1", "--format=%B", sha],
                          capture_output=True, text=True, check=True).stdout
    assert "Proposed-by: ops-bot" in body and "Approved-by: api-admin" in body
    again = post(client, admin, f"/api/v1/proposals/{pid}/approve")
    assert again.status_code == 409
    assert again.json()["error"]["code"] == "already_decided"
    assert again.json()["error"]["state"] == "approved"
    rejected = post(client, admin, f"/api/v1/proposals/{pid}/reject", {"reason": "late"})
    assert rejected.status_code == 409 and rejected.json()["error"]["state"] == "approved"


def test_reject_keeps_it_on_record(client, workspace, tokens):
    ops, admin = tokens["ops"], tokens["admin"]
    tool(client, ops, "reflect", content="junk")
    pid = only_proposal(client, admin)["id"]
    resp = post(client, admin, f"/api/v1/proposals/{pid}/reject", {"reason": "not durable"})
    assert resp.status_code == 200
    assert resp.json()["proposal"]["status"] == "rejected"
    assert resp.json()["proposal"]["reason"] == "not durable"
    assert tool(client, ops, "reflect").json()["result"] == \
        "Current MEMORY.md:\n\n# Me\n\n- likes tea\n"
    listed = client.get("/api/v1/proposals?status=rejected", **auth(admin)).json()
    assert [p["id"] for p in listed["proposals"]] == [pid]
    assert post(client, admin, f"/api/v1/proposals/{pid}/approve").json()["error"]["state"] \
        == "rejected"


def test_stale_proposal_conflicts_then_edited_approval(client, workspace, tokens):
    ops, admin = tokens["ops"], tokens["admin"]
    tool(client, ops, "reflect", content="# Me\n\n- likes coffee\n")
    workspace.write(MEM, "# Me\n\n- likes green tea\n", actor=Actor.user("lead"), tool="edit")
    pid = only_proposal(client, admin)["id"]
    assert client.get(f"/api/v1/proposals/{pid}", **auth(admin)).json()["proposal"]["stale"]
    resp = post(client, admin, f"/api/v1/proposals/{pid}/approve")
    assert resp.status_code == 409
    err = resp.json()["error"]
    assert err["code"] == "merge_conflict"
    assert (err["base"], err["current"], err["proposed"]) == (
        "# Me\n\n- likes tea\n", "# Me\n\n- likes green tea\n", "# Me\n\n- likes coffee\n")
    assert workspace.read(MEM) == "# Me\n\n- likes green tea\n"
    resp = post(client, admin, f"/api/v1/proposals/{pid}/approve",
                {"text": "# Me\n\n- likes green tea and coffee\n"})
    assert resp.status_code == 200
    assert workspace.read(MEM) == "# Me\n\n- likes green tea and coffee\n"


def test_edge_cases_deleted_file_revoked_token_changed_policy(client, workspace, tokens):
    ops, admin = tokens["ops"], tokens["admin"]
    tool(client, ops, "reflect", content="# Me\n\n- two\n")
    pid = only_proposal(client, admin)["id"]
    Token.objects.filter(scope="ops-bot").update(revoked_at="2026-01-01T00:00:00Z")
    set_policy("*", "memory", "write")
    shown = client.get(f"/api/v1/proposals/{pid}", **auth(admin)).json()["proposal"]
    assert shown["status"] == "open"
    assert shown["proposer_revoked"] is True and shown["policy_now"] == "write"
    workspace.delete(MEM, actor=Actor.user("lead"), tool="edit")
    resp = post(client, admin, f"/api/v1/proposals/{pid}/approve")
    assert resp.status_code == 409 and "was deleted since" in resp.json()["error"]["message"]
    assert not workspace.exists(MEM)
    resp = post(client, admin, f"/api/v1/proposals/{pid}/approve", {"recreate": True})
    assert resp.status_code == 200
    assert workspace.read(MEM) == "# Me\n\n- two\n"


def test_bad_input_is_a_clear_4xx(client, tokens):
    admin = tokens["admin"]
    assert client.get("/api/v1/proposals/zzz", **auth(admin)).status_code == 404
    assert client.get("/api/v1/proposals?status=maybe", **auth(admin)).status_code == 400
    assert client.get("/api/v1/proposals?kind=daily", **auth(admin)).status_code == 400
    assert post(client, admin, "/api/v1/proposals/0123456789ab/approve").status_code == 404
    tool(client, tokens["ops"], "reflect", content="x")
    pid = only_proposal(client, admin)["id"]
    resp = post(client, admin, f"/api/v1/proposals/{pid}/approve", {"text": 3})
    assert resp.status_code == 400
    resp = post(client, admin, f"/api/v1/proposals/{pid}/reject", {"why": "x"})
    assert resp.status_code == 400


# -- refusals -------------------------------------------------------------------------------

def test_read_only_tokens_write_nothing(client, workspace, make_token):
    raw = Token.issue(scope="ops-bot", read_only=True)[1]
    resp = tool(client, raw, "remember", content="x")
    assert resp.status_code == 403
    resp = client.put("/api/v1/files/agents/ops-bot/memory/notes.md", b"x",
                      content_type="text/markdown", **auth(raw))
    assert resp.status_code == 403 and "read-only" in resp.json()["error"]["message"]
    assert tool(client, raw, "recall").status_code == 200
    admin_ro = Token.issue(admin=True, read_only=True)[1]
    resp = client.put("/api/v1/settings/agent/memory/dags/etl", json.dumps({"content": "x"}),
                      content_type="application/json", **auth(admin_ro))
    assert resp.status_code == 403
    assert workspace.list_files() == []


def test_the_read_policy_refuses_writes_with_403(client, workspace, make_token):
    set_policy("*", "world", "read")
    ops = make_token("ops-bot", world=True)
    resp = tool(client, ops, "update_world", topic="people", content="x")
    assert resp.status_code == 403
    resp = client.put(f"/api/v1/files/{WORLD}", b"x", content_type="text/markdown",
                      **auth(ops))
    assert resp.status_code == 403
    assert not workspace.exists(WORLD)


def test_a_policy_set_between_two_calls_applies_to_the_second(client, workspace, make_token):
    """A worker keeps whether any policy limits a token; setting one forgets that at once."""
    ops = make_token("ops-bot", world=True)
    assert tool(client, ops, "update_world", topic="people", content="first").status_code == 200
    set_policy("*", "world", "read")
    assert tool(client, ops, "update_world", topic="people", content="second").status_code == 403
    assert "first" in workspace.read(WORLD) and "second" not in workspace.read(WORLD)


def test_dagu_put_is_proposed_and_read_back(client, workspace, settings, make_token):
    from memoryui.workspace import get_store, reset_store

    reset_store()
    settings.MEMORYUI_LAYOUT = "dagu"
    store = get_store()
    try:
        set_policy("*", "memory", "propose")
        admin = make_token(admin=True)
        url = "/api/v1/settings/agent/memory/dags/etl"
        resp = client.put(url, json.dumps({"content": "# ETL\n\n- retries: 3\n"}),
                          content_type="application/json", **auth(admin))
        assert (resp.status_code, resp.content) == (200, b"")
        assert client.get(url, **auth(admin)).json() == \
            {"dagName": "etl", "content": "# ETL\n\n- retries: 3\n"}
        path = store.path_for("memory", "etl")
        assert store.read(path) is None
        p = only_proposal(client, admin)
        assert (p["scope"], p["path"]) == ("etl", path)
        assert post(client, admin, f"/api/v1/proposals/{p['id']}/approve").status_code == 200
        assert store.read(path) == "# ETL\n\n- retries: 3\n"
    finally:
        reset_store()


# -- the webhook ---------------------------------------------------------------------------------

@pytest.fixture
def hook() -> Iterator[tuple[str, list[dict]]]:
    got: list[dict] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            size = int(self.headers.get("Content-Length", "0"))
            got.append({"type": self.headers.get("Content-Type"),
                        "body": json.loads(self.rfile.read(size))})
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/hook", got
    server.shutdown()
    server.server_close()


def test_webhook_gets_each_new_proposal(client, tokens, settings, hook):
    url, got = hook
    settings.MEMORYUI_PROPOSAL_WEBHOOK = url
    settings.CSRF_TRUSTED_ORIGINS = ["https://memory.example.com"]
    tool(client, tokens["ops"], "reflect", content="# Me\n\n- likes coffee\n")
    tool(client, tokens["ops"], "reflect", content="# Me\n\n- likes coffee\n- and tea\n")
    wait_for("the webhook's POST", lambda: got)
    [call] = got  # extending a proposal is not a new one
    body = call["body"]
    assert call["type"] == "application/json"
    assert (body["event"], body["path"], body["scope"], body["proposer"]) == \
        ("proposal.created", MEM, "ops-bot", "ops-bot")
    assert body["url"].startswith("https://memory.example.com/") and body["id"] in body["url"]
    assert "+- likes coffee" in body["diff"]


def test_a_failing_webhook_never_fails_the_write(client, workspace, tokens, settings):
    settings.MEMORYUI_PROPOSAL_WEBHOOK = "http://127.0.0.1:9/nothing-listens"
    resp = tool(client, tokens["ops"], "reflect", content="still proposed")
    assert resp.status_code == 200
    assert only_proposal(client, tokens["admin"])["path"] == MEM
