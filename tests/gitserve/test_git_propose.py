"""Write policies on git pushes, with the real git client over smart HTTP: a `propose` file
pushed to the branch is refused with the command that proposes it, `git push origin
HEAD:refs/for/main` turns the change into a proposal (extended by the next such push), the
lead approves it and the host pulls it cleanly; `read` files, other scopes and pushes with
nothing to propose are refused."""

from __future__ import annotations

import datetime as dt
import json
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest

from tests.api.realserver import RealServer
from tests.gitserve.conftest import running_remote
from tests.gitserve.hosts import Host, git, workspace_has
from tests.waiting import wait_for

MEMORY = "agents/alpha/memory/MEMORY.md"
WORLD = "memory/world/networking.md"
FOR_MAIN = "HEAD:refs/for/main"


@pytest.fixture(scope="module")
def hook() -> Iterator[tuple[str, list[dict]]]:
    """A chat's incoming webhook: what memoryui POSTs to it."""
    got: list[dict] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            got.append(json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0")))))
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}/hook", got
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def policed(tmp_path_factory: pytest.TempPathFactory, hook: tuple[str, list[dict]]
            ) -> Iterator[RealServer]:
    with running_remote(tmp_path_factory.mktemp("gitpropose"),
                        {"MEMORYUI_PROPOSAL_WEBHOOK": hook[0]}) as server:
        server.manage("policy", "alpha", "memory", "propose")
        server.manage("policy", "bravo", "note", "read")
        server.tokens["admin"] = server.token("--admin", "--name", "lead-bot")  # type: ignore[attr-defined]
        yield server


def _host(server: RealServer, tmp_path: Path, name: str = "host", token: str = "host") -> Host:
    wait_for("the seed commit", lambda: len(git(server.workspace, "rev-parse", "HEAD",
                                                check=False).stdout.strip()) == 40, timeout=120)
    host = Host(server, server.tokens[token], tmp_path / name, name)  # type: ignore[attr-defined]
    host.clone()
    host.git("config", "pull.rebase", "false")
    return host


def _api(server: RealServer, method: str, path: str, body: dict | None = None) -> tuple[int, dict]:
    status, raw = server.request(method, path, json.dumps(body).encode() if body is not None
                                 else None, {"Authorization": f"Bearer {server.tokens['admin']}",  # type: ignore[attr-defined]
                                             "Content-Type": "application/json"})
    return status, json.loads(raw)


def _refs(ws: Path) -> str:
    return git(ws, "for-each-ref", "--format=%(refname)").stdout


