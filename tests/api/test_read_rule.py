"""One read rule for scope tokens (`Layout.readable_by`) across files, history and commits:
own scope and shared files only, default deny for what the layout cannot place, even for
names git C-quotes; and commit ids of 7 to 40 hex digits, ambiguous prefixes refused."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import pytest

from memoryui.store import Actor, Store

OWN_MEM = "agents/ops-bot/memory/MEMORY.md"
WEB_MEM = "agents/web-bot/memory/MEMORY.md"
SECRET = "web-bot's private runbook: the root password is hunter2"


@pytest.fixture
def tokens(make_token) -> dict:
    return {"own": make_token("ops-bot"), "admin": make_token(admin=True)}


@pytest.fixture
def ws(workspace) -> Store:
    workspace.write(OWN_MEM, "# ops memory\n", actor=Actor.agent("ops-bot"), tool="reflect")
    workspace.write(WEB_MEM, "# web memory\n", actor=Actor.agent("web-bot"), tool="reflect")
    return workspace


def h(token: str) -> dict:
    return {"HTTP_AUTHORIZATION": f"Bearer {token}"}


def git(root: Path, *args: str, data: bytes | None = None) -> str:
    return subprocess.run(["git", "-c", "user.name=web-bot",
                           "-c", "user.email=web-bot@agents.memoryui", *args], cwd=root,
                          input=data, capture_output=True, check=True).stdout.decode()


def native_commit(store: Store, files: dict[str, str], message: str = "native edit") -> str:
    """Files written and committed by an agent's own git, outside memoryui."""
    for rel, text in files.items():
        full = store.root / rel
        full.parent.mkdir(parents=True, exist_ok=True)
        full.write_text(text)
    git(store.root, "add", "--", *files)
    git(store.root, "commit", "-q", "-m", message)
    return git(store.root, "rev-parse", "HEAD").strip()


# -- commits and history -----------------------------------------------------------------------

@pytest.mark.parametrize("name", ['a"b.md', "tab\there.md", "back\\slash.md", "naïve.md",
                                  "bell\x07.md"], ids=repr)
def test_a_scope_token_never_reads_another_scopes_commit_with_an_odd_name(
        client, ws, tokens, name):
    path = f"agents/web-bot/memory/notes/{name}"
    sha = native_commit(ws, {path: SECRET + "\n"})
    for ref in (sha, sha[:7], sha[:12]):
        resp = client.get(f"/api/v1/commits/{ref}", **h(tokens["own"]))
        assert resp.status_code in (403, 404), (ref, resp.content)
        assert "hunter2" not in resp.content.decode()
        assert "web-bot/memory/notes" not in resp.content.decode()
    history = client.get("/api/v1/history?limit=500", **h(tokens["own"])).json()["commits"]
    assert sha not in {c["sha"] for c in history}
    assert client.get("/api/v1/history", data={"path": path},
                      **h(tokens["own"])).status_code in (400, 403)
    admin = client.get(f"/api/v1/commits/{sha}", **h(tokens["admin"]))
    assert admin.status_code == 200
    assert [f["path"] for f in admin.json()["files"]] == [path]  # exact, never C-quoted


@pytest.mark.parametrize("path", ['notes/x"y.md', "agents/ops-bot-old/notes.md/x",
                                  "random.md", "memory/elsewhere/x.md"])
def test_what_the_layout_cannot_place_is_denied_to_scope_tokens(client, ws, tokens, path):
    sha = native_commit(ws, {path: SECRET + "\n"})
    resp = client.get(f"/api/v1/commits/{sha}", **h(tokens["own"]))
    assert resp.status_code == 403 and "hunter2" not in resp.content.decode()
    listed = client.get("/api/v1/files", **h(tokens["own"])).json()["files"]
    assert path not in {f["path"] for f in listed}
    if '"' not in path:
        got = client.get(f"/api/v1/files/{path}", **h(tokens["own"]))
        assert got.status_code == 403 and "hunter2" not in got.content.decode()
        assert client.get(f"/api/v1/files/{path}", **h(tokens["admin"])).status_code == 200


def test_a_commit_touching_own_and_another_scopes_files_is_hidden(client, ws, tokens):
    sha = native_commit(ws, {OWN_MEM: "# ops memory\nmore\n", WEB_MEM: SECRET + "\n"},
                        "touch both scopes")
    own = client.get("/api/v1/history?limit=500", **h(tokens["own"])).json()
    assert sha not in {c["sha"] for c in own["commits"]}
    by_path = client.get(f"/api/v1/history?path={OWN_MEM}", **h(tokens["own"])).json()
    assert sha not in {c["sha"] for c in by_path["commits"]}
    assert len(by_path["commits"]) == 1  # its own reflect commit is still there
    assert client.get(f"/api/v1/commits/{sha}", **h(tokens["own"])).status_code == 403
    admin = client.get("/api/v1/history", **h(tokens["admin"])).json()["commits"]
    assert admin[0]["sha"] == sha


