"""MCP over real HTTP: the official `mcp` client against `python manage.py serve` with two
worker processes, in both protocol eras (2026-07-28 discovery and the legacy handshake)."""

from __future__ import annotations

import concurrent.futures
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from memoryui.tools.registry import tools_for

ROOT = Path(__file__).resolve().parents[2]
LISTING = "Here're the files and directories up to 2 levels deep in {}, excluding hidden items:"
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "test", "version": "1"}}}
JSON_HEADERS = {"Content-Type": "application/json",
                "Accept": "application/json, text/event-stream"}
# httpx2 gives up after 5 s by default: far too short for a loaded CI machine.
TIMEOUT = httpx2.Timeout(120)


@dataclass
class Server:
    url: str
    workspace: Path
    ops: str  # token for scope ops-bot
    other: str  # token for scope other-bot
    admin: str


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _manage(env: dict, *args: str) -> str:
    proc = subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _token(env: dict, *args: str) -> str:
    last = _manage(env, "token", "create", *args).strip().splitlines()[-1]
    assert re.fullmatch(r"mui_[A-Za-z0-9_-]+", last), last
    return last


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("mcp")
    env = {**os.environ, "MEMORYUI_WORKSPACE": str(tmp / "ws"), "MEMORYUI_VAR_DIR": str(tmp),
           "DATABASE_URL": f"sqlite:///{tmp}/db.sqlite3", "MEMORYUI_LAYOUT": "duragent",
           "ALLOWED_HOSTS": "localhost,127.0.0.1", "DJANGO_SETTINGS_MODULE": "memoryui.settings"}
    _manage(env, "migrate", "-v", "0")
    tokens = _token(env, "ops-bot"), _token(env, "other-bot"), _token(env, "--admin")
    port = _free_port()
    log = (tmp / "server.log").open("w")
    proc = subprocess.Popen(
        [sys.executable, "manage.py", "serve", "--workers", "2", "--bind",
         f"127.0.0.1:{port}", "--commit-delay", "0", "--no-migrate"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180  # a bound on a hang; CI is a busy 2-core machine
        while True:
            assert proc.poll() is None, (tmp / "server.log").read_text()
            try:
                if httpx2.get(f"{base}/healthz", timeout=10).status_code == 200:
                    break
            except httpx2.HTTPError:
                pass
            assert time.monotonic() < deadline, "server did not start"
            time.sleep(0.2)
        yield Server(f"{base}/mcp", tmp / "ws", *tokens)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        log.close()


Flow = Callable[[Client], Awaitable[Any]]


def session(url: str, token: str, mode: str = "auto", **headers: str
            ) -> Callable[[Flow], Any]:
    """Run `fn(client)` inside one MCP client connection; returns what fn returns."""

    async def go(fn: Flow) -> Any:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}", **headers},
                                  timeout=TIMEOUT)
        async with http, Client(streamable_http_client(url, http_client=http), mode=mode) as c:
            return await fn(c)

    return lambda fn: _in_own_thread(lambda: anyio.run(go, fn))


