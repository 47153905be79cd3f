"""The inbox over MCP against `manage.py serve`: an agent's `reflect` under `propose` is
its proposal; an admin token's session lists it and approves it; a second approval is a
tool error naming the state. A scope token is never offered the inbox tools."""

from __future__ import annotations

import json
import os
import subprocess

from mcp import Client

from tests.api.test_mcp import Server, _manage, server, session, text_of  # noqa: F401

MEM = "agents/ops-bot/memory/MEMORY.md"


def test_admins_decide_proposals_over_mcp(server: Server) -> None:  # noqa: F811
    tmp = server.workspace.parent
    env = {**os.environ, "MEMORYUI_WORKSPACE": str(server.workspace),
           "MEMORYUI_VAR_DIR": str(tmp), "DATABASE_URL": f"sqlite:///{tmp}/db.sqlite3",
           "MEMORYUI_LAYOUT": "duragent", "DJANGO_SETTINGS_MODULE": "memoryui.settings"}
    _manage(env, "policy", "ops-bot", "memory", "propose")

    async def agent(c: Client) -> tuple:
        names = {t.name for t in (await c.list_tools()).tools}
        wrote = await text_of(c, "reflect", {"content": "# Me\n\n- proposed over MCP\n"})
        return names, wrote, await text_of(c, "reflect", {})

    names, wrote, read = session(server.url, server.ops)(agent)
    assert "proposals_list" not in names
    assert wrote == (f"Reflected. Updated {MEM}", False)
    assert read == ("Current MEMORY.md:\n\n# Me\n\n- proposed over MCP\n", False)
    assert not (server.workspace / MEM).exists()

    async def admin(c: Client) -> tuple:
        names = {t.name for t in (await c.list_tools()).tools}
        listed, _ = await text_of(c, "proposals_list", {})
        [p] = json.loads(listed)["proposals"]
        shown, _ = await text_of(c, "proposal_show", {"id": p["id"]})
        first = await text_of(c, "proposal_approve", {"id": p["id"]})
        second = await text_of(c, "proposal_approve", {"id": p["id"]})
        return names, p, json.loads(shown)["proposal"], first, second

    names, p, shown, first, second = session(f"{server.url}?scope=ops-bot", server.admin)(admin)
    assert {"proposals_list", "proposal_show", "proposal_approve", "proposal_reject"} <= names
    assert (p["path"], p["scope"], p["status"]) == (MEM, "ops-bot", "open")
    assert "+- proposed over MCP" in shown["diff"]
    assert first[1] is False and len(json.loads(first[0])["commit"]) == 40
    assert second[1] is True and "approved" in second[0]
    assert (server.workspace / MEM).read_text() == "# Me\n\n- proposed over MCP\n"
    log = subprocess.run(["git", "log", "-1", "--format=%B"], cwd=server.workspace,
                         capture_output=True, text=True, check=True).stdout
    assert "Proposed-by: ops-bot" in log and "Approved-by:" in log
