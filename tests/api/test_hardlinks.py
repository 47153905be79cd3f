"""The files API never serves or writes through a hard link: an agent that planted
`ln <secret> agents/ops-bot/memory/notes/key.md` gets a 400 naming the reason."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memoryui.store import Actor, Store

SECRET = "SECRET_KEY = 'server-secret-never-leak-42'\n"
KEY = "agents/ops-bot/memory/notes/key.md"
ALIAS = "agents/ops-bot/memory/notes/theirs.md"
THEIRS = "agents/web-bot/memory/MEMORY.md"


@pytest.fixture
def planted(workspace: Store, tmp_path: Path) -> Store:
    workspace.write("agents/ops-bot/memory/notes/a.md", "note a\n",
                    actor=Actor.agent("ops-bot"), tool="write")
    workspace.write(THEIRS, "web-bot's own memory\n", actor=Actor.agent("web-bot"),
                    tool="reflect")
    secret = tmp_path / "secret.key"
    secret.write_text(SECRET)
    os.link(secret, workspace.root / KEY)
    os.link(workspace.root / THEIRS, workspace.root / ALIAS)
    return workspace


def test_files_api_never_serves_a_hard_link(client, make_token, planted: Store) -> None:
    auth = {"HTTP_AUTHORIZATION": f"Bearer {make_token('ops-bot')}"}
    for path in (KEY, ALIAS):
        resp = client.get(f"/api/v1/files/{path}", **auth)
        assert resp.status_code == 400
        body = resp.content.decode()
        assert "hard link" in body and "pending page" in body
        assert "server-secret" not in body and "web-bot's own" not in body
    listed = client.get("/api/v1/files?prefix=agents/ops-bot", **auth).json()
    assert "agents/ops-bot/memory/notes/a.md" in str(listed)
    assert KEY not in str(listed) and ALIAS not in str(listed)


def test_files_api_put_over_a_hard_link_is_refused(client, make_token, planted: Store,
                                                   tmp_path: Path) -> None:
    auth = {"HTTP_AUTHORIZATION": f"Bearer {make_token('ops-bot')}"}
    resp = client.put(f"/api/v1/files/{ALIAS}", b"overwritten\n",
                      content_type="text/markdown; charset=utf-8", **auth)
    assert resp.status_code == 400 and "hard link" in resp.content.decode()
    assert (planted.root / THEIRS).read_text() == "web-bot's own memory\n"
    assert (tmp_path / "secret.key").read_text() == SECRET
