"""The one conflict component and conflict-aware previews, across every conflict view:
the editor's stale save, the revert conflict, the sync conflict, the restore conflict and
the live preview. Real git workspaces through the Django test client."""

from __future__ import annotations

import html as htmllib
import re

import pytest

from memoryui.store import Actor, Store, version_of
from tests.web.test_sync import MEM as SYNC_MEM
from tests.web.test_sync import _conflict, synced  # noqa: F401 - the fixture, reused

BOT = Actor.agent("ops-bot")
MEM = "agents/ops-bot/memory/MEMORY.md"
BASE = "# Ops\n\n- deploys on Tuesday\n- two\n"
MARKED = ("# Ops\n\n<<<<<<< your edit\n- deploys on **Wednesday**\n=======\n"
          "- deploys on Thursday\n>>>>>>> current file\n- two\n")


def preview_of(page: str) -> str:
    return page.split('id="preview"', 1)[1].split("</div>\n    </div>", 1)[0]


def textareas(page: str) -> dict[str, str]:
    """The read-only texts of the conflict component, by id."""
    return {i: htmllib.unescape(t).removeprefix("\n") for i, t in re.findall(
        r'<textarea id="([\w-]+)" class="conflict-text" readonly[^>]*>(.*?)</textarea>',
        page, re.S)}


def summaries(page: str) -> list[str]:
    return re.findall(r'<details class="conflict-part"[^>]*>\s*<summary>(.*?)</summary>',
                      page)


def test_the_live_preview_draws_a_conflict_region_not_nested_quotes(client_as):
    r = client_as("curator").post("/preview/", {"text": MARKED, "path": MEM},
                                  HTTP_HX_REQUEST="true")
    body = r.content.decode()
    assert r.status_code == 200
    assert "<blockquote>" not in body and "<h1>=======" not in body
    block = body.split('class="conflict-block"', 1)[1]
    assert '<p class="conflict-side-label">your edit</p>' in block
    assert '<p class="conflict-side-label">current file</p>' in block
    assert "<strong>Wednesday</strong>" in block and "deploys on Thursday" in block
    assert "<li>two</li>" in body.split('class="conflict-block"', 1)[1].split("</div></div>")[-1]


def test_a_lone_marker_line_is_shown_as_itself(client_as):
    r = client_as("curator").post("/preview/", {"text": "# A\n\n>>>>>>> theirs\n"},
                                  HTTP_HX_REQUEST="true")
    body = r.content.decode()
    assert '<p class="conflict-stray"><code>&gt;&gt;&gt;&gt;&gt;&gt;&gt; theirs</code></p>' \
        in body and "<blockquote>" not in body


def test_the_editors_stale_save_shows_the_component_and_a_conflict_preview(client_as,
                                                                           workspace):
    workspace.write(MEM, BASE, actor=BOT, tool="reflect")
    workspace.write(MEM, BASE.replace("Tuesday", "Thursday"), actor=BOT, tool="reflect")
    mine = BASE.replace("Tuesday", "Wednesday")
    r = client_as("curator").post("/edit/" + MEM, {"text": mine, "base": version_of(BASE),
                                                   "message": ""})
    page = r.content.decode()
    assert r.status_code == 409
    assert summaries(page)[:2] == ["The version you started from → the current file",
                                   "The version you started from → your text"]
    assert textareas(page) == {"conflict-base": BASE, "conflict-ours": mine,
                               "conflict-theirs": BASE.replace("Tuesday", "Thursday")}
    preview = preview_of(page)
    assert 'class="conflict-block"' in preview and "<blockquote>" not in preview


@pytest.fixture
def conflicting_revert(workspace: Store) -> tuple[str, str]:
    workspace.write(MEM, "# Ops\n\n- one\n- two\n", actor=BOT, tool="reflect")
    sha = workspace.write(MEM, "# Ops\n\n- one changed\n- two\n", actor=BOT,
                          tool="reflect").commit
    workspace.write(MEM, "# Ops\n\n- one changed again\n- two\n", actor=BOT, tool="reflect")
    return sha, workspace.head()


