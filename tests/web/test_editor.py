"""The editor, live preview, conflicts and merges, creating and deleting files.

Every save goes through the real store into a real git repository; assertions read the
files and commits back, so "nothing was overwritten" is checked on disk.
"""

from __future__ import annotations

import html as htmllib
import re

import pytest

from memoryui.store import ABSENT, Actor, Store, version_of
from memoryui.store.merge import has_conflict_markers, merge3

MEM = "agents/ops-bot/memory/MEMORY.md"
OPS = Actor.agent("ops-bot")
BASE = "# ops-bot\n\n## Facts\n- deploys on Tuesday\n\n## Lessons\n- check canaries\n"


@pytest.fixture
def ws(workspace: Store) -> Store:
    workspace.write(MEM, BASE, actor=OPS, tool="reflect")
    return workspace


@pytest.fixture
def curator(client_as):
    return client_as("curator")


def textarea(html: str, name: str = "text") -> str:
    """The text a browser would put in the named textarea (first newline dropped)."""
    m = re.search(rf'<textarea[^>]*name="{name}"[^>]*>(.*?)</textarea>', html, re.S)
    assert m, f"no textarea {name}"
    value = htmllib.unescape(m.group(1))
    return value[1:] if value.startswith("\n") else value


def hidden(html: str, name: str) -> str:
    m = re.search(rf'<input type="hidden" name="{name}" value="([^"]*)"', html)
    assert m, f"no hidden {name}"
    return htmllib.unescape(m.group(1))


def last_commit(store: Store):
    return store.log(MEM, limit=1)[0]


def save(client, text: str, base: str, message: str = "", **extra):
    return client.post("/edit/" + MEM, {"text": text, "base": base, "message": message,
                                         **extra})


# -- loading ------------------------------------------------------------------------------------


def test_editor_loads_full_text_with_base_version(ws, curator):
    long = "".join(f"line {i}\n" for i in range(1, 400))
    ws.write(MEM, "\n" + long, actor=OPS, tool="reflect")  # a leading blank line too
    r = curator.get("/edit/" + MEM)
    assert r.status_code == 200
    html = r.content.decode()
    assert textarea(html) == "\n" + long  # whole, never truncated, first newline kept
    assert hidden(html, "base") == version_of("\n" + long)
    assert 'value="edit: agents/ops-bot/memory/MEMORY.md"' in html
    assert 'hx-post="/preview/"' in html and 'hx-trigger="input changed delay:300ms"' in html


def test_editor_of_missing_file_is_404(ws, curator):
    assert curator.get("/edit/agents/ops-bot/memory/notes/none.md").status_code == 404


# -- preview ------------------------------------------------------------------------------------


def test_live_preview_returns_a_sanitized_fragment_for_htmx(ws, curator):
    r = curator.post("/preview/", {"text": "# Hi\n\n- [x] done\n<script>alert(1)</script>",
                                   "path": MEM}, HTTP_HX_REQUEST="true")
    assert r.status_code == 200
    body = r.content.decode()
    assert "<html" not in body  # a fragment for #preview
    assert "<h1" in body and 'type="checkbox"' in body
    assert "<script" not in body


def test_preview_without_javascript_is_a_page(ws, curator):
    r = curator.post("/preview/", {"text": "**bold**", "path": MEM})
    assert r.status_code == 200
    assert "<html" in r.content.decode() and "<strong>bold</strong>" in r.content.decode()


def test_preview_button_in_editor_keeps_text_and_saves_nothing(ws, curator):
    r = save(curator, "# changed\n", version_of(BASE), preview="1")
    assert r.status_code == 200
    html = r.content.decode()
    assert textarea(html) == "# changed\n"
    assert "<h1" in html.split('id="preview"', 1)[1]
    assert ws.read(MEM) == BASE


def test_preview_shows_where_dagu_would_cut(settings, tmp_path, client_as):
    from memoryui.workspace import reset_store

    settings.MEMORYUI_WORKSPACE = tmp_path / "dagu"
    settings.MEMORYUI_LAYOUT = "dagu"
    reset_store()
    try:
        r = client_as("curator").post("/preview/", {"text": "x\n" * 230,
                                                    "path": "memory/MEMORY.md"},
                                      HTTP_HX_REQUEST="true")
        assert "agents would not see the last 30 lines" in r.content.decode()
    finally:
        reset_store()


# -- saving -------------------------------------------------------------------------------------


