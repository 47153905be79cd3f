"""The files API answers a write with its commit, or with the id of a write the committer
commits a moment later: GET /api/v1/writes/<id> gives that commit once it is made."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator

import pytest

from memoryui.store import Store
from tests.waiting import wait_for

PATH = "agents/ops-bot/memory/notes/api.md"


@pytest.fixture
def deferred(settings, tmp_path) -> Iterator[Store]:
    """The Django-side store grouping writes for 0.2 s, with no committer process."""
    from memoryui.workspace import get_store, reset_store

    settings.MEMORYUI_COMMIT_DELAY = 0.2
    settings.MEMORYUI_WORKSPACE = tmp_path / "ws"
    settings.MEMORYUI_SEARCH_DB = tmp_path / "search.sqlite3"
    reset_store()
    yield get_store()
    reset_store()


def put(client, token: str, text: str) -> dict:
    r = client.put(f"/api/v1/files/{PATH}", text.encode(), content_type="text/plain",
                   HTTP_AUTHORIZATION=f"Bearer {token}", HTTP_IF_NONE_MATCH="*")
    assert r.status_code == 201, r.content
    return json.loads(r.content)


def commit_by_id(client, token: str, write: str) -> str | None:
    r = client.get(f"/api/v1/writes/{write}", HTTP_AUTHORIZATION=f"Bearer {token}")
    assert r.status_code == 200, r.content
    body = json.loads(r.content)
    assert body["write"] == write
    return body["commit"]


def holds(store: Store, sha: str, text: str) -> bool:
    shown = subprocess.run(["git", "show", f"{sha}:{PATH}"], cwd=store.root,
                           capture_output=True, text=True).stdout
    return text in shown


def test_a_write_committed_at_once_names_its_commit_and_its_id(client, workspace,
                                                                make_token) -> None:
    token = make_token("ops-bot")
    body = put(client, token, "at once\n")
    assert body["commit"] and body["write"]
    assert commit_by_id(client, token, body["write"]) == body["commit"]


def test_a_deferred_write_is_found_by_its_id(client, deferred, make_token) -> None:
    token = make_token("ops-bot")
    body = put(client, token, "grouped\n")
    assert body["commit"] is None and body["write"]
    found: list[str] = []
    wait_for("the committer's commit", lambda: found.append(
        commit_by_id(client, token, body["write"]) or "") or found[-1])
    assert holds(deferred, found[-1], "grouped")


def test_a_malformed_write_id_is_a_400(client, workspace, make_token) -> None:
    r = client.get("/api/v1/writes/xyz", HTTP_AUTHORIZATION=f"Bearer {make_token('ops-bot')}")
    assert r.status_code == 400