def test_the_revert_conflict_has_the_diffs_the_three_texts_and_a_preview(
        client_as, conflicting_revert):
    sha, head = conflicting_revert
    r = client_as("curator").post(f"/commit/{sha}/revert", {"head": head})
    page = r.content.decode()
    assert r.status_code == 409
    assert summaries(page)[:2] == ["The reverted commit → before the commit",
                                   "The reverted commit → the current file"]
    diffs = page.split('class="conflict-sides"', 1)[1].split('class="conflict-texts"', 1)[0]
    assert re.search(r'<tr class="del">.*- one<del> changed</del></td>', diffs)  # the revert
    assert re.search(r'<tr class="add">.*- one changed<ins> again</ins></td>', diffs)  # later
    assert textareas(page) == {"revert-1-base": "# Ops\n\n- one changed\n- two\n",
                               "revert-1-ours": "# Ops\n\n- one changed again\n- two\n",
                               "revert-1-theirs": "# Ops\n\n- one\n- two\n"}
    preview = page.split('class="conflict-part revert-preview"', 1)[1]
    assert 'class="conflict-block"' in preview and "<blockquote>" not in preview
    # the same buttons as the other conflict views: primary and subtle, full size
    actions = page.split('<div class="form-actions">', 1)[1].split("</div>", 1)[0]
    assert 'class="btn btn-primary" id="revert-save"' in actions
    assert 'class="btn btn-subtle"' in actions and "btn-sm" not in actions


def test_the_restore_conflict_uses_the_component_and_full_size_buttons(client_as, workspace):
    workspace.write(MEM, "# Ops\n\n- one\n", actor=BOT, tool="reflect")
    old = workspace.head()
    workspace.write(MEM, "# Ops\n\n- two\n", actor=BOT, tool="reflect")
    page_base = version_of("# Ops\n\n- two\n")
    workspace.write(MEM, "# Ops\n\n- three\n", actor=BOT, tool="reflect")
    r = client_as("curator").post(f"/restore/{MEM}", {"rev": old, "base": page_base})
    page = r.content.decode()
    assert r.status_code == 409
    assert summaries(page)[0] == f"The current file → the version from {old[:8]}"
    assert textareas(page) == {"restore-ours": "# Ops\n\n- three\n",
                               "restore-theirs": "# Ops\n\n- one\n"}
    actions = page.split('<div class="form-actions conflict-actions">', 1)[1]
    actions = actions.split("</div>", 1)[0]
    assert 'class="btn btn-primary"' in actions and "btn-sm" not in actions


def test_the_sync_conflict_uses_the_same_component(client_as, synced):  # noqa: F811
    s = synced()
    _conflict(s)
    page = client_as("curator").get(f"/sync/conflict/{SYNC_MEM}").content.decode()
    assert summaries(page)[:2] == ["Common base → the remote", "Common base → this instance"]
    assert set(textareas(page)) == {"merge-base", "merge-ours", "merge-theirs"}
    assert 'class="conflict-block"' in preview_of(page)


def test_labels_and_sides_of_a_conflict_stay_inert(client_as):
    text = ("<<<<<<< <img src=x onerror=alert(1)>\n<script>alert(2)</script>\n=======\n"
            "[x](javascript:alert(3))\n>>>>>>> <b onmouseover=alert(4)>\n"
            ">>>>>>> <svg onload=alert(5)>\n")
    body = client_as("curator").post("/preview/", {"text": text},
                                     HTTP_HX_REQUEST="true").content.decode()
    assert 'class="conflict-block"' in body
    assert "&lt;img src=x onerror=alert(1)&gt;" in body
    assert "&lt;svg onload=alert(5)&gt;" in body
    for raw in ("<img", "<script", "javascript:", "<b ", "<svg"):
        assert raw not in body
