"""The file page and raw text: rendered facts, exact bytes, refused paths, where agents stop."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from memoryui.store import Actor, Store, parse_daily, version_of
from memoryui.web import hierarchy
from tests.web.browsing import ALICE, MEM, NOTE, OPS, SCRATCH, SKILL, WORLD, daily, seed
from tests.web.html_reading import hrefs, tags, text_of


@pytest.fixture
def viewer(client_as):
    return client_as("viewer")


@pytest.fixture
def ws(workspace: Store) -> Store:
    seed(workspace)
    return workspace


def test_file_page_renders_markdown_with_facts(ws, viewer):
    r = viewer.get("/f/" + WORLD)
    assert r.status_code == 200
    html = r.content.decode()
    assert "<table>" in html and "<td>Alice</td>" in html  # rendered, not raw
    text = text_of(html)
    assert "World topic" in text  # kind badge
    assert "Last change" in text and "alice" in text
    commit = ws.log(WORLD, limit=1)[0].sha
    links = hrefs(html)
    assert f"/commit/{commit}/" in links
    assert {"/history/" + WORLD, "/blame/" + WORLD, "/raw/" + WORLD,
            "/f/" + WORLD + "?view=raw"} <= links
    assert "/edit/" + WORLD not in links and "/delete/" + WORLD not in links  # a viewer


def test_file_page_task_lists_and_breadcrumbs(ws, viewer):
    html = viewer.get("/f/" + SCRATCH).content.decode()
    body = html.split('<main', 1)[1]  # the header's drawer toggle is a checkbox too
    assert body.count('type="checkbox"') == 3
    crumbs = html.split('class="breadcrumbs"', 1)[1].split("</nav>", 1)[0]
    assert "/s/ops-bot/" in hrefs(crumbs)


def test_raw_view_has_line_anchors_and_the_exact_text(ws, viewer):
    html = viewer.get("/f/" + SCRATCH + "?view=raw").content.decode()
    assert 'id="L1"' in html and 'id="L3"' in html and 'id="L4"' not in html
    assert "<td class=\"code\">* [ ] page Bob</td>" in html


def test_daily_log_page_lists_entries_with_anchors(ws, viewer):
    path = daily("ops-bot", "2026-03-01")
    html = viewer.get("/f/" + path).content.decode()
    (entry,) = parse_daily(ws.read(path))
    assert f'id="e-{entry.id}"' in html
    assert f'href="#e-{entry.id}"' in html
    assert "10:01" in text_of(html) and "Deployed api v1." in text_of(html)


def test_budget_meter_on_file_page(ws, viewer):
    html = viewer.get("/f/" + MEM).content.decode()
    assert 'class="budget is-over"' in html
    assert "Duragent: MEMORY.md 2-10 KB" in html


def test_missing_file_is_404_with_create_link_for_curators(ws, client_as):
    path = "agents/ops-bot/memory/notes/new-one.md"
    r = client_as("curator").get("/f/" + path)
    assert r.status_code == 404
    assert "/new/?kind=note&scope=ops-bot&name=new-one" in hrefs(r.content.decode())


def test_missing_file_has_no_create_link_for_viewers(ws, viewer):
    r = viewer.get("/f/agents/ops-bot/memory/notes/new-one.md")
    assert r.status_code == 404
    assert not [h for h in hrefs(r.content.decode()) if h.startswith("/new/")]


@pytest.mark.parametrize("url", [
    "/f/../settings.py", "/f/a/../../etc/passwd", "/f/.git/config", "/f/agents//x.md",
    "/f/%00", "/f/agents", "/raw/.git/HEAD", "/raw/../x", "/f/" + "a" * 300 + ".md",
])
def test_invalid_paths_are_400_never_500(ws, viewer, url):
    r = viewer.get(url)
    assert r.status_code == 400, (url, r.status_code)


def test_raw_endpoint_serves_exact_bytes(ws, viewer):
    r = viewer.get("/raw/" + SKILL)
    assert r.status_code == 200
    assert r["Content-Type"] == "text/plain; charset=utf-8"
    assert r.content == (ws.root / SKILL).read_bytes()
    assert r["ETag"] == f'"{version_of(r.content)}"'
    assert viewer.get("/raw/memory/world/nope.md").status_code == 404


def test_markdown_xss_is_sanitized_on_the_file_page(ws, viewer):
    xss = (Path(__file__).resolve().parents[1] / "fixtures" / "xss.md").read_text()
    ws.write("memory/world/xss.md", xss, actor=ALICE, tool="edit")
    html = viewer.get("/f/memory/world/xss.md").content.decode()
    body = html.split('class="markdown', 1)[1].split("</article>", 1)[0]
    assert "<script" not in body.lower()
    for tag, attrs in tags(body):
        assert not [a for a in attrs if a.lower().startswith("on")], (tag, attrs)
        assert "style" not in attrs
        for url in (attrs.get("href"), attrs.get("src")):  # as the browser decodes them
            scheme = re.sub(r"[\x00-\x20]", "", url or "").lower().split(":", 1)
            assert len(scheme) == 1 or scheme[0] not in ("javascript", "vbscript", "data")


# -- truncation markers ---------------------------------------------------------------------


@pytest.fixture
def dagu(settings, tmp_path):
    from memoryui.workspace import get_store, reset_store

    settings.MEMORYUI_WORKSPACE = tmp_path / "dagu"
    settings.MEMORYUI_LAYOUT = "dagu"
    reset_store()
    yield get_store()
    reset_store()


def test_dagu_file_page_marks_where_the_agent_stops_reading(dagu, viewer):
    path = "memory/dags/etl/MEMORY.md"
    dagu.write(path, "".join(f"line {i}\n" for i in range(1, 238)), actor=Actor.agent("etl"),
               tool="edit")
    html = viewer.get("/f/" + path).content.decode()
    text = text_of(html)
    assert "agents see the first 200 lines; 37 lines below this mark are not injected" in text
    assert "?view=raw#cut" in hrefs(html)
    raw = viewer.get("/f/" + path + "?view=raw").content.decode()
    rows = re.findall(r'<tr (?:class="([^"]*)" )?id="(L\d+|cut)"', raw)
    ids = [i for _c, i in rows]
    assert ids[199:202] == ["L200", "cut", "L201"]
    assert ids[-1] == "L237"  # the raw view still shows everything


def test_dagu_exactly_200_lines_with_final_newline_is_cut_by_dagus_rule(dagu, viewer):
    path = "memory/MEMORY.md"
    dagu.write(path, "x\n" * 200, actor=Actor.agent("etl"), tool="edit")
    text = text_of(viewer.get("/f/" + path).content.decode())
    assert "only the final newline falls past the limit" in text
    dagu.write(path, "x\n" * 199 + "x", actor=Actor.agent("etl"), tool="edit")
    assert "Agents see only part" not in text_of(viewer.get("/f/" + path).content.decode())


def test_no_marker_when_the_framework_reads_everything(ws, viewer):
    ws.write(NOTE, "line\n" * 500, actor=OPS, tool="memory_write")
    html = viewer.get("/f/" + NOTE + "?view=raw").content.decode()
    assert 'id="cut"' not in html and "cut-note" not in html


def test_agent_cut_rules():
    text = "a\n" * 250
    cut = hierarchy.agent_cut("dagu", "memory", text)
    assert (cut.kept_lines, cut.hidden_lines, cut.hard, cut.partial) == (200, 50, True, False)
    assert text[:cut.offset] == "a\n" * 199 + "a"  # Dagu keeps 200 split elements
    assert hierarchy.agent_cut("dagu", "memory", "a\n" * 199) is None
    big = ("é" * 100 + "\n") * 200  # 201 bytes a line: 32 KiB falls inside line 164
    cut = hierarchy.agent_cut("zerostack", "note", big)
    assert cut.hard and cut.partial and cut.line == 164 and cut.kept_lines == 163
    assert len(big[:cut.offset].encode()) <= 32 * 1024
    assert hierarchy.agent_cut("zerostack", "global", "x" * 200_000).skipped
    soft = hierarchy.agent_cut("jutul", "memory", "- entry\n" * 260)
    assert soft is not None and not soft.hard and soft.kept_lines == 200
    assert hierarchy.agent_cut("duragent", "memory", "x\n" * 5000) is None
