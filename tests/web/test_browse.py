"""Reading memory in the browser: overview, sidebar, scope page, file page, raw text.

A real git workspace written through the store by agents and people (backdated commits),
read with the Django test client as a viewer.
"""

from __future__ import annotations

import datetime as dt
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from memoryui.store import Actor, Store, parse_daily, version_of
from memoryui.web import hierarchy

T0 = dt.datetime(2026, 3, 2, 9, 0, tzinfo=dt.UTC).timestamp()
DAY = 86_400.0
OPS, RES, ALICE = Actor.agent("ops-bot"), Actor.agent("research-agent"), Actor.user("alice")
MEM = "agents/ops-bot/memory/MEMORY.md"
SCRATCH = "agents/ops-bot/memory/SCRATCHPAD.md"
NOTE = "agents/ops-bot/memory/notes/runbook.md"
WORLD = "memory/world/people.md"
GLOBAL = "memory/MEMORY.md"
SKILL = "skills/deploy-rollback/SKILL.md"
TEMPLATES = Path(__file__).resolve().parents[2] / "templates"


def daily(scope: str, date: str) -> str:
    return f"agents/{scope}/memory/daily/{date}.md"


def seed(store: Store) -> None:
    store.write(WORLD, "# People\n\n| name | role |\n|---|---|\n| Alice | lead |\n",
                actor=ALICE, tool="update_world", when=T0)
    store.write(GLOBAL, "# Shared\n\n- company: Initech\n", actor=ALICE, tool="edit", when=T0)
    store.write(SKILL, "---\nname: deploy-rollback\ndescription: Roll back.\n---\n\n# Steps\n",
                actor=ALICE, tool="edit", when=T0)
    store.write("directives/memory.md", "Recall first.\n", actor=ALICE, tool="edit", when=T0)
    store.write(MEM, "# ops-bot\n\n- [ ] tidy\n- [x] read notes\n" + "x" * 11_000 + "\n",
                actor=OPS, tool="reflect", when=T0 + 60)
    store.write(SCRATCH, "- [ ] check disk\n* [ ] page Bob\n- [x] done\n", actor=OPS,
                tool="memory_write", when=T0 + 120)
    store.write(NOTE, "# Runbook\n", actor=OPS, tool="memory_write", when=T0 + 180)
    for i, date in enumerate(["2026-02-27", "2026-03-01", "2026-03-02"]):
        store.append(daily("ops-bot", date), f"\n## 10:0{i}\n\nDeployed api v{i}.\n",
                     header=f"# {date}\n", actor=OPS, tool="remember", when=T0 + DAY * i)
    store.append(daily("research-agent", "2026-03-02"), "\n## 11:00\n\nRead a paper.\n",
                 header="# 2026-03-02\n", actor=RES, tool="remember", when=T0 + 3 * DAY)
    store.write(MEM, store.read(MEM) + "- curated\n", actor=ALICE, tool="edit",
                message="Curate ops-bot", when=T0 + 4 * DAY)


@pytest.fixture
def ws(workspace: Store) -> Store:
    seed(workspace)
    return workspace


@pytest.fixture
def viewer(client_as):
    return client_as("viewer")


def text_of(html: str) -> str:
    """Visible text with tags removed and whitespace collapsed (what a reader sees)."""
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).strip()


class _Attrs(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict]] = []

    def handle_starttag(self, tag: str, attrs: list) -> None:
        self.tags.append((tag, dict(attrs)))


def tags(html: str) -> list[tuple[str, dict]]:
    p = _Attrs()
    p.feed(html)
    return p.tags


def hrefs(html: str) -> set[str]:
    return {a["href"] for t, a in tags(html) if t == "a" and "href" in a}


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


# -- file page ----------------------------------------------------------------------------


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
