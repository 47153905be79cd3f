"""`GET /api/v1/search`: agents search what they may read, and nothing else."""

from __future__ import annotations

import json

import pytest

from memoryui.store import Actor

ALICE = Actor.user("alice")


def auth(token: str) -> dict:
    return {"HTTP_AUTHORIZATION": f"Bearer {token}"}


@pytest.fixture
def ws(workspace):
    s = workspace
    for scope in ("ops-bot", "billing-agent"):
        s.write(s.path_for("note", scope, "failover"), f"failover plan of {scope}\n",
                actor=Actor.agent(scope), tool="t")
    s.write(s.path_for("world", None, "failover"), "failover is shared knowledge\n",
            actor=ALICE, tool="t")
    s.write(s.path_for("global"), "global failover policy\n", actor=ALICE, tool="t")
    s.write(s.path_for("skill", None, "failover-drill"),
            "---\nname: failover-drill\ndescription: run a drill\n---\nfailover steps\n",
            actor=ALICE, tool="t")
    s.write("directives/failover.md", "failover directive\n", actor=ALICE, tool="t")
    return s


def paths(resp) -> set[str]:
    return {r["path"] for r in resp.json()["results"]}


def test_no_token_is_401(client, ws, db):
    resp = client.get("/api/v1/search?q=failover")
    assert resp.status_code == 401
    assert resp.json()["error"]["code"] == "unauthorized"
    resp = client.get("/api/v1/search?q=failover", **auth("mui_not-a-real-token"))
    assert resp.status_code == 401


def test_a_scope_token_sees_its_scope_and_the_shared_files(client, ws, make_token):
    token = make_token("ops-bot")
    resp = client.get("/api/v1/search?q=failover", **auth(token))
    assert resp.status_code == 200
    # The layout's one read rule: own scope, world, global, skills and directives.
    assert paths(resp) == {
        "agents/ops-bot/memory/notes/failover.md", "memory/world/failover.md",
        "memory/MEMORY.md", "skills/failover-drill/SKILL.md", "directives/failover.md"}
    assert resp.json()["total"] == 5
    # What search shows, the files API serves to the same token; another scope's file neither.
    for path in paths(resp):
        assert client.get(f"/api/v1/files/{path}", **auth(token)).status_code == 200, path
    other = "agents/billing-agent/memory/notes/failover.md"
    assert client.get(f"/api/v1/files/{other}", **auth(token)).status_code in (403, 404)


def test_a_scope_token_cannot_ask_for_another_scope(client, ws, make_token):
    resp = client.get("/api/v1/search?q=failover&scope=billing-agent",
                      **auth(make_token("ops-bot")))
    assert resp.status_code == 403
    assert resp.json()["error"]["code"] == "forbidden"


def test_an_admin_token_sees_everything_and_can_filter(client, ws, make_token):
    admin = make_token(admin=True)
    resp = client.get("/api/v1/search?q=failover&limit=50", **auth(admin))
    assert len(paths(resp)) == 6
    resp = client.get("/api/v1/search?q=failover&scope=billing-agent", **auth(admin))
    assert paths(resp) == {"agents/billing-agent/memory/notes/failover.md"}
    resp = client.get("/api/v1/search?q=failover&kind=world", **auth(admin))
    assert paths(resp) == {"memory/world/failover.md"}


def test_results_carry_path_kind_scope_score_and_snippet(client, ws, make_token):
    resp = client.get("/api/v1/search?q=plan", **auth(make_token("ops-bot")))
    [hit] = resp.json()["results"]
    assert hit["path"] == "agents/ops-bot/memory/notes/failover.md"
    assert hit["kind"] == "note" and hit["scope"] == "ops-bot"
    assert hit["score"] > 0
    assert hit["snippet"] == "failover plan of ops-bot\n"
    start, end = hit["highlights"][0]
    assert hit["snippet"][start:end] == "plan"


def test_limit_caps_the_results(client, ws, make_token):
    resp = client.get("/api/v1/search?q=failover&limit=2&mode=keyword",
                      **auth(make_token(admin=True)))
    body = resp.json()
    assert len(body["results"]) == 2 and body["total"] == 6


@pytest.mark.parametrize("query, needle", [
    ("q=", "q is required"),
    ('q="open', "Unbalanced quote"),
    ("q=(failover", "parenthesis is not closed"),
    ("q=failover&limit=0", "limit"),
    ("q=failover&limit=lots", "limit"),
    ("q=failover&kind=diary", "unknown kind"),
    ("q=failover&scope=../etc", "invalid scope"),
    ("q=failover&since=someday", "not a date"),
    ("q=failover&until=9999-12-31", "until: 9999-12-31 is out of range"),
    ("q=failover&since=0001-01-01", "since: 0001-01-01 is out of range"),
    ("q=failover&until=2026-02-30", "until: '2026-02-30' is not a date"),
    ("q=failover&since=2026-03-01&until=2026-02-01", "is after until"),
    ("q=(failover+OR", "ends where a word was expected"),
    ("q=failover+OR+NOT+drill", "needs something before it"),
    ("q=failover%00drill", "must not contain NUL bytes (at column 9)"),
])
def test_bad_requests_get_a_clear_400(client, ws, make_token, query, needle):
    resp = client.get(f"/api/v1/search?{query}", **auth(make_token(admin=True)))
    assert resp.status_code == 400
    err = resp.json()["error"]
    assert err["code"] == "invalid_arguments" and needle in err["message"]


