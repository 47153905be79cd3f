"""The whole app on PostgreSQL (`DATABASE_URL=postgres://...`), through the real server:
migrations, people, tokens, an agent's writes, the UI and search on the Postgres index."""

from __future__ import annotations

import json
import urllib.parse
from pathlib import Path

from tests.api.realserver import RealServer
from tests.pg import pg_database


def test_the_app_runs_on_postgres(pg_server: str, tmp_path: Path) -> None:
    server = RealServer(tmp_path, workers=2, env={
        "DATABASE_URL": pg_database(pg_server), "MEMORYUI_PASSWORD": "lead-password-1"})
    server.migrate()
    assert server.manage("user", "lead", "--role", "curator").returncode == 0
    token = server.token("ops-bot")
    with server:
        server.start()
        # Every request below is on a fresh connection: the manage.py subprocesses in
        # between take longer than uvicorn keeps an idle connection open on a busy machine.
        status, body = server.call_tool(token, "ops-bot", "remember",
                                        {"content": "Postgres keeps the tokens now."})
        assert status == 200, body
        assert body["result"].startswith("Remembered. Written to agents/ops-bot/memory/daily/")
        status, body = server.call_tool(token, "ops-bot", "recall", {})
        assert status == 200 and "Postgres keeps the tokens now." in body["result"]
        # A revoked token stops working at once (the tokens table is in Postgres).
        other = server.token("ops-bot")
        listed = server.manage("token", "list").stdout
        assert listed.count("ops-bot") >= 2
        for _ in range(4):  # used first, so both workers keep it verified in memory
            assert server.call_tool(other, "ops-bot", "recall", {})[0] == 200
        assert server.manage("token", "revoke", other).returncode == 0
        for _ in range(4):  # whichever worker answers
            status, body = server.call_tool(other, "ops-bot", "recall", {})
            assert status == 401
        # Search runs on the Postgres full-text index.
        q = urllib.parse.urlencode({"q": "tokens"})
        status, raw = server.request("GET", f"/api/v1/search?{q}", headers={
            "Authorization": f"Bearer {token}"})
        hits = json.loads(raw)["results"]
        assert status == 200 and [h["scope"] for h in hits] == ["ops-bot"]
        # A person signs in (sessions live in Postgres) and reads the entry.
        session = server.sign_in("lead", "lead-password-1")
        path = hits[0]["path"]
        status, page = server.request("GET", f"/f/{path}", headers={"Cookie": session})
        assert status == 200 and "Postgres keeps the tokens now." in page.decode()
        # Without the session the page is not shown (the cookie above is what signed in).
        status, _ = server.request("GET", f"/f/{path}")
        assert status == 302
    assert server.manage("snapshot").returncode == 0
