"""Pushes racing agents' HTTP writes and each other, against a running server: every write
an agent had acknowledged is in the final tree, every push either landed whole or was
refused as non-fast-forward (the host pulls and pushes again), and `git fsck` is clean."""

from __future__ import annotations

import threading
import uuid
from pathlib import Path

from tests.api.realserver import RealServer
from tests.gitserve.hosts import Host, git
from tests.waiting import wait_for

WRITES = 40
PUSHES = 4
ATTEMPTS = 60  # bounds a livelock only


def _push_until_landed(host: Host, files: dict[str, str]) -> None:
    """Commit, then push; on a refusal (the workspace moved) pull and push again."""
    host.commit(files, f"{host.name}: {', '.join(files)}")
    for _ in range(ATTEMPTS):
        pushed = host.push()
        if pushed.returncode == 0:
            return
        # refused by git's own check, by pre-receive, or at the branch move when an agent's
        # write landed in between: each time git's report says why, and exit 1
        assert pushed.returncode == 1 and "fetch first" in pushed.stderr, pushed.stderr
        assert "refused the push: '" not in pushed.stderr, pushed.stderr  # never a rule
        host.git("pull", "-q", "--no-rebase", "--no-edit", "origin", "main")
    raise AssertionError(f"{host.name} never landed its push")


def test_agent_writes_and_two_hosts_pushing_lose_nothing(remote: RealServer,
                                                         tmp_path: Path) -> None:
    wait_for("the seed commit", lambda: len(git(remote.workspace, "rev-parse", "HEAD",
                                                check=False).stdout.strip()) == 40, 120)
    hosts = [Host(remote, remote.tokens["host"], tmp_path / "dagu", "dagu"),  # type: ignore[attr-defined]
             Host(remote, remote.tokens["other"], tmp_path / "zs", "zs")]  # type: ignore[attr-defined]
    for host in hosts:
        host.clone()
    acknowledged: list[str] = []
    failures: list[str] = []

    def agent() -> None:
        for i in range(WRITES):
            marker = f"entry-{i}-{uuid.uuid4().hex}"
            status, body = remote.call_tool(remote.tokens["alpha"], "alpha", "remember",  # type: ignore[attr-defined]
                                            {"content": marker})
            if status == 200:
                acknowledged.append(marker)
            else:
                failures.append(f"{status} {body}")

    landed: dict[str, list[str]] = {h.name: [] for h in hosts}

    def pusher(host: Host, scope: str) -> None:
        for n in range(PUSHES):
            path = f"agents/{scope}/memory/notes/{host.name}-{n}.md"
            _push_until_landed(host, {path: f"# {host.name} {n}\n\npushed while agents wrote\n"})
            landed[host.name].append(path)

    threads = [threading.Thread(target=agent),
               threading.Thread(target=pusher, args=(hosts[0], "alpha")),
               threading.Thread(target=pusher, args=(hosts[1], "charlie"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=900)
        assert not t.is_alive()
    assert not failures and len(acknowledged) == WRITES
    ws = remote.workspace

    def committed() -> bool:
        text = git(ws, "log", "-p", "--format=", "HEAD", "--",
                   "agents/alpha/memory/daily").stdout
        return all(m in text for m in acknowledged)
    wait_for("every acknowledged write committed", committed, timeout=300)
    daily = "".join(p.read_text() for p in (ws / "agents/alpha/memory/daily").glob("*.md"))
    assert all(m in daily for m in acknowledged)  # nothing lost from the working tree
    for paths in landed.values():
        assert len(paths) == PUSHES
        for path in paths:
            assert (ws / path).is_file(), path
            assert git(ws, "cat-file", "-e", f"HEAD:{path}", check=False).returncode == 0
    assert git(ws, "fsck", "--no-progress").returncode == 0
    assert git(ws, "status", "--porcelain").stdout.strip() == ""
    # Every host can fetch the result: the served ref is the workspace's HEAD.
    for host in hosts:
        host.git("pull", "-q", "--no-rebase", "--no-edit", "origin", "main")
    head = git(ws, "rev-parse", "HEAD").stdout.strip()
    for host in hosts:
        assert host.git("merge-base", "--is-ancestor", head, "HEAD", check=False).returncode == 0
