"""Files and audit API: listing with sha256, ETag reads, If-Match writes (428/412 with the
current text and a diff), attribution, history filters and one commit with its diff."""

from __future__ import annotations

import hashlib

import pytest

from memoryui.store import Actor

MEM = "agents/ops-bot/memory/MEMORY.md"
NOTE = "agents/ops-bot/memory/notes/runbook.md"


MEM_TEXT = "# Memory\n\n- one\n- two\n"


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def tag(text: str) -> str:
    """The ETag of a text: its sha256, quoted."""
    return '"' + sha(text) + '"'


@pytest.fixture
def tokens(make_token) -> dict:
    return {"own": make_token("ops-bot"), "admin": make_token(admin=True),
            "world": make_token("ops-bot", world=True),
            "global": make_token("ops-bot", global_=True)}


@pytest.fixture
def seeded(workspace):
    bot = Actor.agent("ops-bot")
    workspace.write(MEM, "# Memory\n\n- one\n- two\n", actor=bot, tool="reflect")
    workspace.write(NOTE, "restart nginx\n", actor=bot, tool="memory_write")
    workspace.write("agents/web-bot/memory/MEMORY.md", "web\n", actor=Actor.agent("web-bot"),
                    tool="reflect")
    workspace.write("memory/world/dns.md", "resolver 10.0.0.2\n", actor=Actor.user("alice"),
                    tool="edit")
    return workspace


def h(token: str, **more: str) -> dict:
    return {"HTTP_AUTHORIZATION": f"Bearer {token}", **more}


def put(client, path: str, text: str | bytes, token: str, **headers: str):
    data = text if isinstance(text, bytes) else text.encode()
    ctype = headers.pop("content_type", "text/markdown; charset=utf-8")
    return client.put(f"/api/v1/files/{path}", data, content_type=ctype, **h(token, **headers))


# -- list and read -------------------------------------------------------------------

def test_list_gives_size_sha256_kind_and_scope(client, seeded, tokens):
    resp = client.get("/api/v1/files?prefix=agents/ops-bot", **h(tokens["admin"]))
    assert resp.status_code == 200
    files = {f["path"]: f for f in resp.json()["files"]}
    assert set(files) == {MEM, NOTE}
    text = "# Memory\n\n- one\n- two\n"
    assert files[MEM] == {"path": MEM, "size": len(text.encode()), "sha256": sha(text),
                          "kind": "memory", "scope": "ops-bot"}
    assert files[NOTE]["kind"] == "note"


def test_list_of_a_missing_folder_is_empty_and_a_bad_prefix_is_400(client, seeded, tokens):
    assert client.get("/api/v1/files?prefix=nowhere", **h(tokens["admin"])).json()["files"] == []
    bad = client.get("/api/v1/files?prefix=../etc", **h(tokens["admin"]))
    assert bad.status_code == 400
    assert bad.json()["error"]["code"] == "invalid_arguments"


def test_get_returns_the_raw_text_with_its_etag(client, seeded, tokens):
    resp = client.get(f"/api/v1/files/{MEM}", **h(tokens["own"]))
    assert resp.status_code == 200
    assert resp.content == b"# Memory\n\n- one\n- two\n"
    assert resp["Content-Type"] == "text/markdown; charset=utf-8"
    assert resp["ETag"] == tag("# Memory\n\n- one\n- two\n")
    again = client.get(f"/api/v1/files/{MEM}", **h(tokens["own"], HTTP_IF_NONE_MATCH=resp["ETag"]))
    assert again.status_code == 304


def test_get_missing_file_is_404_and_folder_is_400(client, seeded, tokens):
    missing = client.get("/api/v1/files/agents/ops-bot/memory/nope.md", **h(tokens["own"]))
    assert missing.status_code == 404
    assert missing.json()["error"]["code"] == "not_found"
    folder = client.get("/api/v1/files/agents/ops-bot/memory", **h(tokens["own"]))
    assert folder.status_code == 400


def test_scope_token_reads_shared_files_but_not_other_scopes(client, seeded, tokens):
    assert client.get("/api/v1/files/memory/world/dns.md", **h(tokens["own"])).status_code == 200
    other = client.get("/api/v1/files/agents/web-bot/memory/MEMORY.md", **h(tokens["own"]))
    assert other.status_code == 403


# -- writes ---------------------------------------------------------------------------

def test_put_creates_a_file_as_the_agent(client, seeded, tokens):
    path = "agents/ops-bot/memory/notes/new.md"
    resp = put(client, path, "fresh\n", tokens["own"])
    assert resp.status_code == 201, resp.content
    body = resp.json()
    assert body["created"] is True and body["sha256"] == sha("fresh\n")
    assert resp["ETag"] == tag("fresh\n")
    assert seeded.read(path) == "fresh\n"
    [commit] = seeded.log(path)
    assert commit.author == "ops-bot" and commit.actor == "agent:ops-bot"
    assert "files-api" in commit.tools
    assert commit.trailers["Memoryui-Token"][0].startswith("mui_")