def test_save_commits_as_the_person_with_the_message(ws, curator):
    new = BASE + "- never deploy on Friday\n"
    r = save(curator, new.replace("\n", "\r\n"), version_of(BASE), "Add the Friday rule")
    assert r.status_code == 302 and r["Location"] == "/f/" + MEM
    assert ws.read(MEM) == new  # CRLF from the browser became LF
    c = last_commit(ws)
    assert c.subject == "Add the Friday rule"
    assert (c.author, c.email) == ("curator", "curator@users.memoryui")
    assert c.actor == "user:curator" and c.tools == ["edit"]
    page = curator.get(r["Location"]).content.decode()
    assert f"in commit {c.sha[:8]}" in page  # the message names the commit
    assert "never deploy on Friday" in page


def test_save_without_changes_makes_no_commit(ws, curator):
    before = last_commit(ws).sha
    r = save(curator, BASE, version_of(BASE))
    assert r.status_code == 302
    assert last_commit(ws).sha == before
    assert "No changes" in curator.get(r["Location"]).content.decode()


def test_save_without_base_is_refused(ws, curator):
    r = save(curator, "# lost\n", "")
    assert r.status_code == 400
    assert ws.read(MEM) == BASE
    assert textarea(r.content.decode()) == "# lost\n"


def test_save_to_invalid_path_is_400_and_writes_nothing(ws, curator):
    r = curator.post("/edit/../outside.md", {"text": "x", "base": ABSENT})
    assert r.status_code == 400
    assert not (ws.root.parent / "outside.md").exists()
    r = curator.post("/edit/.git/config", {"text": "x", "base": ABSENT})
    assert r.status_code == 400


# -- conflicts ----------------------------------------------------------------------------------


def test_stale_save_gets_409_with_their_diff_and_overwrites_nothing(ws, curator):
    base = version_of(BASE)
    theirs = BASE.replace("Tuesday", "Thursday")
    ws.write(MEM, theirs, actor=OPS, tool="reflect")
    mine = BASE.replace("check canaries", "check canaries and dashboards")
    r = save(curator, mine, base, "my edit")
    assert r.status_code == 409
    assert ws.read(MEM) == theirs  # nothing overwritten
    html = r.content.decode()
    assert "changed while you were editing" in html
    diff = html.split('class="diff diff-unified"', 1)[1].split("</table>", 1)[0]
    assert re.search(r'<tr class="del">.*deploys on (<del>)?Tuesday', diff)
    assert re.search(r'<tr class="add">.*deploys on (<ins>)?Thursday', diff)
    assert "ops-bot" in html  # who made the other change
    # different lines: merged cleanly, ready to save against the current version
    merged = textarea(html)
    assert "Thursday" in merged and "canaries and dashboards" in merged
    assert not has_conflict_markers(merged)
    assert hidden(html, "base") == version_of(theirs)
    assert mine in htmllib.unescape(html)  # your text is kept on the page
    r2 = save(curator, merged, hidden(html, "base"), "my edit")
    assert r2.status_code == 302
    assert ws.read(MEM) == merged


def test_conflicting_edits_are_marked_and_must_be_resolved(ws, curator):
    base = version_of(BASE)
    theirs = BASE.replace("Tuesday", "Thursday")
    ws.write(MEM, theirs, actor=OPS, tool="reflect")
    r = save(curator, BASE.replace("Tuesday", "Wednesday"), base)
    assert r.status_code == 409
    html = r.content.decode()
    merged = textarea(html)
    assert "<<<<<<< your edit" in merged and ">>>>>>> current file" in merged
    assert "Wednesday" in merged and "Thursday" in merged
    new_base = hidden(html, "base")
    # saving the markers by mistake is refused...
    r = save(curator, merged, new_base)
    assert r.status_code == 400 and "conflict markers" in r.content.decode()
    assert ws.read(MEM) == theirs
    # ...unless asked for; a resolved text saves
    resolved = BASE.replace("Tuesday", "Wednesday or Thursday")
    assert save(curator, resolved, new_base).status_code == 302
    assert ws.read(MEM) == resolved


def test_conflict_markers_can_be_saved_on_purpose(ws, curator):
    text = BASE + "<<<<<<< ours\n- a\n=======\n- b\n>>>>>>> theirs\n"
    assert save(curator, text, version_of(BASE)).status_code == 400
    assert ws.read(MEM) == BASE
    assert save(curator, text, version_of(BASE), allow_markers="1").status_code == 302
    assert ws.read(MEM) == text


def test_a_second_stale_save_is_stopped_too(ws, curator):
    base = version_of(BASE)
    ws.write(MEM, BASE + "- a\n", actor=OPS, tool="reflect")
    r = save(curator, BASE + "- mine\n", base)
    new_base = hidden(r.content.decode(), "base")
    ws.write(MEM, BASE + "- a\n- b\n", actor=OPS, tool="reflect")  # meanwhile, again
    r = save(curator, BASE + "- a\n- mine\n", new_base)
    assert r.status_code == 409
    assert ws.read(MEM) == BASE + "- a\n- b\n"