def _in_own_thread(call: Callable[[], Any]) -> Any:
    """Run an event loop in a fresh thread: the browser tests' Playwright keeps a loop
    running in this worker's main thread, where a second `anyio.run` is refused."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(call).result()


async def text_of(client: Client, name: str, args: dict) -> tuple[str, bool]:
    result = await client.call_tool(name, args)
    return result.content[0].text, bool(result.is_error)


def git(ws: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=ws, capture_output=True, text=True,
                          check=True).stdout


# -- listing ----------------------------------------------------------------------------

@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_lists_the_layout_tools_with_schemas_and_hints(server: Server, mode: str) -> None:
    async def listing(c: Client) -> tuple[str, list]:
        return c.protocol_version, (await c.list_tools()).tools

    version, tools = session(server.url, server.ops, mode)(listing)
    assert (version == "2025-11-25") if mode == "legacy" else version.startswith("2026")
    expected = {t.name: t for t in tools_for("duragent")}
    assert {t.name for t in tools} == set(expected) >= {"remember", "recall", "memory"}
    for t in tools:
        reg = expected[t.name]
        assert t.description == reg.description
        assert t.input_schema == reg.input_schema
        assert t.annotations.read_only_hint is reg.read_only
        assert t.annotations.idempotent_hint is reg.idempotent
        assert t.annotations.destructive_hint is (reg.destructive and not reg.read_only)
    by_name = {t.name: t for t in tools}
    assert by_name["recall"].annotations.read_only_hint is True
    assert by_name["remember"].annotations.read_only_hint is False


# -- tools ------------------------------------------------------------------------------

@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_remember_then_recall(server: Server, mode: str) -> None:
    note = f"deploys need the VPN ({mode})"

    async def flow(c: Client) -> tuple:
        return await text_of(c, "remember", {"content": note}), await text_of(c, "recall", {})

    (remembered, err1), (recalled, err2) = session(server.url, server.ops, mode)(flow)
    assert not err1 and not err2
    daily = sorted((server.workspace / "agents/ops-bot/memory/daily").glob("*.md"))
    assert daily and note in daily[-1].read_text()
    assert daily[-1].name in remembered
    assert note in recalled
    rel = daily[-1].relative_to(server.workspace).as_posix()
    assert git(server.workspace, "log", "-1", "--format=%an", "--", rel).strip() == "ops-bot"


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_memory_tool_commands_give_the_reference_texts(server: Server, mode: str) -> None:
    d = f"/memories/mcp-{mode}"
    steps = [
        ({"command": "create", "path": f"{d}/plan.md", "file_text": "step 1\nstep 2\n"},
         f"File created successfully at: {d}/plan.md", False),
        ({"command": "create", "path": f"{d}/plan.md", "file_text": "again"},
         f"File {d}/plan.md already exists", True),
        ({"command": "view", "path": d},
         f"{LISTING.format(d)}\n4K\t{d}\n14B\t{d}/plan.md", False),
        ({"command": "str_replace", "path": f"{d}/plan.md", "old_string": "step 2",
          "new_string": "step 2 (done)", "reason": "finished step 2"},
         "The memory file has been edited. Here is the snippet showing the change (with line "
         "numbers):\n     1\tstep 1\n     2\tstep 2 (done)\n     3\t", False),
        ({"command": "insert", "path": f"{d}/plan.md", "insert_line": 9, "insert_text": "x"},
         "Invalid `insert_line` parameter: 9. It should be within the range [0, 2].", True),
        ({"command": "insert", "path": f"{d}/plan.md", "insert_line": 2,
          "insert_text": "step 3"}, f"The file {d}/plan.md has been edited.", False),
        ({"command": "view", "path": f"{d}/plan.md", "view_range": [2, -1]},
         f"Here's the content of {d}/plan.md with line numbers:\n     2\tstep 2 (done)\n"
         "     3\tstep 3\n     4\t", False),
        ({"command": "rename", "old_path": f"{d}/plan.md", "new_path": f"{d}/done.md"},
         f"Successfully renamed {d}/plan.md to {d}/done.md", False),
        ({"command": "view", "path": "/memories/../agents"},
         "Path /memories/../agents would escape /memories directory", True),
        ({"command": "delete", "path": d}, f"Successfully deleted {d}", False),
        ({"command": "view", "path": d},
         f"The path {d} does not exist. Please provide a valid path.", True),
    ]

    async def flow(c: Client) -> list:
        return [await text_of(c, "memory", args) for args, _, _ in steps]

    got = session(server.url, server.ops, mode)(flow)
    assert got == [(text, error) for _, text, error in steps]
    subjects = git(server.workspace, "log", "--format=%an|%s", "--",
                   f"agents/ops-bot/memory/mcp-{mode}").splitlines()
    assert "ops-bot|finished step 2" in subjects
    assert all(s.startswith("ops-bot|") for s in subjects)
    assert len(subjects) == 5  # create, str_replace, insert, rename, delete


def test_schema_errors_come_back_as_tool_errors(server: Server) -> None:
    async def flow(c: Client) -> tuple:
        return await text_of(c, "memory", {"command": "view", "path": "/memories",
                                           "colour": "red"})

    text, error = session(server.url, server.ops)(flow)
    assert error and text.startswith("unknown field(s): colour")


# -- isolation and access -----------------------------------------------------------------

def test_another_scope_token_neither_sees_nor_touches_this_scope(server: Server) -> None:
    async def mine(c: Client) -> tuple:
        await text_of(c, "memory", {"command": "create", "path": "/memories/private.md",
                                    "file_text": "ops secret\n"})
        return await text_of(c, "remember", {"content": "ops-only fact"})

    session(server.url, server.ops)(mine)

    async def theirs(c: Client) -> list:
        return [await text_of(c, "memory", {"command": "view", "path": "/memories"}),
                await text_of(c, "memory", {"command": "view", "path": "/memories/private.md"}),
                await text_of(c, "recall", {}),
                await text_of(c, "memory", {"command": "create", "path": "/memories/private.md",
                                            "file_text": "mine now\n"})]

    listing, private, recalled, created = session(server.url, server.other)(theirs)
    assert "private.md" not in listing[0] and "ops-bot" not in listing[0]
    assert private == ("The path /memories/private.md does not exist. Please provide a valid "
                       "path.", True)
    assert "ops-only fact" not in recalled[0]
    assert created == ("File created successfully at: /memories/private.md", False)
    assert (server.workspace / "agents/ops-bot/memory/private.md").read_text() == "ops secret\n"
    assert (server.workspace / "agents/other-bot/memory/private.md").read_text() == "mine now\n"

    resp = httpx2.post(f"{server.url}?scope=ops-bot", json=INIT, headers={
        **JSON_HEADERS, "Authorization": f"Bearer {server.other}"}, timeout=TIMEOUT)
    assert resp.status_code == 403
    assert resp.json()["error"]["code"] == "forbidden"


def test_admin_token_acts_for_the_scope_it_names(server: Server) -> None:
    resp = httpx2.post(server.url, json=INIT, headers={
        **JSON_HEADERS, "Authorization": f"Bearer {server.admin}"}, timeout=TIMEOUT)
    assert resp.status_code == 400
    assert "X-Memoryui-Scope" in resp.json()["error"]["message"]
    (server.workspace / "agents/admin-target/memory").mkdir(parents=True)
    (server.workspace / "agents/admin-target/memory/seen.md").write_text("x")

    async def flow(c: Client) -> tuple:
        return await text_of(c, "memory", {"command": "view", "path": "/memories"})

    text, _ = session(server.url, server.admin, **{"X-Memoryui-Scope": "admin-target"})(flow)
    assert text == f"{LISTING.format('/memories')}\n4K\t/memories\n1B\t/memories/seen.md"
    text, _ = session(f"{server.url}?scope=admin-target", server.admin)(flow)
    assert "seen.md" in text


def test_no_or_bad_token_is_401_json(server: Server) -> None:
    for headers in ({}, {"Authorization": "Bearer mui_not-a-real-token"},
                    {"Authorization": "Basic dXNlcjpwYXNz"}):
        resp = httpx2.post(server.url, json=INIT, headers={**JSON_HEADERS, **headers},
                           timeout=TIMEOUT)
        assert resp.status_code == 401
        assert resp.json()["error"]["code"] == "unauthorized"
        assert resp.headers["www-authenticate"].startswith("Bearer")


def test_foreign_host_and_origin_are_rejected(server: Server) -> None:
    auth = {**JSON_HEADERS, "Authorization": f"Bearer {server.ops}"}
    resp = httpx2.post(server.url, json=INIT, headers={**auth, "Host": "evil.example"},
                       timeout=TIMEOUT)
    assert resp.status_code == 421
    resp = httpx2.post(server.url, json=INIT, headers={**auth, "Origin": "http://evil.example"},
                       timeout=TIMEOUT)
    assert resp.status_code == 403
    port = server.url.split(":")[2].split("/")[0]
    resp = httpx2.post(server.url, json=INIT, headers={
        **auth, "Host": f"localhost:{port}", "Origin": f"http://localhost:{port}"},
        timeout=TIMEOUT)
    assert resp.status_code == 200
    assert resp.json()["result"]["serverInfo"]["name"] == "memoryui"


def test_bodies_over_one_mebibyte_are_413(server: Server) -> None:
    auth = {**JSON_HEADERS, "Authorization": f"Bearer {server.ops}"}
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "remember", "arguments": {"content": "x" * (1024 * 1024 + 10)}}}
    data = json.dumps(call).encode()
    resp = httpx2.post(server.url, content=data, headers=auth, timeout=TIMEOUT)
    assert resp.status_code == 413
    assert resp.json()["error"]["code"] == "payload_too_large"

    def chunks() -> Iterator[bytes]:  # no Content-Length: the stream itself is capped
        for i in range(0, len(data), 65536):
            yield data[i:i + 65536]

    resp = httpx2.post(server.url, content=chunks(), headers=auth, timeout=TIMEOUT)
    assert resp.status_code == 413
    daily = server.workspace / "agents/ops-bot/memory/daily"
    assert all("x" * 1000 not in p.read_text() for p in daily.glob("*.md"))


def test_django_still_serves_everything_else(server: Server) -> None:
    base = server.url.rsplit("/mcp", 1)[0]
    assert httpx2.get(f"{base}/healthz", timeout=TIMEOUT).status_code == 200
    assert httpx2.get(f"{base}/api/v1/tools", timeout=TIMEOUT).status_code == 401


# -- attribution and the memory tool's two forms --------------------------------------------

def test_tool_writes_carry_the_token_trailer(server: Server) -> None:
    async def flow(c: Client) -> tuple:
        return (await text_of(c, "memory", {"command": "create", "path": "/memories/tr.md",
                                            "file_text": "by mcp\n"}),
                await text_of(c, "memory", {"action": "reflect", "content": "# via mcp\n"}))

    (created, err1), (reflected, err2) = session(server.url, server.ops)(flow)
    assert not err1 and not err2, (created, reflected)

    async def as_admin(c: Client) -> tuple:
        return await text_of(c, "remember", {"content": "orchestrated"})

    remembered, err3 = session(server.url, server.admin,
                               **{"X-Memoryui-Scope": "trailer-bot"})(as_admin)
    assert not err3, remembered
    daily = remembered.removeprefix("Remembered. Written to ")

    def trailers(path: str) -> list[str]:
        out = git(server.workspace, "log", "--format=%an|%(trailers:key=Memoryui-Token,"
                  "valueonly,separator=%x2C)", "--", path)
        return [line for line in out.splitlines() if line]

    assert trailers("agents/ops-bot/memory/tr.md") == [f"ops-bot|{server.ops[:12]}"]
    assert trailers("agents/ops-bot/memory/MEMORY.md")[0] == f"ops-bot|{server.ops[:12]}"
    assert trailers(daily) == [f"trailer-bot|{server.admin[:12]}"]


def test_a_client_validating_against_the_listing_can_use_both_memory_forms(
        server: Server) -> None:
    import jsonschema

    forms = [{"action": "remember", "content": "both forms over MCP"},
             {"command": "create", "path": "/memories/forms.md", "file_text": "ok\n"},
             {"command": "view", "path": "/memories/forms.md", "view_range": [1, 1]}]

    async def flow(c: Client) -> tuple:
        tools = (await c.list_tools()).tools
        schema = next(t.input_schema for t in tools if t.name == "memory")
        return schema, [await text_of(c, "memory", args) for args in forms]

    schema, results = session(server.url, server.ops)(flow)
    validator = jsonschema.Draft202012Validator(schema)
    for args in forms:
        assert not list(validator.iter_errors(args)), args
    assert [error for _, error in results] == [False, False, False], results
    assert results[2][0].endswith("     1\tok")


def test_the_container_healthcheck_passes_against_the_running_server(server: Server) -> None:
    base = server.url.rsplit("/mcp", 1)[0]
    env = {**os.environ, "ALLOWED_HOSTS": "localhost,127.0.0.1"}
    ok = subprocess.run([sys.executable, "-m", "memoryui.healthcheck", f"{base}/healthz"],
                        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert ok.stdout.startswith("healthy: 200")
    closed = subprocess.run([sys.executable, "-m", "memoryui.healthcheck",
                             f"http://127.0.0.1:{_free_port()}/healthz"], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=120)
    assert closed.returncode == 1 and closed.stdout.startswith("unhealthy: ")
