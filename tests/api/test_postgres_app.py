"""The whole app on PostgreSQL (`DATABASE_URL=postgres://...`), through the real server:
migrations, people, tokens, an agent's writes, the UI and search on the Postgres index."""

from __future__ import annotations

import json
import re
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
        server.start(timeout=120)
        conn = server.connection()
        status, body = server.call_tool(conn, token, "ops-bot", "remember",
                                        {"content": "Postgres keeps the tokens now."})
        assert status == 200, body
        assert body["result"].startswith("Remembered. Written to agents/ops-bot/memory/daily/")
        status, body = server.call_tool(conn, token, "ops-bot", "recall", {})
        assert status == 200 and "Postgres keeps the tokens now." in body["result"]
        # A revoked token stops working at once (the tokens table is in Postgres).
        other = server.token("ops-bot")
        listed = server.manage("token", "list").stdout
        assert listed.count("ops-bot") >= 2
        assert server.manage("token", "revoke", other).returncode == 0
        status, body = server.call_tool(conn, other, "ops-bot", "recall", {})
        assert status == 401
        # Search runs on the Postgres full-text index.
        q = urllib.parse.urlencode({"q": "tokens"})
        status, raw = server.request("GET", f"/api/v1/search?{q}", headers={
            "Authorization": f"Bearer {token}"}, conn=conn)
        hits = json.loads(raw)["results"]
        assert status == 200 and [h["scope"] for h in hits] == ["ops-bot"]
        # A person signs in (sessions live in Postgres) and reads the entry.
        conn.request("GET", "/accounts/login/")
        resp = conn.getresponse()
        page = resp.read().decode()
        csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
        cookie = resp.getheader("Set-Cookie").split(";", 1)[0]
        form = urllib.parse.urlencode({"username": "lead", "password": "lead-password-1",
                                       "csrfmiddlewaretoken": csrf})
        conn.request("POST", "/accounts/login/", body=form, headers={
            "Cookie": cookie, "Content-Type": "application/x-www-form-urlencoded",
            "Referer": f"http://127.0.0.1:{server.port}/accounts/login/"})
        resp = conn.getresponse()
        resp.read()
        assert resp.status == 302, "signed in"
        session = [c.split(";", 1)[0] for c in resp.headers.get_all("Set-Cookie")
                   if c.startswith("sessionid=")][0]
        path = hits[0]["path"]
        status, page = server.request("GET", f"/f/{path}", headers={"Cookie": session},
                                      conn=conn)
        assert status == 200 and "Postgres keeps the tokens now." in page.decode()
        conn.close()
    assert server.manage("snapshot").returncode == 0
