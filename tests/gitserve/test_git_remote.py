"""memoryui as the hosts' git remote, with the real git client over smart HTTP against a
running server: clone, push within the host token's scopes, refusals (scope, non-fast-
forward, force, delete, other refs), and what a push does (files, authors, the pusher,
search, the review queue, the activity feed)."""

from __future__ import annotations

import base64
import datetime as dt
import json
import subprocess
import urllib.parse
import uuid
from pathlib import Path

from tests.api.realserver import RealServer
from tests.gitserve.hosts import Host, git, workspace_has
from tests.waiting import wait_for


def _head(ws: Path) -> str:
    return git(ws, "rev-parse", "HEAD", check=False).stdout.strip()


def _host(remote: RealServer, tmp_path: Path, name: str = "host", token: str = "host") -> Host:
    wait_for("the seed commit", lambda: len(_head(remote.workspace)) == 40, timeout=120)  # the seed committed
    host = Host(remote, remote.tokens[token], tmp_path / name, name)  # type: ignore[attr-defined]
    host.clone()
    return host


def test_clone_reads_the_workspace_and_push_lands_with_its_author(remote: RealServer,
                                                                   tmp_path: Path) -> None:
    host = _host(remote, tmp_path)
    assert "seeded by the agent" in (host.folder / "agents/alpha/memory/MEMORY.md").read_text()
    today = dt.date.today().isoformat()
    daily = f"agents/alpha/memory/daily/{today}.md"
    old = (host.folder / daily).read_text() if (host.folder / daily).exists() else f"# {today}\n"
    sha = host.commit({daily: old + "\n## 09:15\n\nThe gateway moved to port 7443.\n",
                       "agents/bravo/memory/notes/ports.md": "# ports\n\nwaypoint 7443\n",
                       "memory/world/networking.md": "# networking\n\nAll on 7443.\n"},
                      "dagu: nightly memory")
    pushed = host.push()
    assert pushed.returncode == 0, pushed.stderr
    ws = remote.workspace
    assert _head(ws) == sha  # a fast-forward: the host's own commit, its author kept
    assert git(ws, "log", "-1", "--format=%an <%ae>", sha).stdout.strip() == \
        "host <host@hosts.example>"
    assert "port 7443" in (ws / daily).read_text()  # the working tree follows
    assert git(ws, "status", "--porcelain").stdout == ""  # and git's index
    assert git(ws, "fsck", "--no-progress").returncode == 0
    # The pusher is recorded, and the activity feed says "via git push" with its name.
    assert f"{sha} " in (ws / ".git/memoryui/pushed").read_text()
    session = remote.sign_in("lead", "lead-password-1")
    status, page = remote.request("GET", "/activity/", headers={"Cookie": session})
    assert status == 200 and "via git push" in page.decode() and "dagu-1" in page.decode()
    # Search finds the pushed text, the review queue lists the pushed entry.
    query = urllib.parse.urlencode({"q": "gateway"})

    def found() -> bool:
        status, raw = remote.request("GET", f"/api/v1/search?{query}", headers={
            "Authorization": f"Bearer {remote.tokens['alpha']}"})  # type: ignore[attr-defined]
        return status == 200 and any(h["path"] == daily for h in json.loads(raw)["results"])
    wait_for("the pushed entry in search", found, timeout=120)
    status, page = remote.request("GET", "/review/", headers={"Cookie": session})
    assert status == 200 and "The gateway moved to port 7443." in page.decode()
    # Another clone sees the push (fetch goes through the same served ref).
    other = _host(remote, tmp_path, "second")
    assert other.git("rev-parse", "HEAD").stdout.strip() == sha


def test_a_push_of_commits_made_days_ago_is_found_by_the_very_next_search(
        remote: RealServer, tmp_path: Path) -> None:
    """A host that committed while offline pushes later: its commits carry last week's
    dates. Every search right after the push finds what it brought, on fresh connections
    (either worker), before the committer or a catch-up scan has indexed it."""
    host = _host(remote, tmp_path, "offline")
    word = f"zq{uuid.uuid4().hex[:12]}"
    note = "agents/alpha/memory/notes/offline.md"
    host.commit({note: f"# offline\n\nThe {word} relay was replaced.\n"}, "written offline")
    week_ago = {"GIT_AUTHOR_DATE": "@1700000000 +0000", "GIT_COMMITTER_DATE": "@1700000000 +0000"}
    git(host.folder, *host.config, "commit", "--amend", "-q", "--no-edit", env=week_ago)
    pushed = host.push()
    assert pushed.returncode == 0, pushed.stderr
    query = urllib.parse.urlencode({"q": word, "mode": "keyword"})  # (meaning ranks others too)
    for i in range(10):
        status, raw = remote.request("GET", f"/api/v1/search?{query}", headers={
            "Authorization": f"Bearer {remote.tokens['alpha']}"})  # type: ignore[attr-defined]
        assert status == 200, raw
        assert [h["path"] for h in json.loads(raw)["results"]] == [note], i