def test_file_deleted_while_editing(ws, curator):
    ws.delete(MEM, actor=OPS, tool="memory")
    r = save(curator, BASE + "- mine\n", version_of(BASE))
    assert r.status_code == 409
    html = r.content.decode()
    assert "deleted while you were editing" in html
    assert textarea(html) == BASE + "- mine\n"
    assert hidden(html, "base") == ABSENT
    assert save(curator, BASE + "- mine\n", ABSENT).status_code == 302
    assert ws.read(MEM) == BASE + "- mine\n"


def test_merge3_directly(ws):
    result = merge3("a\nb\nc\n", "A\nb\nc\n", "a\nb\nC\n", ws.git.state_dir)
    assert result.text == "A\nb\nC\n" and result.conflicts == 0
    result = merge3("a\n", "b\n", "c\n", ws.git.state_dir)
    assert result.conflicts == 1 and has_conflict_markers(result.text)
    assert not list(ws.git.state_dir.glob("merge-*"))  # temp files cleaned up


# -- new files ----------------------------------------------------------------------------------


def test_new_file_form_offers_the_layouts_kinds(ws, curator):
    r = curator.get("/new/?kind=note&scope=ops-bot&name=deploys")
    assert r.status_code == 200
    html = r.content.decode()
    assert '<option value="note" selected>' in html
    assert 'value="ops-bot"' in html and 'value="deploys"' in html
    assert '<option value="world"' in html and '<option value="daily"' in html


def test_create_a_note(ws, curator):
    r = curator.post("/new/", {"kind": "note", "scope": "ops-bot", "name": "deploys",
                               "text": "# Deploys\r\n", "message": ""})
    path = "agents/ops-bot/memory/notes/deploys.md"
    assert r.status_code == 302 and r["Location"] == "/f/" + path
    assert ws.read(path) == "# Deploys\n"
    c = ws.log(path, limit=1)[0]
    assert c.actor == "user:curator" and c.subject == f"create: {path}"


def test_create_shows_name_errors_in_the_form(ws, curator):
    r = curator.post("/new/", {"kind": "note", "scope": "ops-bot", "name": "../x",
                               "text": "x"})
    assert r.status_code == 400
    assert "invalid note name" in r.content.decode()
    r = curator.post("/new/", {"kind": "world", "name": "My Topic", "text": "x"})
    assert r.status_code == 400
    assert "my-topic" in r.content.decode()  # the sanitized suggestion
    r = curator.post("/new/", {"kind": "memory", "scope": "bad scope", "text": "x"})
    assert r.status_code == 400 and "invalid scope name" in r.content.decode()
    assert curator.post("/new/", {"kind": "nope"}).status_code == 400
    assert not list(ws.root.glob("**/x.md"))


def test_create_never_overwrites(ws, curator):
    r = curator.post("/new/", {"kind": "memory", "scope": "ops-bot", "text": "# new\n"})
    assert r.status_code == 409
    assert ws.read(MEM) == BASE
    assert "/edit/" + MEM in r.content.decode()


def test_create_daily_log_defaults_to_today(ws, curator):
    import datetime as dt

    today = dt.date.today().isoformat()
    r = curator.post("/new/", {"kind": "daily", "scope": "ops-bot", "text": f"# {today}\n"})
    assert r.status_code == 302
    assert ws.read(f"agents/ops-bot/memory/daily/{today}.md") == f"# {today}\n"


# -- delete -------------------------------------------------------------------------------------


def test_delete_asks_then_commits(ws, client_as):
    admin = client_as("admin")
    r = admin.get("/delete/" + MEM)
    assert r.status_code == 200
    html = r.content.decode()
    assert "data-confirm" in html and hidden(html, "base") == version_of(BASE)
    assert ws.read(MEM) == BASE  # asking deletes nothing
    r = admin.post("/delete/" + MEM, {"base": version_of(BASE), "message": "Drop it"})
    assert r.status_code == 302 and r["Location"] == "/s/ops-bot/"
    assert not (ws.root / MEM).exists()
    c = ws.log(MEM, limit=1)[0]
    assert c.subject == "Drop it" and c.actor == "user:admin" and c.files[0].status == "D"


def test_delete_with_stale_version_deletes_nothing(ws, client_as):
    admin = client_as("admin")
    ws.write(MEM, BASE + "- new fact\n", actor=OPS, tool="reflect")
    r = admin.post("/delete/" + MEM, {"base": version_of(BASE)})
    assert r.status_code == 409
    assert ws.read(MEM) == BASE + "- new fact\n"
    html = r.content.decode()
    assert "new fact" in html and hidden(html, "base") == version_of(BASE + "- new fact\n")


def test_delete_missing_file_is_404(ws, client_as):
    assert client_as("admin").post("/delete/memory/world/none.md",
                                   {"base": "x"}).status_code == 404