def test_what_an_agent_remembers_is_found_by_search(client, ws, make_token):
    token = make_token("ops-bot")
    resp = client.post("/api/v1/agents/ops-bot/tools/remember",
                       data=json.dumps({"content": "The quokka cluster needs a reboot."}),
                       content_type="application/json", **auth(token))
    assert resp.status_code == 200
    resp = client.get("/api/v1/search?q=quokka", **auth(token))
    [hit] = resp.json()["results"]
    assert hit["kind"] == "daily" and hit["scope"] == "ops-bot"
    assert hit["entry_id"]


def test_a_query_error_says_where(client, ws, make_token):
    resp = client.get("/api/v1/search", {"q": "(failover OR drill"},
                      **auth(make_token(admin=True)))
    assert resp.status_code == 400
    err = resp.json()["error"]
    assert err["code"] == "invalid_arguments" and "parenthesis is not closed" in err["message"]
    assert err["position"] == 0 and err["column"] == 1
    assert err["caret"] == "(failover OR drill\n^"


def test_not_and_parentheses_work(client, ws, make_token):
    resp = client.get("/api/v1/search", {"q": "(plan OR policy) AND NOT global", "limit": 50,
                                         "mode": "keyword"}, **auth(make_token(admin=True)))
    assert paths(resp) == {"agents/ops-bot/memory/notes/failover.md",
                           "agents/billing-agent/memory/notes/failover.md"}


def test_the_api_matches_words_as_typed(client, ws, make_token):
    admin = make_token(admin=True)
    assert paths(client.get("/api/v1/search?q=failov&mode=keyword", **auth(admin))) == set()
    assert len(paths(client.get("/api/v1/search?q=failov*&limit=50&mode=keyword",
                                **auth(admin)))) == 6


def test_results_say_when_the_file_last_changed(client, workspace, make_token):
    then = 1_760_000_000  # 2025-10-09, long before the test runs
    workspace.write("memory/world/tapir.md", "tapir habitat\n", actor=ALICE, tool="t",
                    when=then)
    resp = client.get("/api/v1/search?q=tapir", **auth(make_token(admin=True)))
    [hit] = resp.json()["results"]
    assert hit["changed"] == "2025-10-09T08:53:20+00:00"


# -- search by meaning ------------------------------------------------------------------

BACKUPS = "# Storage\n\nPostgres dumps happen nightly at 02:00.\n"
QUESTION = "when do the database backups run?"


@pytest.fixture
def facts(ws):
    ws.write(ws.path_for("note", "ops-bot", "storage"), BACKUPS, actor=ALICE, tool="t")
    ws.write(ws.path_for("note", "billing-agent", "storage"), BACKUPS, actor=ALICE, tool="t")
    return ws


def test_hybrid_finds_what_keywords_miss(client, facts, make_token):
    admin = auth(make_token(admin=True))
    body = client.get("/api/v1/search", {"q": QUESTION}, **admin).json()
    assert body["mode"] == "hybrid" and "notice" not in body
    assert {r["path"] for r in body["results"][:2]} == {
        "agents/ops-bot/memory/notes/storage.md", "agents/billing-agent/memory/notes/storage.md"}
    assert "Postgres dumps happen nightly" in body["results"][0]["snippet"]
    assert body["results"][0]["highlights"] == []
    keyword = client.get("/api/v1/search", {"q": QUESTION, "mode": "keyword"}, **admin).json()
    assert keyword == {"query": QUESTION, "total": 0, "mode": "keyword", "results": []}


def test_meaning_keeps_to_what_a_token_may_read(client, facts, make_token):
    body = client.get("/api/v1/search", {"q": QUESTION}, **auth(make_token("ops-bot"))).json()
    assert "agents/ops-bot/memory/notes/storage.md" in {r["path"] for r in body["results"]}
    assert not [r for r in body["results"] if r["scope"] == "billing-agent"]


def test_an_unknown_mode_is_a_400(client, facts, make_token):
    resp = client.get("/api/v1/search", {"q": "x", "mode": "vectors"},
                      **auth(make_token(admin=True)))
    assert resp.status_code == 400
    assert resp.json()["error"]["message"] == "unknown mode 'vectors'; use hybrid or keyword"


def test_without_the_model_keywords_answer_and_say_why(client, facts, make_token,
                                                       monkeypatch):
    monkeypatch.setenv("MEMORYUI_EMBEDDINGS", "off")
    body = client.get("/api/v1/search", {"q": "postgres"}, **auth(make_token(admin=True))).json()
    assert body["mode"] == "keyword"
    assert body["notice"] == ("Search by meaning is unavailable: it is turned off "
                              "(MEMORYUI_EMBEDDINGS=off); results match keywords only.")
    assert len(body["results"]) == 2
    for q in ("x" * 1_000_000, "a\x00b"):
        resp = client.get("/api/v1/search", {"q": q}, **auth(make_token(admin=True)))
        assert resp.status_code == 400