def test_push_outside_the_tokens_scopes_is_refused_whole_and_its_objects_dropped(
        remote: RealServer, tmp_path: Path) -> None:
    host = _host(remote, tmp_path)
    before = _head(remote.workspace)
    host.commit({"agents/alpha/memory/notes/fine.md": "# fine\n\nallowed\n"}, "allowed")
    bad = host.commit({"agents/charlie/memory/MEMORY.md": "# charlie\n\nnot yours\n"},
                      "reaching into charlie")
    blob = host.git("rev-parse", "HEAD:agents/charlie/memory/MEMORY.md").stdout.strip()
    pushed = host.push()
    assert pushed.returncode != 0
    assert (f"memoryui refused the push: 'agents/charlie/memory/MEMORY.md' in commit "
            f"{bad[:12]}: scope 'charlie' is not one this host token pushes") in pushed.stderr
    assert _head(remote.workspace) == before  # nothing half-applied: not even "allowed"
    assert not workspace_has(remote.workspace, bad) and not workspace_has(remote.workspace, blob)
    assert not list((remote.workspace / ".git/objects").glob("tmp_objdir*"))
    # Shared kinds need their grant: world is granted to this host, the global memory not.
    host.git("reset", "-q", "--hard", "HEAD~1")
    host.commit({"memory/MEMORY.md": "# global\n"}, "global")
    pushed = host.push()
    assert "this host token may not push global (create it with --global)" in pushed.stderr
    host.git("reset", "-q", "--hard", "HEAD~1")
    host.commit({"README.md": "hello\n"}, "a file outside the layout")
    assert "the duragent layout has no place for this path" in host.push().stderr


def test_non_fast_forward_force_delete_and_other_refs_are_refused(remote: RealServer,
                                                                  tmp_path: Path) -> None:
    first, second = _host(remote, tmp_path, "first"), _host(remote, tmp_path, "second")
    first.commit({"agents/alpha/memory/notes/first.md": "# first\n"}, "first")
    assert first.push().returncode == 0
    tip = _head(remote.workspace)
    second.commit({"agents/alpha/memory/notes/second.md": "# second\n"}, "second")
    stale = second.push()
    assert stale.returncode != 0 and "fetch first" in stale.stderr
    forced = second.push("--force")
    assert forced.returncode != 0 and _head(remote.workspace) == tip
    deleted = second.git("push", "origin", ":main", check=False)
    assert deleted.returncode != 0 and _head(remote.workspace) == tip
    other_ref = second.git("push", "origin", "HEAD:refs/heads/feature", check=False)
    assert other_ref.returncode != 0 and "takes pushes to refs/heads/main only" in \
        other_ref.stderr
    # The host pulls and pushes again, as with any git server.
    second.git("pull", "-q", "--no-rebase", "origin", "main")
    assert second.push().returncode == 0
    assert (remote.workspace / "agents/alpha/memory/notes/second.md").exists()
    assert (remote.workspace / "agents/alpha/memory/notes/first.md").exists()


def test_credentials_scope_tokens_and_unknown_paths(remote: RealServer) -> None:
    base = "/git/workspace.git/info/refs?service=git-upload-pack"
    reply = remote.send("GET", base)
    assert reply.status == 401 and reply.headers["WWW-Authenticate"] == 'Basic realm="memoryui"'

    def basic(token: str) -> dict[str, str]:
        return {"Authorization": "Basic " + base64.b64encode(f"x:{token}".encode()).decode()}
    assert remote.send("GET", base, headers=basic("mui_not-a-token")).status == 401
    scoped = remote.send("GET", base, headers=basic(remote.tokens["alpha"]))  # type: ignore[attr-defined]
    assert scoped.status == 403 and b"no git access" in scoped.body
    host = basic(remote.tokens["host"])  # type: ignore[attr-defined]
    assert remote.send("GET", base, headers=host).status == 200
    for path in ("/git/workspace.git/HEAD", "/git/workspace.git/config",
                 "/git/workspace.git/info/refs", "/git/other.git/info/refs",
                 "/git/workspace.git/../memoryui/journal.jsonl"):
        assert remote.send("GET", path, headers=host).status == 404, path
    # A malformed pack: git's own error, never a 500, nothing applied.
    before = _head(remote.workspace)
    reply = remote.send("POST", "/git/workspace.git/git-receive-pack",
                        b"0094" + b"0" * 40 + b" " + b"1" * 40 + b" refs/heads/main\0 "
                        b"report-status\n0000PACK garbage that is not a pack",
                        headers={**host, "Content-Type": "application/x-git-receive-pack-request"})
    assert reply.status < 500 and _head(remote.workspace) == before