def test_a_propose_file_goes_in_by_refs_for_and_comes_back_by_pull(
        policed: RealServer, hook: tuple[str, list[dict]], tmp_path: Path) -> None:
    ws = policed.workspace
    host = _host(policed, tmp_path)
    before = (ws / MEMORY).read_text()
    first = host.commit({MEMORY: "# alpha\n\nThe gateway listens on 7443.\n"}, "dagu: memory")
    pushed = host.push()
    assert pushed.returncode != 0
    assert "policy propose" in pushed.stderr and f"git push origin {FOR_MAIN}" in pushed.stderr
    assert MEMORY in pushed.stderr and first[:12] in pushed.stderr
    assert not workspace_has(ws, first)  # git's quarantine dropped the push

    host.commit({WORLD: "# networking\n\nAll on 7443.\n"}, "dagu: world")  # policy write
    proposed = host.git("push", "origin", FOR_MAIN, check=False)
    assert proposed.returncode == 0, proposed.stderr
    assert re.search(r"proposed [0-9a-f]{12} for " + re.escape(WORLD), proposed.stderr)
    found = re.search(r"proposed ([0-9a-f]{12}) for " + re.escape(MEMORY) +
                      r" \(via git push, dagu-1\): (\S+)", proposed.stderr)
    assert found, proposed.stderr
    pid, url = found.groups()
    assert url == f"{policed.base_url}/review/proposals/{pid}/"
    assert (ws / MEMORY).read_text() == before  # nothing changes before a lead approves
    assert "refs/for/" not in _refs(ws) and f"refs/memoryui/proposals/alpha/{pid}" in _refs(ws)
    status, data = _api(policed, "GET", f"/api/v1/proposals/{pid}")
    assert status == 200 and data["proposal"]["status"] == "open"
    assert data["proposal"]["proposer"] == "host" and data["proposal"]["scope"] == "alpha"
    assert "7443" in data["proposal"]["proposed_text"]
    assert (ws / WORLD).exists() is False  # a write-policy file proposed too: the host asked
    wait_for("the webhook's POSTs", lambda: len(hook[1]) == 2, timeout=60)
    assert {(h["event"], h["path"]) for h in hook[1]} == {("proposal.created", MEMORY),
                                                          ("proposal.created", WORLD)}
    assert pid in {h["id"] for h in hook[1]}

    host.commit({MEMORY: "# alpha\n\nThe gateway listens on 7443 (TLS).\n"}, "dagu: memory 2")
    again = host.git("push", "origin", FOR_MAIN, check=False)
    assert again.returncode == 0, again.stderr
    assert f"updated proposal {pid} for {MEMORY}" in again.stderr
    status, data = _api(policed, "GET", f"/api/v1/proposals/{pid}")
    assert "(TLS)" in data["proposal"]["proposed_text"] and len(data["proposal"]["commits"]) == 2
    same = host.git("push", "origin", FOR_MAIN, check=False)  # pushed again as it is
    assert same.returncode == 0, same.stderr
    assert f"{MEMORY}: proposal {pid} has this version already" in same.stderr
    status, listed = _api(policed, "GET", "/api/v1/proposals")
    assert [p["id"] for p in listed["proposals"] if p["path"] == MEMORY] == [pid]
    session = policed.sign_in("lead", "lead-password-1")
    status, page = policed.request("GET", f"/review/proposals/{pid}/",
                                   headers={"Cookie": session})
    assert status == 200 and "(TLS)" in page.decode() and "via git push (dagu-1)" in page.decode()
    assert len(hook[1]) == 2  # extending a proposal is not a new one

    status, done = _api(policed, "POST", f"/api/v1/proposals/{pid}/approve", {})
    assert status == 200, done
    assert (ws / MEMORY).read_text() == "# alpha\n\nThe gateway listens on 7443 (TLS).\n"
    pulled = host.git("pull", "origin", "main", check=False)
    assert pulled.returncode == 0, pulled.stderr
    assert host.git("status", "--porcelain").stdout == ""
    assert host.git("merge-base", "--is-ancestor", done["commit"], "HEAD").returncode == 0
    # The host's own commits of the file, now approved, no longer stop a push of the branch.
    today = dt.date.today().isoformat()
    daily = f"agents/alpha/memory/daily/{today}.md"
    old = (host.folder / daily).read_text() if (host.folder / daily).exists() else f"# {today}\n"
    sha = host.commit({daily: old + "\n## 10:00\n\nProposal approved.\n"}, "dagu: daily")
    later = host.push()
    assert later.returncode == 0, later.stderr
    assert git(ws, "rev-parse", "HEAD").stdout.strip() == sha


def test_read_files_other_scopes_and_nothing_to_propose_are_refused(policed: RealServer,
                                                                     tmp_path: Path) -> None:
    ws = policed.workspace
    host = _host(policed, tmp_path)
    bad = host.commit({"agents/bravo/memory/notes/ports.md": "# ports\n\n7443\n"}, "note")
    for target in ("HEAD:main", FOR_MAIN):
        pushed = host.git("push", "origin", target, check=False)
        assert pushed.returncode != 0
        assert "read-only for this host (policy read)" in pushed.stderr, pushed.stderr
        assert bad[:12] in pushed.stderr
        assert not workspace_has(ws, bad)

    other = _host(policed, tmp_path, "other", "other")
    outside = other.commit({MEMORY: "# alpha\n\nnot yours\n"}, "reaching into alpha")
    pushed = other.git("push", "origin", FOR_MAIN, check=False)
    assert pushed.returncode != 0 and "scope 'alpha' is not one this host token pushes" in \
        pushed.stderr
    assert not workspace_has(ws, outside)

    host.git("reset", "-q", "--hard", "origin/main")
    binary = host.commit({"agents/alpha/memory/notes/blob.md": b"\xff\xfe not text\n"}, "binary")
    pushed = host.git("push", "origin", FOR_MAIN, check=False)
    assert pushed.returncode != 0 and "not UTF-8 text" in pushed.stderr, pushed.stderr
    assert not workspace_has(ws, binary)

    daily_host = _host(policed, tmp_path, "daily")
    today = dt.date.today().isoformat()
    daily = f"agents/alpha/memory/daily/{today}.md"
    path = daily_host.folder / daily
    old = path.read_text() if path.exists() else f"# {today}\n"
    daily_host.commit({daily: old + "\n## 11:00\n\nOnly a log entry.\n"}, "dagu: daily")
    pushed = daily_host.git("push", "origin", FOR_MAIN, check=False)
    assert pushed.returncode != 0
    assert "nothing to propose: daily logs are never proposals" in pushed.stderr
    assert "git push origin HEAD:main" in pushed.stderr
    assert "refs/for/" not in _refs(ws)