def test_put_by_admin_is_attributed_to_api_admin_with_the_message(client, seeded, tokens):
    resp = put(client, "skills/triage/SKILL.md", "---\nname: triage\n---\n", tokens["admin"],
               HTTP_X_MEMORYUI_MESSAGE="Add triage skill")
    assert resp.status_code == 201
    [commit] = seeded.log("skills/triage/SKILL.md")
    assert commit.author == "api-admin" and commit.actor == "user:api-admin"
    assert commit.subject == "Add triage skill"


def test_put_over_existing_file_without_if_match_is_428(client, seeded, tokens):
    resp = put(client, MEM, "clobber\n", tokens["own"])
    assert resp.status_code == 428
    err = resp.json()["error"]
    assert err["code"] == "precondition_required"
    assert "If-Match" in err["message"]
    assert seeded.read(MEM) == "# Memory\n\n- one\n- two\n"


def test_put_with_stale_etag_is_412_with_current_text_and_diff(client, seeded, tokens):
    stale = tag("# Memory\n\n- one\n")
    resp = put(client, MEM, "# Memory\n\n- one\n- three\n", tokens["own"], HTTP_IF_MATCH=stale)
    assert resp.status_code == 412
    err = resp.json()["error"]
    assert err["code"] == "precondition_failed"
    assert err["current"] == "# Memory\n\n- one\n- two\n"
    assert err["etag"] == tag(err["current"])
    assert "-- two" in err["diff"] and "+- three" in err["diff"]
    assert seeded.read(MEM) == "# Memory\n\n- one\n- two\n"


def test_put_with_current_etag_replaces_and_returns_the_new_etag(client, seeded, tokens):
    etag = client.get(f"/api/v1/files/{MEM}", **h(tokens["own"]))["ETag"]
    resp = put(client, MEM, "# Memory\n\n- one\n", tokens["own"], HTTP_IF_MATCH=etag)
    assert resp.status_code == 200
    assert resp.json()["changed"] is True
    assert resp["ETag"] == tag("# Memory\n\n- one\n")
    assert seeded.read(MEM) == "# Memory\n\n- one\n"
    # The old tag is now stale.
    again = put(client, MEM, "x\n", tokens["own"], HTTP_IF_MATCH=etag)
    assert again.status_code == 412


def test_if_none_match_star_only_creates(client, seeded, tokens):
    resp = put(client, MEM, "x\n", tokens["own"], HTTP_IF_NONE_MATCH="*")
    assert resp.status_code == 412
    assert resp.json()["error"]["current"] == "# Memory\n\n- one\n- two\n"


def test_delete_needs_if_match_and_removes_the_file(client, seeded, tokens):
    url = f"/api/v1/files/{NOTE}"
    assert client.delete(url, **h(tokens["own"])).status_code == 428
    stale = client.delete(url, **h(tokens["own"], HTTP_IF_MATCH=tag("old")))
    assert stale.status_code == 412
    assert stale.json()["error"]["current"] == "restart nginx\n"
    assert seeded.exists(NOTE)
    ok = client.delete(url, **h(tokens["own"], HTTP_IF_MATCH=tag("restart nginx\n")))
    assert ok.status_code == 200
    assert ok.json()["deleted"] is True
    assert not seeded.exists(NOTE)
    last = seeded.log(NOTE)[0]
    assert last.files[0].status == "D" and last.author == "ops-bot"
    gone = client.delete(url, **h(tokens["own"], HTTP_IF_MATCH=tag("x")))
    assert gone.status_code == 404


def test_scope_token_writes_only_inside_its_scope(client, seeded, tokens):
    other = put(client, "agents/web-bot/memory/notes/x.md", "x\n", tokens["own"])
    assert other.status_code == 403
    skill = put(client, "skills/x/SKILL.md", "x\n", tokens["own"])
    assert skill.status_code == 403
    assert not seeded.exists("agents/web-bot/memory/notes/x.md")
    assert not seeded.exists("skills/x/SKILL.md")


def test_world_and_global_writes_need_grants(client, seeded, tokens):
    assert put(client, "memory/world/new.md", "w\n", tokens["own"]).status_code == 403
    assert put(client, "memory/world/new.md", "w\n", tokens["world"]).status_code == 201
    assert put(client, "memory/MEMORY.md", "g\n", tokens["world"]).status_code == 403
    assert put(client, "memory/MEMORY.md", "g\n", tokens["global"]).status_code == 201
    assert seeded.read("memory/world/new.md") == "w\n"
    assert seeded.read("memory/MEMORY.md") == "g\n"


