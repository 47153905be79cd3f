"""Dagu's agent-memory REST API: its shapes, name pattern and status codes, admin only,
full text on GET (no 200-line truncation), each change a commit, in every layout that has
the kinds it maps to."""

from __future__ import annotations

import json

import pytest

from memoryui.store import Actor

BASE = "/api/v1/settings/agent/memory"


@pytest.fixture
def layout(request, workspace, settings):
    """Switch the Django-side store to the layout given by indirect parametrization."""
    from memoryui.workspace import get_store, reset_store

    reset_store()
    settings.MEMORYUI_LAYOUT = getattr(request, "param", "dagu")
    store = get_store()
    yield store
    reset_store()


@pytest.fixture
def admin(make_token) -> dict:
    return {"HTTP_AUTHORIZATION": f"Bearer {make_token(admin=True)}"}


def put(client, url: str, body: object, headers: dict):
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    return client.put(url, data, content_type="application/json", **headers)


def test_empty_workspace(client, layout, admin):
    resp = client.get(BASE, **admin)
    assert resp.status_code == 200
    assert resp.json() == {"globalMemory": "", "dagMemories": None, "memoryDir": "memory"}


def test_put_global_writes_the_file_and_commits_it(client, layout, admin):
    resp = put(client, BASE, {"content": "# Global\n\n- be nice\n"}, admin)
    assert resp.status_code == 200
    assert resp.content == b""
    assert layout.read("memory/MEMORY.md") == "# Global\n\n- be nice\n"
    [commit] = layout.log("memory/MEMORY.md")
    assert commit.author == "api-admin" and commit.actor == "user:api-admin"
    assert commit.tools == ["agent_memory_update"]
    assert commit.trailers["Memoryui-Token"][0].startswith("mui_")
    assert client.get(BASE, **admin).json()["globalMemory"] == "# Global\n\n- be nice\n"


def test_get_returns_the_full_text_beyond_200_lines(client, layout, admin):
    text = "".join(f"- fact {i}\n" for i in range(350))
    put(client, BASE, {"content": text}, admin)
    body = client.get(BASE, **admin).json()
    assert body["globalMemory"] == text  # Dagu would cut at 200 lines and append a notice
    assert "truncated" not in body["globalMemory"]
    # Saving back what was read loses nothing.
    put(client, BASE, {"content": body["globalMemory"]}, admin)
    assert layout.read("memory/MEMORY.md") == text


def test_dag_memory_lifecycle(client, layout, admin):
    url = f"{BASE}/dags/nightly-etl"
    assert client.get(url, **admin).json() == {"dagName": "nightly-etl", "content": ""}
    assert put(client, url, {"content": "retry twice\n"}, admin).status_code == 200
    assert layout.read("memory/dags/nightly-etl/MEMORY.md") == "retry twice\n"
    put(client, f"{BASE}/dags/backup", {"content": "b\n"}, admin)
    assert client.get(url, **admin).json() == {"dagName": "nightly-etl",
                                               "content": "retry twice\n"}
    assert client.get(BASE, **admin).json()["dagMemories"] == ["backup", "nightly-etl"]
    layout.write("memory/dags/nightly-etl/extra.md", "x\n", actor=Actor.user("bob"),
                 tool="edit")
    assert client.delete(url, **admin).status_code == 200
    # Dagu removes the DAG's whole folder.
    assert layout.list_files("memory/dags/nightly-etl") == []
    assert client.get(BASE, **admin).json()["dagMemories"] == ["backup"]
    assert client.delete(url, **admin).status_code == 200  # idempotent
    last = layout.log("memory/dags/nightly-etl/MEMORY.md")[0]
    assert last.tools == ["agent_memory_delete"] and last.author == "api-admin"


def test_delete_global_is_idempotent(client, layout, admin):
    put(client, BASE, {"content": "x"}, admin)
    assert client.delete(BASE, **admin).status_code == 200
    assert not layout.exists("memory/MEMORY.md")
    assert client.delete(BASE, **admin).status_code == 200
    assert client.get(BASE, **admin).json()["globalMemory"] == ""