def test_history_pages_count_hidden_commits_so_paging_never_stalls(client, ws, tokens):
    for i in range(3):
        native_commit(ws, {OWN_MEM: f"# ops\n{i}\n", WEB_MEM: f"web {i}\n"}, f"both {i}")
    page = client.get(f"/api/v1/history?path={OWN_MEM}&limit=2", **h(tokens["own"])).json()
    assert page["commits"] == [] and page["next_offset"] == 2
    rest = client.get(f"/api/v1/history?path={OWN_MEM}&limit=2&offset=2",
                      **h(tokens["own"])).json()
    [mine] = rest["commits"]  # "both 0" is hidden; the agent's own reflect is shown
    assert mine["author"] == "ops-bot" and rest["next_offset"] == 4
    end = client.get(f"/api/v1/history?path={OWN_MEM}&limit=2&offset=4",
                     **h(tokens["own"])).json()
    assert end == {**end, "commits": [], "next_offset": None}


# -- files: shared kinds, directives -----------------------------------------------------------

def test_directives_are_readable_through_files_as_in_search(client, ws, tokens):
    lead = Actor.user("lead")
    ws.write("directives/memory.md", "Always record zanzibar deploys.\n", actor=lead,
             tool="edit")
    ws.write("agents/ops-bot/directives/style.md", "Be terse, zanzibar.\n", actor=lead,
             tool="edit")
    ws.write("agents/web-bot/directives/style.md", "Web zanzibar secret.\n", actor=lead,
             tool="edit")
    own = h(tokens["own"])
    assert client.get("/api/v1/files/directives/memory.md", **own).status_code == 200
    assert client.get("/api/v1/files/agents/ops-bot/directives/style.md",
                      **own).status_code == 200
    assert client.get("/api/v1/files/agents/web-bot/directives/style.md",
                      **own).status_code == 403
    listed = {f["path"] for f in client.get("/api/v1/files", **own).json()["files"]}
    assert {"directives/memory.md", "agents/ops-bot/directives/style.md", OWN_MEM} <= listed
    assert not {p for p in listed if p.startswith("agents/web-bot/")}
    found = client.get("/api/v1/search?q=zanzibar", **own)
    assert found.status_code == 200, found.content
    hits = {r["path"] for r in found.json()["results"]}
    assert hits == {"directives/memory.md", "agents/ops-bot/directives/style.md"}


# -- commit ids ---------------------------------------------------------------------------------

@pytest.mark.parametrize("ref", ["abc12", "abc123", "HEAD~1", "g" * 7, "0123456z"])
def test_commit_ids_need_seven_to_forty_hex_digits(client, ws, tokens, ref):
    resp = client.get(f"/api/v1/commits/{ref}", **h(tokens["admin"]))
    assert resp.status_code == 400
    assert "7 to 40 hex digits" in resp.json()["error"]["message"]


def test_a_short_id_of_seven_digits_works_and_an_unknown_one_is_404(client, ws, tokens):
    sha = ws.log(OWN_MEM)[0].sha
    assert client.get(f"/api/v1/commits/{sha[:7]}", **h(tokens["own"])).json()["sha"] == sha
    assert client.get(f"/api/v1/commits/{sha[:7].upper()}",
                      **h(tokens["own"])).json()["sha"] == sha
    unknown = "0" * 40 if not sha.startswith("0000000") else "f" * 40
    resp = client.get(f"/api/v1/commits/{unknown[:9]}", **h(tokens["admin"]))
    assert resp.status_code == 404 and resp.json()["error"]["code"] == "not_found"


def test_an_ambiguous_prefix_is_a_400_that_asks_for_more_digits(client, ws, tokens):
    # Two objects whose ids share 7 hex digits: find two blob texts by their git ids.
    seen: dict[str, bytes] = {}
    i = 0
    while True:
        data = f"blob {i}\n".encode()
        oid = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
        if oid[:7] in seen:
            pair = (seen[oid[:7]], data)
            break
        seen[oid[:7]] = data
        i += 1
    for data in pair:
        git(ws.root, "hash-object", "-w", "--stdin", data=data)
    resp = client.get(f"/api/v1/commits/{oid[:7]}", **h(tokens["admin"]))
    assert resp.status_code == 400
    assert "ambiguous" in resp.json()["error"]["message"]
    assert "more digits" in resp.json()["error"]["message"]
