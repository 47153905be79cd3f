"""The files API refuses to create a name that looks like an existing one (letter case,
Unicode form) with a 400 naming the existing file; the exact name stays writable."""

from __future__ import annotations

import unicodedata

from memoryui.store import Actor, Store

NOTES = "agents/ops-bot/memory/notes"


def test_put_of_a_lookalike_name_is_400_naming_the_existing_file(
        client, make_token, workspace: Store) -> None:
    nfc, nfd = (unicodedata.normalize(form, "é") for form in ("NFC", "NFD"))
    workspace.write(f"{NOTES}/{nfc}.md", "accent\n", actor=Actor.agent("ops-bot"), tool="w")
    workspace.write("agents/ops-bot/memory/MEMORY.md", "# m\n", actor=Actor.agent("ops-bot"),
                    tool="w")
    auth = {"HTTP_AUTHORIZATION": f"Bearer {make_token('ops-bot')}"}
    for new, existing in [(f"{NOTES}/{nfd}.md", f"{NOTES}/{nfc}.md"),
                          ("agents/ops-bot/memory/memory.md",
                           "agents/ops-bot/memory/MEMORY.md")]:
        resp = client.put(f"/api/v1/files/{new}", b"clash\n",
                          content_type="text/markdown; charset=utf-8",
                          HTTP_IF_NONE_MATCH="*", **auth)
        assert resp.status_code == 400, resp.content
        assert f"looks like the existing {existing}" in resp.json()["error"]["message"]
    assert sorted(workspace.list_files("agents/ops-bot")) == [
        "agents/ops-bot/memory/MEMORY.md", f"{NOTES}/{nfc}.md"]
