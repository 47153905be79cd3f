"""Reading memory in the browser: overview, sidebar and scope page, and a CSP-clean page.

A real git workspace written through the store by agents and people (backdated commits),
read with the Django test client as a viewer.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from memoryui.store import Actor, Store
from memoryui.web import hierarchy
from tests.web.browsing import ALICE, GLOBAL, MEM, NOTE, OPS, SCRATCH, SKILL, WORLD, daily, seed
from tests.web.html_reading import hrefs, tags, text_of

TEMPLATES = Path(__file__).resolve().parents[2] / "templates"


@pytest.fixture
def ws(workspace: Store) -> Store:
    seed(workspace)
    return workspace


@pytest.fixture
def viewer(client_as):
    return client_as("viewer")


# -- overview -----------------------------------------------------------------------------


def test_overview_shows_every_part_of_the_hierarchy(ws, viewer):
    r = viewer.get("/")
    assert r.status_code == 200
    html = r.content.decode()
    links = hrefs(html)
    for path in (WORLD, GLOBAL, SKILL, "directives/memory.md", MEM,
                 daily("ops-bot", "2026-03-02")):
        assert "/f/" + path in links, path
    assert {"/s/ops-bot/", "/s/research-agent/"} <= links
    text = text_of(html)
    assert "Agents" in text  # the Duragent scope term
    # ops-bot: 3 daily logs, 1 note, 4 files; research-agent: 1 daily log
    row = re.search(r'href="/s/ops-bot/">ops-bot</a></th>(.*?)</tr>', html, re.S).group(1)
    cells = [text_of(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
    assert cells[1:5] == ["3", "2026-03-02", "1", "6"]
    assert "alice" in cells[5]  # the last change was Alice's curation


def test_overview_budget_meter_marks_an_oversized_memory(ws, viewer):
    html = viewer.get("/").content.decode()
    meters = [a for t, a in tags(html) if t == "meter"]
    assert meters, "sizes are drawn as <meter> elements"
    # ops-bot's MEMORY.md is over Duragent's 10 KB budget
    row = re.search(r'href="/s/ops-bot/">ops-bot</a></th>(.*?)</tr>', html, re.S).group(1)
    assert 'class="budget is-over"' in row
    assert "over budget" in text_of(row)
    assert float(re.search(r'<meter[^>]*value="([\d.]+)"', row).group(1)) == 1.0


def test_overview_pending_count_fragment(ws, viewer):
    (ws.root / SCRATCH).write_text("- [ ] changed outside\n")
    r = viewer.get("/_browse/pending-count/", HTTP_HX_REQUEST="true")
    assert r.status_code == 200
    assert "1 pending change" in text_of(r.content.decode())
    assert "/pending/" in hrefs(r.content.decode())


def test_overview_uses_the_layouts_scope_term(settings, tmp_path, client_as):
    from memoryui.workspace import get_store, reset_store

    settings.MEMORYUI_WORKSPACE = tmp_path / "dagu"
    settings.MEMORYUI_LAYOUT = "dagu"
    reset_store()
    try:
        store = get_store()
        store.write("memory/dags/etl-nightly/MEMORY.md", "# ETL\n", actor=Actor.agent("etl"),
                    tool="edit")
        html = client_as("viewer").get("/").content.decode()
        assert "DAGs" in text_of(html)
        assert "/s/etl-nightly/" in hrefs(html)
        assert "World" not in text_of(html)  # Dagu has no world topics
    finally:
        reset_store()


def test_the_overview_hierarchy_is_current_after_each_write(ws):
    h1 = hierarchy.build(ws)
    ops = h1.scopes["ops-bot"]
    assert (ops.daily_count, ops.note_count, ops.newest_daily.name) == (3, 1, "2026-03-02")
    ws.write(NOTE, "# Runbook v2\n", actor=OPS, tool="memory_write")
    ws.write("agents/ops-bot/memory/notes/oncall.md", "# On call\n", actor=OPS,
             tool="memory_write")
    h2 = hierarchy.build(ws)
    assert h2.scopes["ops-bot"].note_count == 2
    assert h2.scopes["ops-bot"].size == ops.size + len(" v2") + len("# On call\n")
    assert h2.files == h1.files + 1
    assert h2.last.sha in {c.sha for c in ws.log(limit=2)}  # (one second: the greater sha)


# -- sidebar ------------------------------------------------------------------------------


def test_sidebar_expands_only_the_current_scope(ws, viewer):
    html = viewer.get("/f/" + daily("ops-bot", "2026-03-01")).content.decode()
    side = html.split('class="sidebar"', 1)[1].split("</aside>", 1)[0]
    links = hrefs(side)
    assert "/f/" + MEM in links and "/f/" + NOTE in links
    assert "/f/" + daily("ops-bot", "2026-03-02") in links  # March, the open month
    # February is collapsed to a link to the scope page's month
    assert "/s/ops-bot/?month=2026-02#m-2026-02" in links
    assert "/f/" + daily("ops-bot", "2026-02-27") not in links
    assert "/s/research-agent/" in links
    assert "/f/" + daily("research-agent", "2026-03-02") not in links
    current = [a for t, a in tags(side) if t == "a" and a.get("aria-current") == "page"]
    assert [a["href"] for a in current] == ["/f/" + daily("ops-bot", "2026-03-01")]


def test_the_sidebar_written_once_shows_each_page_its_place_and_every_change(ws, viewer):
    """Each page marks its own file in the sidebar, and a write, an outside edit or a
    deletion shows on the next page."""
    def side(url: str) -> str:
        html = viewer.get(url).content.decode()
        return html.split('class="sidebar"', 1)[1].split("</aside>", 1)[0]

    def current(url: str) -> list[str]:
        return [a["href"] for t, a in tags(side(url)) if t == "a" and a.get("aria-current")]

    day = daily("ops-bot", "2026-03-01")
    for _ in range(2):
        assert current("/f/" + day) == ["/f/" + day]
        assert current("/f/" + NOTE) == ["/f/" + NOTE]
        assert current("/s/ops-bot/") == ["/s/ops-bot/"]
        assert current("/history/" + NOTE) == ["/f/" + NOTE]
    new_note = "agents/ops-bot/memory/notes/oncall.md"
    ws.write(new_note, "# On call\n", actor=OPS, tool="memory_write")
    assert "/f/" + new_note in hrefs(side("/f/" + day))
    ws.write("memory/world/vendors.md", "# Vendors\n", actor=ALICE, tool="update_world")
    assert "/f/memory/world/vendors.md" in hrefs(side("/f/" + day))
    (ws.root / "agents/ops-bot/memory/notes/outside.md").write_text("# Outside\n")
    ws.notify(["agents/ops-bot/memory/notes/outside.md"])  # as a sync or a scan reports it
    assert "/f/agents/ops-bot/memory/notes/outside.md" in hrefs(side("/f/" + day))
    ws.delete(new_note, actor=ALICE, tool="delete")
    assert "/f/" + new_note not in hrefs(side("/f/" + day))


def test_sidebar_helper_for_other_pages(ws):
    ctx = hierarchy.sidebar(ws, scope="research-agent")["sidebar"]
    assert ctx["scope"].name == "research-agent"
    assert [i.name for i in ctx["scope"].daily] == ["2026-03-02"]
    assert [i.name for i in ctx["h"].world] == ["people"]
    assert ctx["h"].global_memory.path == GLOBAL
    from django.template.loader import render_to_string

    html = render_to_string("web/_sidebar.html", ctx and {"sidebar": ctx})
    assert "/f/" + daily("research-agent", "2026-03-02") in html


# -- scope page ---------------------------------------------------------------------------


def test_scope_page_groups_files_by_kind(ws, viewer):
    r = viewer.get("/s/ops-bot/")
    assert r.status_code == 200
    html = r.content.decode()
    text = text_of(html)
    links = hrefs(html)
    assert {"/f/" + MEM, "/f/" + SCRATCH, "/f/" + NOTE, "/s/ops-bot/history/"} <= links
    assert "2 open items" in text  # "- [ ]" and "* [ ]" lines of the scratchpad
    # the newest month's logs are listed; February is one link
    assert "/f/" + daily("ops-bot", "2026-03-02") in links
    assert "/f/" + daily("ops-bot", "2026-02-27") not in links
    assert "?month=2026-02#m-2026-02" in links
    feb = viewer.get("/s/ops-bot/?month=2026-02").content.decode()
    assert "/f/" + daily("ops-bot", "2026-02-27") in hrefs(feb)


def test_scope_page_errors(ws, viewer):
    assert viewer.get("/s/nobody/").status_code == 404
    r = viewer.get("/s/bad%20name/")
    assert r.status_code == 400
    assert "invalid scope name" in r.content.decode()


# -- the Content-Security-Policy ------------------------------------------------------------


def my_templates() -> list[Path]:
    return [*sorted((TEMPLATES / "web" / "browse").glob("*.html")),
            TEMPLATES / "web" / "_sidebar.html", TEMPLATES / "web" / "_hierarchy.html",
            TEMPLATES / "registration" / "login.html",
            TEMPLATES / "403.html"]


@pytest.mark.parametrize("template", my_templates(), ids=lambda p: p.name)
def test_templates_have_no_inline_script_or_style(template):
    src = template.read_text()
    assert not re.search(r"\sstyle\s*=", src)
    assert "<style" not in src
    for m in re.finditer(r"<script\b[^>]*>", src):
        assert "src=" in m.group(0), m.group(0)
    assert not re.search(r"\son[a-z]+\s*=", src)


def test_pages_have_no_inline_script_or_style(ws, client_as):
    c = client_as("admin")
    for url in ["/", "/s/ops-bot/", "/f/" + MEM, "/f/" + MEM + "?view=raw", "/edit/" + MEM,
                "/new/", "/delete/" + NOTE, "/f/nope.md"]:
        r = c.get(url)
        assert r.status_code in (200, 404)
        assert "script-src 'self'" in r["Content-Security-Policy"]
        for tag, attrs in tags(r.content.decode()):
            assert "style" not in attrs, (url, tag)
            assert not (tag == "script" and "src" not in attrs), url
            if tag == "form" and attrs.get("method") == "post":
                assert "csrfmiddlewaretoken" in r.content.decode()