def test_put_refuses_non_text_and_invalid_utf8(client, seeded, tokens):
    path = "agents/ops-bot/memory/notes/bin.md"
    bad = put(client, path, b"\xff\xfe oops", tokens["own"])
    assert bad.status_code == 400
    assert "UTF-8" in bad.json()["error"]["message"]
    json_body = put(client, path, "{}", tokens["own"], content_type="application/json")
    assert json_body.status_code == 415
    latin = put(client, path, "x", tokens["own"], content_type="text/plain; charset=latin-1")
    assert latin.status_code == 415
    assert not seeded.exists(path)


# -- history and commits --------------------------------------------------------------

def test_history_filters(client, seeded, tokens):
    admin = tokens["admin"]
    everything = client.get("/api/v1/history", **h(admin)).json()["commits"]
    assert len(everything) == 4
    by_path = client.get(f"/api/v1/history?path={NOTE}", **h(admin)).json()["commits"]
    assert [c["changes"][0]["path"] for c in by_path] == [NOTE]
    by_actor = client.get("/api/v1/history?actor=user:alice", **h(admin)).json()["commits"]
    assert [c["author"] for c in by_actor] == ["alice"]
    by_author = client.get("/api/v1/history?actor=web-bot", **h(admin)).json()["commits"]
    assert [c["actor"] for c in by_author] == ["agent:web-bot"]
    by_scope = client.get("/api/v1/history?scope=ops-bot", **h(admin)).json()["commits"]
    assert {c["author"] for c in by_scope} == {"ops-bot"} and len(by_scope) == 2
    by_kind = client.get("/api/v1/history?kind=world", **h(admin)).json()["commits"]
    assert [c["changes"][0]["path"] for c in by_kind] == ["memory/world/dns.md"]
    page = client.get("/api/v1/history?limit=3&offset=0", **h(admin)).json()
    assert len(page["commits"]) == 3 and page["next_offset"] == 3
    rest = client.get("/api/v1/history?limit=3&offset=3", **h(admin)).json()
    assert len(rest["commits"]) == 1 and rest["next_offset"] is None
    future = client.get("/api/v1/history?since=2099-01-01", **h(admin)).json()["commits"]
    assert future == []
    past = client.get("/api/v1/history?until=2000-01-01", **h(admin)).json()["commits"]
    assert past == []
    assert len(client.get("/api/v1/history?since=2000-01-01T00:00:00Z",
                          **h(admin)).json()["commits"]) == 4


@pytest.mark.parametrize("query", ["kind=planet", "limit=0", "limit=abc", "offset=-1",
                                   "since=yesterday", "until=2026-13-01", "since=2999-01-01", "scope=a/b",
                                   "path=../x"])
def test_history_rejects_bad_filters(client, seeded, tokens, query):
    resp = client.get(f"/api/v1/history?{query}", **h(tokens["admin"]))
    assert resp.status_code == 400
    assert resp.json()["error"]["code"] == "invalid_arguments"


def test_scope_token_history_defaults_to_its_own_scope(client, seeded, tokens):
    commits = client.get("/api/v1/history", **h(tokens["own"])).json()["commits"]
    assert {c["author"] for c in commits} == {"ops-bot"}
    assert client.get("/api/v1/history?scope=web-bot", **h(tokens["own"])).status_code == 403


def test_commit_with_its_diff(client, seeded, tokens):
    etag = tag("# Memory\n\n- one\n- two\n")
    put(client, MEM, "# Memory\n\n- one\n- 2\n", tokens["own"], HTTP_IF_MATCH=etag)
    sha_ = seeded.log(MEM)[0].sha
    resp = client.get(f"/api/v1/commits/{sha_}", **h(tokens["own"]))
    assert resp.status_code == 200
    body = resp.json()
    assert body["sha"] == sha_ and body["author"] == "ops-bot"
    [fd] = body["files"]
    assert fd["path"] == MEM and fd["status"] == "modified"
    assert fd["additions"] == 1 and fd["deletions"] == 1
    lines = fd["hunks"][0]["lines"]
    assert {"op": "-", "text": "- two", "old_no": 4, "new_no": None} in lines
    assert {"op": "+", "text": "- 2", "old_no": None, "new_no": 4} in lines
    assert "-- two\n+- 2\n" in body["patch"]
    short = client.get(f"/api/v1/commits/{sha_[:10]}", **h(tokens["admin"]))
    assert short.json()["sha"] == sha_


def test_commit_lookup_errors(client, seeded, tokens):
    assert client.get("/api/v1/commits/" + "0" * 40, **h(tokens["admin"])).status_code == 404
    bad = client.get("/api/v1/commits/HEAD~1", **h(tokens["admin"]))
    assert bad.status_code == 400
    web = seeded.log("agents/web-bot/memory/MEMORY.md")[0].sha
    assert client.get(f"/api/v1/commits/{web}", **h(tokens["own"])).status_code == 403
