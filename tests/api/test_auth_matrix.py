"""Every endpoint x {no token, bad token, other scope's token, own token, admin token}.

"own" is a token for scope ops-bot, whose files the requests target; "other" is a token
for web-bot. Each cell gives the status and, for errors, the error code.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest

from memoryui.store import Actor, version_of

OWN_MEMORY = "agents/ops-bot/memory/MEMORY.md"
WHO = ("none", "bad", "other", "own", "admin")


@dataclass
class Case:
    name: str
    method: str
    url: str
    expect: tuple[int, int, int, int, int]  # in WHO order
    body: object = None
    content_type: str = "application/json"
    if_match: bool = False
    dagu: bool = False  # errors in Dagu's {"code", "message"} shape


CASES = [
    Case("list tools", "GET", "/api/v1/tools", (401, 401, 200, 200, 200)),
    Case("call tool", "POST", "/api/v1/agents/ops-bot/tools/recall",
         (401, 401, 403, 200, 200), body={"days": 2}),
    Case("call tool (write)", "POST", "/api/v1/agents/ops-bot/tools/remember",
         (401, 401, 403, 200, 200), body={"content": "matrix"}),
    Case("dagu get", "GET", "/api/v1/settings/agent/memory", (401, 401, 403, 403, 200),
         dagu=True),
    Case("dagu put", "PUT", "/api/v1/settings/agent/memory", (401, 401, 403, 403, 200),
         body={"content": "g"}, dagu=True),
    Case("dagu delete", "DELETE", "/api/v1/settings/agent/memory", (401, 401, 403, 403, 200),
         dagu=True),
    Case("dagu dag get", "GET", "/api/v1/settings/agent/memory/dags/ops-bot",
         (401, 401, 403, 403, 200), dagu=True),
    Case("dagu dag put", "PUT", "/api/v1/settings/agent/memory/dags/ops-bot",
         (401, 401, 403, 403, 200), body={"content": "d"}, dagu=True),
    Case("dagu dag delete", "DELETE", "/api/v1/settings/agent/memory/dags/ops-bot",
         (401, 401, 403, 403, 200), dagu=True),
    Case("list files", "GET", "/api/v1/files?prefix=agents/ops-bot",
         (401, 401, 200, 200, 200)),
    Case("read file", "GET", f"/api/v1/files/{OWN_MEMORY}", (401, 401, 403, 200, 200)),
    Case("create file", "PUT", "/api/v1/files/agents/ops-bot/memory/notes/new.md",
         (401, 401, 403, 201, 201), body="new note\n", content_type="text/markdown"),
    Case("replace file", "PUT", f"/api/v1/files/{OWN_MEMORY}", (401, 401, 403, 200, 200),
         body="replaced\n", content_type="text/markdown", if_match=True),
    Case("delete file", "DELETE", f"/api/v1/files/{OWN_MEMORY}", (401, 401, 403, 200, 200),
         if_match=True),
    Case("history of own scope", "GET", "/api/v1/history?scope=ops-bot",
         (401, 401, 403, 200, 200)),
    Case("history of a file", "GET", f"/api/v1/history?path={OWN_MEMORY}",
         (401, 401, 403, 200, 200)),
    Case("commit", "GET", "/api/v1/commits/{sha}", (401, 401, 403, 200, 200)),
    Case("search own scope", "GET", "/api/v1/search?q=deploys&scope=ops-bot",
         (401, 401, 403, 200, 200)),
    Case("openapi (public)", "GET", "/api/v1/openapi.json", (200, 200, 200, 200, 200)),
]


@pytest.fixture
def world(workspace, make_token) -> dict:
    res = workspace.write(OWN_MEMORY, "# ops-bot\n\n- prefers blue/green deploys\n",
                          actor=Actor.agent("ops-bot"), tool="reflect")
    workspace.write("agents/web-bot/memory/MEMORY.md", "# web-bot\n",
                    actor=Actor.agent("web-bot"), tool="reflect")
    return {
        "sha": res.commit,
        "tokens": {"none": None, "bad": "mui_not-a-real-token-at-all-0000000000000000",
                   "other": make_token("web-bot"), "own": make_token("ops-bot"),
                   "admin": make_token(admin=True)},
    }


def _send(client, case: Case, token: str | None, world: dict):
    headers = {}
    if token:
        headers["HTTP_AUTHORIZATION"] = f"Bearer {token}"
    if case.if_match:
        headers["HTTP_IF_MATCH"] = f'"{version_of(world["store"].read_bytes(OWN_MEMORY))}"'
    if case.body is None:
        data = b""
    elif isinstance(case.body, str):
        data = case.body.encode()
    else:
        data = json.dumps(case.body).encode()
    url = case.url.replace("{sha}", world["sha"])
    return client.generic(case.method, url, data, content_type=case.content_type, **headers)


@pytest.mark.parametrize("who", WHO)
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_auth_matrix(client, workspace, world, case: Case, who: str):
    world["store"] = workspace
    before = workspace.read(OWN_MEMORY)
    resp = _send(client, case, world["tokens"][who], world)
    expected = case.expect[WHO.index(who)]
    assert resp.status_code == expected, resp.content
    if expected >= 400:
        body = resp.json()
        code = body["code"] if case.dagu else body["error"]["code"]
        assert code == {401: "unauthorized", 403: "forbidden"}[expected]
        if expected == 401:
            assert resp["WWW-Authenticate"].startswith("Bearer")
        # A refused request changes nothing.
        assert workspace.read(OWN_MEMORY) == before
        assert not workspace.exists("agents/ops-bot/memory/notes/new.md")


def test_other_scope_sees_only_its_own_and_shared_files(client, workspace, world):
    workspace.write("memory/world/dns.md", "dns\n", actor=Actor.user("alice"), tool="edit")
    tokens = world["tokens"]
    listed = client.get("/api/v1/files", HTTP_AUTHORIZATION=f"Bearer {tokens['other']}")
    paths = {f["path"] for f in listed.json()["files"]}
    assert paths == {"agents/web-bot/memory/MEMORY.md", "memory/world/dns.md"}
    admin = client.get("/api/v1/files", HTTP_AUTHORIZATION=f"Bearer {tokens['admin']}")
    assert OWN_MEMORY in {f["path"] for f in admin.json()["files"]}


def test_revoked_token_is_401(client, workspace, world):
    from memoryui.models import Token

    Token.objects.filter(scope="ops-bot").update(revoked_at="2026-01-01T00:00:00Z")
    resp = client.get("/api/v1/tools", HTTP_AUTHORIZATION=f"Bearer {world['tokens']['own']}")
    assert resp.status_code == 401
    assert resp.json()["error"]["code"] == "unauthorized"


def test_dagu_errors_use_dagus_exact_texts(client, workspace, world):
    none = client.get("/api/v1/settings/agent/memory")
    assert none.json() == {"code": "unauthorized", "message": "Authentication required"}
    scope = client.get("/api/v1/settings/agent/memory",
                       HTTP_AUTHORIZATION=f"Bearer {world['tokens']['own']}")
    assert scope.json() == {"code": "forbidden", "message": "Insufficient permissions"}


def test_a_token_revoked_after_use_stops_at_once(client, workspace, world):
    """Verified tokens are kept in memory for MEMORYUI_TOKEN_CACHE seconds; revoking one
    (the tokens page and `manage.py token revoke` save it) must still end it at once."""
    from django.utils import timezone

    from memoryui.models import Token

    auth = {"HTTP_AUTHORIZATION": f"Bearer {world['tokens']['own']}"}
    assert client.get("/api/v1/tools", **auth).status_code == 200
    tok = Token.objects.get(scope="ops-bot", revoked_at=None)
    tok.revoked_at = timezone.now()
    tok.save(update_fields=["revoked_at"])
    assert client.get("/api/v1/tools", **auth).status_code == 401
