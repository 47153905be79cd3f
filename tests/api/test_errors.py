"""Every failure gets a clear answer: JSON `{"error": {"code", "message"}}` for API clients
(Dagu's own shape on its endpoints), the readable 500 page for people, a log line with the
traceback on stderr, never a token or a body in the log; disk full is a 507 that leaves the
old file intact; bad text (NUL, lone surrogates) and bad dates are 400s."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.test import Client

from memoryui.store import Actor, Store

ROOT = Path(__file__).resolve().parents[2]
MEM = "agents/ops-bot/memory/MEMORY.md"
DAGU = "/api/v1/settings/agent/memory"


def h(token: str) -> dict:
    return {"HTTP_AUTHORIZATION": f"Bearer {token}"}


@pytest.fixture
def boom_urls(settings) -> None:
    """The real URLconf and handler500, plus views that raise (tests/api/boom_urls.py)."""
    settings.ROOT_URLCONF = "tests.api.boom_urls"


def request_errors(caplog: pytest.LogCaptureFixture) -> list:
    return [r for r in caplog.records if r.name == "django.request" and r.levelname == "ERROR"]


# -- unexpected errors ------------------------------------------------------------------------

def test_an_unexpected_api_error_is_json_and_logged_with_its_traceback(
        client, workspace, make_token, monkeypatch, caplog):
    token = make_token(admin=True)

    def broken() -> Store:
        raise RuntimeError("the store is broken")

    monkeypatch.setattr("memoryui.api.files.get_store", broken)
    resp = client.put(f"/api/v1/files/{MEM}", data=b"secret memory text\n",
                      content_type="text/markdown", **h(token))
    assert resp.status_code == 500
    assert resp["Content-Type"] == "application/json"
    assert resp.json()["error"]["code"] == "internal_error"
    assert "server log" in resp.json()["error"]["message"]
    [record] = request_errors(caplog)
    assert record.exc_info and record.exc_info[0] is RuntimeError
    assert "Traceback" in caplog.text and "the store is broken" in caplog.text
    assert f"/api/v1/files/{MEM}" in record.getMessage()
    assert token not in caplog.text and token[:12] not in caplog.text
    assert "secret memory text" not in caplog.text


def test_unknown_failures_under_api_are_json_even_outside_the_agent_views(
        client, boom_urls, caplog):
    resp = client.get("/api/v1/boom", HTTP_AUTHORIZATION="Bearer mui_never-logged")
    assert resp.status_code == 500
    assert resp.json()["error"]["code"] == "internal_error"
    [record] = request_errors(caplog)  # exactly one line, with the traceback
    assert record.exc_info[0] is RuntimeError
    assert "mui_never-logged" not in caplog.text

    full = client.get("/api/v1/boom-disk")
    assert full.status_code == 507
    assert full.json() == {"error": {"code": "insufficient_storage",
                                     "message": "the workspace disk is full"}}


def test_an_unexpected_dagu_error_keeps_dagus_error_shape(client, workspace, make_token,
                                                          monkeypatch, caplog):
    def broken() -> Store:
        raise RuntimeError("dagu side broke")

    monkeypatch.setattr("memoryui.api.dagu.get_store", broken)
    resp = client.get(DAGU, **h(make_token(admin=True)))
    assert resp.status_code == 500
    body = resp.json()
    assert body["code"] == "internal_error" and "server log" in body["message"]
    [record] = request_errors(caplog)
    assert record.exc_info[0] is RuntimeError


def test_people_get_the_readable_error_page_and_the_operator_a_traceback(boom_urls, caplog):
    resp = Client(raise_request_exception=False).get("/boom")
    assert resp.status_code == 500
    assert resp["Content-Type"].startswith("text/html")
    page = resp.content.decode()
    assert "Something went wrong" in page and "<script" not in page
    [record] = request_errors(caplog)
    assert record.exc_info[0] is RuntimeError and "boom" in caplog.text


def test_a_fresh_process_logs_the_traceback_to_stderr_and_never_the_token(tmp_path):
    """The LOGGING settings themselves (caplog bypasses them): stderr gets the traceback."""
    code = (
        "import django; django.setup()\n"
        "from django.conf import settings\n"
        "settings.ROOT_URLCONF = 'tests.api.boom_urls'\n"
        "settings.ALLOWED_HOSTS = ['testserver']\n"
        "from django.test import Client\n"
        "c = Client(raise_request_exception=False)\n"
        "print(c.get('/api/v1/boom', HTTP_AUTHORIZATION='Bearer mui_topsecret').status_code)\n"
        "print(c.get('/boom', HTTP_AUTHORIZATION='Bearer mui_topsecret').status_code)\n")
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "memoryui.settings",
           "MEMORYUI_VAR_DIR": str(tmp_path), "SECRET_KEY": "k" * 50}
    env.pop("LOG_LEVEL", None)
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.stdout.split() == ["500", "500"], proc.stderr
    assert proc.stderr.count("Traceback (most recent call last)") == 2
    assert proc.stderr.count("RuntimeError: boom: an unexpected failure") == 2
    assert "ERROR django.request: GET /api/v1/boom failed (500)" in proc.stderr
    assert "mui_topsecret" not in proc.stderr + proc.stdout


def test_a_bad_log_level_stops_the_start_with_a_sentence(tmp_path):
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "memoryui.settings", "LOG_LEVEL": "loud",
           "MEMORYUI_VAR_DIR": str(tmp_path)}
    proc = subprocess.run([sys.executable, "-c", "import django; django.setup()"], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0
    assert "LOG_LEVEL must be DEBUG, INFO, WARNING, ERROR or CRITICAL, got 'LOUD'" in \
        proc.stderr


# -- bad text: NUL bytes and lone surrogates ---------------------------------------------------

@pytest.fixture
def seeded(workspace) -> Store:
    workspace.write(MEM, "old text\n", actor=Actor.agent("ops-bot"), tool="reflect")
    return workspace


def test_nul_bytes_are_refused_with_a_400_everywhere(client, seeded, make_token, settings):
    admin = make_token(admin=True)
    tag = f'"{seeded.read_versioned(MEM)[1]}"'
    files = client.put(f"/api/v1/files/{MEM}", data=b"new\x00text\n",
                       content_type="text/markdown", HTTP_IF_MATCH=tag, **h(admin))
    assert files.status_code == 400, files.content
    assert files.json()["error"]["code"] == "invalid_arguments"
    assert "NUL" in files.json()["error"]["message"]

    tool = client.post("/api/v1/agents/ops-bot/tools/reflect",
                       data=json.dumps({"content": "new\u0000text"}),
                       content_type="application/json", **h(admin))
    assert tool.status_code == 400, tool.content
    assert "NUL" in tool.json()["error"]["message"]
    remember = client.post("/api/v1/agents/ops-bot/tools/remember",
                           data=json.dumps({"content": "a\u0000b"}),
                           content_type="application/json", **h(admin))
    assert remember.status_code == 400
    assert seeded.read(MEM) == "old text\n"
    assert seeded.list_files() == [MEM]

    settings.MEMORYUI_LAYOUT = "dagu"
    from memoryui.workspace import reset_store
    reset_store()
    dagu = client.put(DAGU, data=json.dumps({"content": "x\u0000y"}),
                      content_type="application/json", **h(admin))
    assert dagu.status_code == 400
    assert dagu.json()["code"] == "bad_request" and "NUL" in dagu.json()["message"]


@pytest.mark.parametrize("url,body", [
    (DAGU, b'{"content": "bad \\ud800 text"}'),
    ("/api/v1/agents/ops-bot/tools/remember", b'{"content": "bad \\udc00 text"}'),
    ("/api/v1/agents/ops-bot/tools/memory", b'{"\\ud800": 1, "action": "recall"}'),
    ("/api/v1/agents/ops-bot/tools/memory",
     b'{"command": "create", "path": "/memories/a.md", "file_text": "\\udfff"}'),
])
def test_lone_surrogates_in_json_bodies_are_400s(client, seeded, make_token, url, body):
    admin = make_token(admin=True)
    send = client.put if url == DAGU else client.post
    resp = send(url, data=body, content_type="application/json", **h(admin))
    assert resp.status_code == 400, resp.content
    err = resp.json() if url == DAGU else resp.json()["error"]
    assert err["code"] in ("bad_request", "invalid_arguments")
    assert "lone surrogate" in err["message"]
    assert seeded.list_files() == [MEM] and seeded.read(MEM) == "old text\n"


def test_text_that_is_not_utf8_is_a_400(client, seeded, make_token):
    tag = f'"{seeded.read_versioned(MEM)[1]}"'
    resp = client.put(f"/api/v1/files/{MEM}", data=b"surrogate \xed\xa0\x80 bytes",
                      content_type="text/markdown", HTTP_IF_MATCH=tag,
                      **h(make_token(admin=True)))
    assert resp.status_code == 400
    assert "not valid UTF-8" in resp.json()["error"]["message"]
    assert seeded.read(MEM) == "old text\n"


@pytest.mark.parametrize("query", ["until=9999-12-31", "since=2024-13-45", "since=yesterday",
                                   "until=1969-12-31"])
def test_bad_dates_in_history_are_400s(client, seeded, make_token, query):
    resp = client.get(f"/api/v1/history?{query}", **h(make_token(admin=True)))
    assert resp.status_code == 400
    assert resp.json()["error"]["code"] == "invalid_arguments"


# -- disk full --------------------------------------------------------------------------------

@pytest.fixture
def tiny_disk(tmp_path: Path, settings) -> Iterator[tuple[Store, Path]]:
    """The workspace on a 2 MiB tmpfs of its own (needs root; skipped where mounts fail)."""
    mnt = tmp_path / "disk"
    mnt.mkdir()
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mnt)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.skip(f"a real ENOSPC needs a small filesystem; mounting a tmpfs failed here: "
                    f"{proc.stderr.strip()}")
    from memoryui.workspace import get_store, reset_store
    settings.MEMORYUI_WORKSPACE = mnt / "ws"
    settings.MEMORYUI_SEARCH_DB = tmp_path / "search.sqlite3"
    reset_store()
    try:
        store = get_store()
        store.write(MEM, "old text\n", actor=Actor.agent("ops-bot"), tool="reflect")
        store.write("memory/MEMORY.md", "global\n", actor=Actor.user("lead"), tool="edit")
        yield store, mnt
    finally:
        reset_store()
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


def fill(folder: Path) -> Path:
    """Write a filler file until the filesystem says ENOSPC."""
    filler = folder / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        for size in (1 << 16, 1 << 12, 1):
            chunk = b"\0" * size
            while True:
                try:
                    if os.write(fd, chunk) == 0:
                        break
                except OSError as exc:
                    assert exc.errno == errno.ENOSPC
                    break
    finally:
        os.close(fd)
    return filler


def test_a_full_disk_is_a_507_that_keeps_the_old_file(client, tiny_disk, make_token):
    store, mnt = tiny_disk
    admin = make_token(admin=True)
    tag = f'"{store.read_versioned(MEM)[1]}"'
    filler = fill(mnt)
    big = "a new text long enough to need a page of its own\n" * 200

    files = client.put(f"/api/v1/files/{MEM}", data=big.encode(), content_type="text/markdown",
                       HTTP_IF_MATCH=tag, **h(admin))
    assert files.status_code == 507, files.content
    assert files.json()["error"] == {"code": "insufficient_storage",
                                     "message": "the workspace disk is full"}
    tool = client.post("/api/v1/agents/ops-bot/tools/reflect",
                       data=json.dumps({"content": big}), content_type="application/json",
                       **h(admin))
    assert tool.status_code == 507, tool.content
    assert tool.json()["error"]["code"] == "insufficient_storage"
    assert tool.json()["error"]["message"] == "the workspace disk is full"
    dagu = client.put(DAGU, data=json.dumps({"content": big}), content_type="application/json",
                      **h(admin))
    assert dagu.status_code == 507, dagu.content
    assert dagu.json()["message"] == "the workspace disk is full"
    assert (store.root / MEM).read_text() == "old text\n"
    assert (store.root / "memory/MEMORY.md").read_text() == "global\n"

    filler.unlink()  # room again: the same write now works and is committed
    again = client.put(f"/api/v1/files/{MEM}", data=big.encode(), content_type="text/markdown",
                       HTTP_IF_MATCH=tag, **h(admin))
    assert again.status_code == 200, again.content
    assert store.read(MEM) == big
    assert store.log(MEM)[0].author == "api-admin"
