"""The new-file page refuses a name that looks like an existing one (letter case, Unicode
form), next to the field, keeping the text typed."""

from __future__ import annotations

from memoryui.store import Actor, Store

NOTE = "agents/ops-bot/memory/notes/sec.md"


def test_new_file_named_like_an_existing_one_is_refused_in_the_form(
        workspace: Store, client_as) -> None:
    workspace.write(NOTE, "one\n", actor=Actor.agent("ops-bot"), tool="write")
    r = client_as("curator").post("/new/", {"kind": "note", "scope": "ops-bot", "name": "Sec",
                                            "text": "typed by hand\r\n", "message": ""})
    assert r.status_code == 400
    html = r.content.decode()
    assert f"looks like the existing {NOTE}" in html
    assert "typed by hand" in html  # the text is not lost
    assert workspace.list_files("agents/ops-bot/memory/notes") == [NOTE]
