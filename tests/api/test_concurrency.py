"""Through the real server: 4 worker processes, 16 clients, 2,000 Duragent `remember` calls
on 5 scopes. Every entry must be on disk exactly once, in its own agent's daily log, and in
a commit authored by that agent; the repository must be clean and consistent afterwards."""

from __future__ import annotations

import collections
import queue
import re
import subprocess
import threading
import uuid

from memoryui.search import SearchIndex
from memoryui.store.housekeeping import wait_for_housekeeping
from tests.api.realserver import RealServer

SCOPES = ["alpha", "bravo", "charlie", "delta", "echo"]
CALLS = 2000
CLIENTS = 16
ENTRY_RE = re.compile(r"entry-([a-z]+)-(\d+)-([0-9a-f]{32})")


def git(ws, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=ws, capture_output=True, text=True,
                          check=True).stdout


def test_2000_concurrent_remembers_land_once_each_attributed(tmp_path):
    server = RealServer(tmp_path, workers=4)
    server.migrate()
    tokens = {s: server.token(s) for s in SCOPES}
    assert all(t.startswith("mui_") for t in tokens.values())

    work: queue.Queue = queue.Queue()
    sent: dict[str, str] = {}
    for i in range(CALLS):
        scope = SCOPES[i % len(SCOPES)]
        content = f"entry-{scope}-{i}-{uuid.uuid4().hex}"
        sent[content] = scope
        work.put((scope, content))
    failures: list[str] = []
    results: dict[str, str] = {}
    lock = threading.Lock()

    def client() -> None:
        # A fresh connection per call (RealServer.request): a kept-alive one that sat idle
        # while this thread waited for a CPU would be dropped by uvicorn after 5 s.
        while True:
            try:
                scope, content = work.get_nowait()
            except queue.Empty:
                return
            try:
                status, body = server.call_tool(tokens[scope], scope, "remember",
                                                {"content": content})
            except Exception as exc:  # noqa: BLE001 - reported below
                with lock:
                    failures.append(f"{content}: {exc!r}")
                continue
            with lock:
                if status != 200:
                    failures.append(f"{content}: {status} {body}")
                else:
                    results[content] = body["result"]

    with server:
        server.start()
        threads = [threading.Thread(target=client) for _ in range(CLIENTS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=900)  # a bound on a hang, generous for a loaded CI machine
        assert not any(t.is_alive() for t in threads)
    # `with` stopped the server with SIGTERM: pending commits must have been made, and
    # every entry indexed (by the supervisor as it committed them, else by the worker's
    # drain at its exit), whichever worker served the write.
    assert failures == []
    index = SearchIndex(server.tmp / "search.sqlite3", catch_up_interval=3600,
                        background=False)
    for content in list(sent)[:20]:
        assert index.search(content, catch_up=False).total == 1, content
    index.close()
    assert len(results) == CALLS
    for content, result in results.items():
        assert result.startswith(f"Remembered. Written to agents/{sent[content]}/memory/daily/")

    ws = server.workspace
    # Every entry exactly once on disk, in its own agent's daily log.
    seen: collections.Counter = collections.Counter()
    for path in sorted(ws.rglob("*.md")):
        rel = path.relative_to(ws).as_posix()
        text = path.read_text()
        for m in ENTRY_RE.finditer(text):
            seen[m.group(0)] += 1
            assert rel.startswith(f"agents/{m.group(1)}/memory/daily/"), (rel, m.group(0))
        if "/daily/" in rel:
            assert text.startswith(f"# {path.stem}\n\n## "), rel
            assert text.count(f"# {path.stem}\n") == 1, rel
    assert set(seen) == set(sent)
    assert [c for c, n in seen.items() if n != 1] == []

    # Nothing left uncommitted, and the repository is consistent.
    assert git(ws, "status", "--porcelain", "--untracked-files=all") == ""
    wait_for_housekeeping(ws)  # a repack beside fsck: loose objects "missing"
    fsck = subprocess.run(["git", "fsck", "--full", "--strict"], cwd=ws, capture_output=True,
                          text=True)
    assert fsck.returncode == 0, fsck.stdout + fsck.stderr

    # Every entry was added by a commit authored by its own agent.
    added_by: dict[str, str] = {}
    author = None
    for line in git(ws, "log", "--format=AUTHOR %an <%ae>", "-p", "--no-color").split("\n"):
        if line.startswith("AUTHOR "):
            author = line[len("AUTHOR "):]
        elif line.startswith("+") and not line.startswith("+++"):
            for m in ENTRY_RE.finditer(line):
                assert m.group(0) not in added_by, f"{m.group(0)} added twice"
                added_by[m.group(0)] = author
    assert set(added_by) == set(sent)
    wrong = {c: a for c, a in added_by.items()
             if a != f"{sent[c]} <{sent[c]}@agents.memoryui>"}
    assert wrong == {}
    for scope in SCOPES:  # the brief's own check, per agent
        log = git(ws, "log", f"--author=^{scope} <", "-p", "--no-color")
        mine = [c for c, s in sent.items() if s == scope]
        assert all(f"+{c}" in log for c in mine)
