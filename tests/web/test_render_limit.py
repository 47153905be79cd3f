"""Text over the render limit (MEMORYUI_RENDER_LIMIT) is never rendered or diffed line by
line: its pages say so and offer it raw and as a download, so a huge file cannot hold a
worker for seconds or make a page as large as itself."""

from __future__ import annotations

import pytest

from memoryui.store import Actor, Store

MEM = "agents/ops-bot/memory/MEMORY.md"
BOT = Actor.agent("ops-bot")
LIMIT = 4096
BIG = "# Heading of a huge file\n\n" + "".join(f"- fact number {i}\n" for i in range(600))
SMALL = "# ops-bot\n\n- deploys on Tuesday\n"


@pytest.fixture
def ws(workspace: Store, settings) -> Store:
    settings.MEMORYUI_RENDER_LIMIT = LIMIT
    assert len(BIG) > LIMIT
    workspace.write(MEM, BIG, actor=BOT, tool="reflect")
    return workspace


def test_the_file_page_offers_a_huge_file_raw_and_as_a_download(ws, client_as):
    viewer = client_as("viewer")
    for url in (f"/f/{MEM}", f"/f/{MEM}?view=raw"):
        r = viewer.get(url)
        page = r.content.decode()
        assert r.status_code == 200
        assert "This file is too large to show here" in page and "up to 4.1 KB" in page
        assert f'href="/raw/{MEM}"' in page and f'href="/raw/{MEM}?download=1"' in page
        assert "fact number 599" not in page and "Heading of a huge file" not in page
        assert len(r.content) < len(BIG)
    download = viewer.get(f"/raw/{MEM}?download=1")
    assert download.content.decode() == BIG
    assert download["Content-Disposition"] == 'attachment; filename="MEMORY.md"'


def test_a_file_under_the_limit_still_renders(ws, client_as):
    ws.write(MEM, SMALL, actor=BOT, tool="reflect")
    page = client_as("viewer").get(f"/f/{MEM}").content.decode()
    assert "too large" not in page and "deploys on Tuesday</li>" in page


def test_the_editor_of_a_huge_file_has_no_textarea_and_no_preview(ws, client_as):
    r = client_as("curator").get(f"/edit/{MEM}")
    page = r.content.decode()
    assert r.status_code == 200
    assert "This file is too large to edit in the browser" in page
    assert "<textarea" not in page and "fact number 599" not in page
    assert f'href="/raw/{MEM}?download=1"' in page


def test_a_live_preview_over_the_limit_is_a_notice(ws, client_as):
    r = client_as("curator").post("/preview/", {"text": BIG, "path": MEM},
                                  headers={"HX-Request": "true"})
    html = r.content.decode()
    assert r.status_code == 200
    assert "too large to render here" in html and "fact number" not in html


def test_blame_of_a_huge_file_is_not_drawn_line_by_line(ws, client_as):
    r = client_as("viewer").get(f"/blame/{MEM}")
    page = r.content.decode()
    assert r.status_code == 200
    assert "This file is too large to blame line by line" in page
    assert 'class="blame"' not in page and "fact number 599" not in page


def test_a_huge_outside_rewrite_is_listed_without_its_diff(ws, client_as):
    (ws.root / MEM).write_text(BIG.replace("fact", "FACT"))
    page = client_as("viewer").get("/pending/").content.decode()
    assert "Large diff" in page and "FACT number 599" not in page


def test_a_commit_or_compare_of_a_huge_file_is_not_diffed_line_by_line(ws, client_as):
    before = ws.log(MEM, limit=1)[0].sha
    ws.write(MEM, BIG + "- one more fact\n", actor=BOT, tool="reflect")
    sha = ws.log(MEM, limit=1)[0].sha
    client = client_as("viewer")
    for rendered in (False, True):
        if rendered:
            client.cookies["memoryui_diffview"] = "rendered"
        for url in (f"/commit/{sha}/", f"/compare/{MEM}?from={before}&to={sha}"):
            r = client.get(url)
            page = r.content.decode()
            assert r.status_code == 200, url
            assert "Large diff" in page and "not shown" in page, url
            assert "one more fact" not in page and "fact number 599" not in page, url
            assert 'class="prose-block' not in page, url
    assert f"/at/{sha}/{MEM}" in client.get(f"/commit/{sha}/").content.decode() or \
        "View the file at this commit" in client.get(f"/commit/{sha}/").content.decode()
