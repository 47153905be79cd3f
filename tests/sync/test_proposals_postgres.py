"""Three instances (`manage.py serve`, one clone each) on one Postgres database and one bare
remote: a proposal made on one is in every inbox once its refs have synced, an approval on
another is the decision everywhere (a second approval elsewhere answers 409 with the state),
and its merge commit reaches every clone."""

from __future__ import annotations

import json
from pathlib import Path

from tests.api.realserver import RealServer
from tests.pg import pg_database
from tests.sync_fixtures import make_bare

MEM = "agents/ops-bot/memory/MEMORY.md"


def api(server: RealServer, token: str, method: str, path: str,
        body: object = None) -> tuple[int, dict]:
    status, raw = server.request(method, path, None if body is None else
                                 json.dumps(body).encode(),
                                 {"Authorization": f"Bearer {token}",
                                  "Content-Type": "application/json"})
    return status, json.loads(raw or b"{}")


def test_three_instances_share_one_inbox(pg_server: str, tmp_path: Path) -> None:
    bare = make_bare(tmp_path / "remote.git")
    env = {"DATABASE_URL": pg_database(pg_server), "MEMORYUI_REMOTE": f"file://{bare}",
           "MEMORYUI_SYNC_INTERVAL": "0", "MEMORYUI_COMMIT_DELAY": "0"}
    a, b, c = (RealServer(tmp_path / name, workers=1, env=env) for name in "abc")
    a.migrate()
    ops, admin = a.token("ops-bot"), a.token("--admin")
    with a, b, c:
        a.start()
        assert a.call_tool(ops, "ops-bot", "reflect", {"content": "# Me\n\n- tea\n"})[0] == 200
        a.manage("sync")
        b.start()
        c.start()
        a.manage("policy", "*", "memory", "propose")
        status, body = a.call_tool(ops, "ops-bot", "reflect", {"content": "# Me\n\n- coffee\n"})
        assert (status, body["result"]) == (200, f"Reflected. Updated {MEM}")
        a.manage("sync")
        for other in (b, c):
            other.manage("sync")
        status, listed = api(c, admin, "GET", "/api/v1/proposals")
        [p] = listed["proposals"]
        status, shown = api(c, admin, "GET", f"/api/v1/proposals/{p['id']}")
        assert shown["proposal"]["available"] and \
            shown["proposal"]["proposed_text"] == "# Me\n\n- coffee\n"
        status, done = api(b, admin, "POST", f"/api/v1/proposals/{p['id']}/approve", {})
        assert status == 200, done
        status, again = api(c, admin, "POST", f"/api/v1/proposals/{p['id']}/approve", {})
        assert status == 409 and again["error"]["state"] == "approved"
        b.manage("sync")
        for other in (a, c):
            other.manage("sync")
            status, raw = other.request("GET", f"/api/v1/files/{MEM}",
                                        headers={"Authorization": f"Bearer {admin}"})
            assert (status, raw) == (200, b"# Me\n\n- coffee\n")
        assert api(a, admin, "GET", "/api/v1/proposals")[1]["proposals"] == []