def test_a_revoked_token_stops_the_next_request(remote: RealServer, tmp_path: Path) -> None:
    token = remote.token("--git", "--scopes", "alpha", "--name", "soon-revoked")
    wait_for("the seed commit", lambda: len(_head(remote.workspace)) == 40, timeout=120)
    host = Host(remote, token, tmp_path / "revoked", "revoked")
    host.clone()
    host.commit({"agents/alpha/memory/notes/late.md": "# late\n"}, "late")
    remote.manage("token", "revoke", token)
    before = _head(remote.workspace)
    pushed = host.push()
    assert pushed.returncode != 0 and _head(remote.workspace) == before
    assert "Authentication failed" in pushed.stderr or "401" in pushed.stderr, pushed.stderr


def test_symlink_submodule_attributes_names_and_size_are_refused(remote: RealServer,
                                                                 tmp_path: Path) -> None:
    host = _host(remote, tmp_path)
    before = _head(remote.workspace)
    notes = host.folder / "agents/alpha/memory/notes"
    notes.mkdir(parents=True, exist_ok=True)
    cases: list[tuple[str, str]] = []
    (notes / "link.md").symlink_to("/etc/passwd")
    cases.append(("symlink", "a symbolic link"))
    for label, expected in cases:
        host.git("add", "-A")
        host.git("commit", "-q", "-m", label)
        pushed = host.push()
        assert pushed.returncode != 0 and expected in pushed.stderr, (label, pushed.stderr)
        host.git("reset", "-q", "--hard", "HEAD~1")
    head = host.git("rev-parse", "HEAD").stdout.strip()
    # A gitlink (a submodule entry) with its .gitmodules.
    host.git("update-index", "--add", "--cacheinfo", f"160000,{head},agents/alpha/memory/sub")
    host.git("commit", "-q", "-m", "gitlink")
    assert "a submodule" in host.push().stderr
    host.git("reset", "-q", "--hard", "HEAD~1")
    for path, text, expected in (
            (".gitmodules", "[submodule \"x\"]\n\tpath = x\n\turl = ../x\n", "hidden names"),
            ("agents/alpha/.gitattributes", "* filter=lfs\n", "hidden names"),
            ("agents/alpha/memory/notes/big.md", "x" * (3 * 1024 * 1024),
             "over the limit of 1048576 bytes (MEMORYUI_MAX_BODY")):
        host.commit({path: text}, path)
        pushed = host.push()
        assert pushed.returncode != 0 and expected in pushed.stderr, (path, pushed.stderr)
        host.git("reset", "-q", "--hard", "HEAD~1")
    # Names git can store but memoryui never holds: a control character, a '..' entry.
    blob = subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=host.folder, input="x\n",
                          capture_output=True, text=True, check=True).stdout.strip()
    for name, expected in (("bad\x01name.md", "control"), ("..", "reach outside")):
        tree = subprocess.run(["git", "mktree"], cwd=host.folder, capture_output=True,
                              input=f"100644 blob {blob}\t{name}\n", text=True).stdout.strip()
        if not tree:
            continue  # this git refuses to write such a tree at all
        commit = host.git("commit-tree", tree, "-p", "HEAD", "-m", "odd name").stdout.strip()
        pushed = host.git("push", "origin", f"{commit}:refs/heads/main", check=False)
        assert pushed.returncode != 0, name
        assert expected in pushed.stderr or "fsck" in pushed.stderr or "error" in \
            pushed.stderr, pushed.stderr
    assert _head(remote.workspace) == before
    assert git(remote.workspace, "fsck", "--no-progress").returncode == 0


def test_protocol_v2_and_a_gzip_request_body(remote: RealServer) -> None:
    import gzip

    host = {"Authorization": "Basic " + base64.b64encode(
        f"x:{remote.tokens['host']}".encode()).decode()}  # type: ignore[attr-defined]
    v2 = remote.send("GET", "/git/workspace.git/info/refs?service=git-upload-pack",
                     headers={**host, "Git-Protocol": "version=2"})
    assert v2.status == 200 and v2.body.startswith(b"000eversion 2\n")
    wait_for("the seed commit", lambda: len(_head(remote.workspace)) == 40, timeout=120)
    want = f"want {_head(remote.workspace)}\n"
    body = f"{len(want) + 4:04x}{want}00000009done\n".encode()
    reply = remote.send("POST", "/git/workspace.git/git-upload-pack", gzip.compress(body),
                        headers={**host, "Content-Encoding": "gzip",
                                 "Content-Type": "application/x-git-upload-pack-request"})
    assert reply.status == 200 and b"PACK" in reply.body