@pytest.mark.parametrize("name", ["bad.name", "with%20space", "%2e%2e", "caf%C3%A9",
                                  "a" * 65])
def test_dag_names_outside_the_pattern_are_400(client, layout, admin, name):
    resp = put(client, f"{BASE}/dags/{name}", {"content": "x"}, admin)
    assert resp.status_code == 400
    body = resp.json()
    assert body["code"] == "bad_request" and set(body) == {"code", "message"}
    assert layout.list_files() == []


@pytest.mark.parametrize("body,fragment", [
    (b"", "Invalid request body"),
    ({}, '"content" is missing'),
    ({"content": 3}, "must be a string"),
    ({"content": "x", "extra": 1}, "unknown field"),
    (b"{not json", "invalid JSON"),
    (b"[]", "JSON object"),
])
def test_bad_bodies_are_400_in_dagus_shape(client, layout, admin, body, fragment):
    resp = put(client, BASE, body, admin)
    assert resp.status_code == 400
    assert resp.json()["code"] == "bad_request"
    assert fragment in resp.json()["message"]
    assert not layout.exists("memory/MEMORY.md")


def test_non_admin_and_anonymous_are_refused_in_dagus_shape(client, layout, make_token):
    scope = {"HTTP_AUTHORIZATION": f"Bearer {make_token('nightly-etl', world=True, global_=True)}"}
    denied = put(client, f"{BASE}/dags/nightly-etl", {"content": "x"}, scope)
    assert denied.status_code == 403
    assert denied.json() == {"code": "forbidden", "message": "Insufficient permissions"}
    anon = client.get(BASE)
    assert anon.status_code == 401
    assert anon.json() == {"code": "unauthorized", "message": "Authentication required"}
    assert anon["WWW-Authenticate"].startswith("Bearer")
    assert layout.list_files() == []


def test_other_methods_are_405(client, layout, admin):
    resp = client.post(BASE, b"{}", content_type="application/json", **admin)
    assert resp.status_code == 405
    assert resp.json()["code"] == "method_not_allowed"


@pytest.mark.parametrize("layout", ["duragent"], indirect=True)
def test_duragent_layout_maps_dags_to_agents_and_keeps_their_other_files(client, layout,
                                                                         admin):
    layout.write("agents/ops-bot/memory/daily/2026-02-12.md", "# 2026-02-12\n",
                 actor=Actor.agent("ops-bot"), tool="remember")
    put(client, f"{BASE}/dags/ops-bot", {"content": "curated\n"}, admin)
    assert layout.read("agents/ops-bot/memory/MEMORY.md") == "curated\n"
    assert client.get(BASE, **admin).json()["dagMemories"] == ["ops-bot"]
    assert client.delete(f"{BASE}/dags/ops-bot", **admin).status_code == 200
    assert not layout.exists("agents/ops-bot/memory/MEMORY.md")
    assert layout.exists("agents/ops-bot/memory/daily/2026-02-12.md")
    put(client, BASE, {"content": "shared\n"}, admin)
    assert layout.read("memory/MEMORY.md") == "shared\n"


@pytest.mark.parametrize("layout", ["jutul"], indirect=True)
def test_layout_without_global_memory_answers_404(client, layout, admin):
    resp = client.get(BASE, **admin)
    assert resp.status_code == 404
    assert resp.json()["code"] == "not_found"
    assert put(client, BASE, {"content": "x"}, admin).status_code == 404
    # jutul does have per-scope memory (its note index).
    ok = put(client, f"{BASE}/dags/abc123", {"content": "- [a](a.md)\n"}, admin)
    assert ok.status_code == 200
    assert layout.read("workspaces/abc123/memory/MEMORY.md") == "- [a](a.md)\n"


@pytest.mark.parametrize("layout", ["zerostack"], indirect=True)
def test_layout_without_scope_memory_answers_404_for_dags(client, layout, admin):
    assert client.get(f"{BASE}/dags/proj", **admin).status_code == 404
    body = client.get(BASE, **admin).json()
    assert body["dagMemories"] is None
    put(client, BASE, {"content": "zs\n"}, admin)
    assert layout.read("MEMORY.md") == "zs\n"
