"""The overview with hundreds of agents: filter by name, sort, page; the same for world
topics. Real workspace (git), the Django test client; htmx requests get one table."""

from __future__ import annotations

import datetime as dt
import re

import pytest
from django.utils import timezone

from memoryui.store import Actor, Kind, Store
from tests.web.test_browse import text_of

N_SCOPES = 120
N_WORLD = 60
T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC).timestamp()


def name(i: int) -> str:
    return f"agent-{i:03d}"


@pytest.fixture
def many(workspace: Store) -> Store:
    """120 agents (agent-007 the largest, agent-000 changed last) and 60 world topics;
    agents 010/011/012 have 3/1/2 daily-log entries waiting for review today."""
    s = workspace
    for i in range(N_SCOPES):
        size = 2000 if i == 7 else 20 + i
        s.write(s.path_for(Kind.MEMORY, name(i)), "x" * size + "\n",
                actor=Actor.agent(name(i)), tool="reflect",
                when=T0 + (10_000 if i == 0 else i))
    for i in range(N_WORLD):
        s.write(s.path_for(Kind.WORLD, name=f"topic-{i:02d}"), "w" * (10 + i) + "\n",
                actor=Actor.user("alice"), tool="edit", when=T0 + i)
    today = timezone.localdate().isoformat()
    for i, entries in ((10, 3), (11, 1), (12, 2)):
        text = f"# {today}\n" + "".join(f"\n## 0{n}:00\n\nfinding {n} of {name(i)}\n"
                                        for n in range(entries))
        s.write(s.path_for(Kind.DAILY, name(i), today), text, actor=Actor.agent(name(i)),
                tool="remember")
    return s


def scope_rows(html: str) -> list[str]:
    table = re.search(r'<table class="table ov-scopes">(.*?)</table>', html, re.S)
    return re.findall(r'<th scope="row"><a href="/s/([^/]+)/">', table.group(1)) if table else []


def world_rows(html: str) -> list[str]:
    table = re.search(r'<table class="table ov-world">(.*?)</table>', html, re.S)
    return re.findall(r'<th scope="row"><a href="/f/memory/world/([^"]+)\.md">',
                      table.group(1)) if table else []


def get(client, query: str = "", **headers: str) -> str:
    r = client.get("/" + query, **headers)
    assert r.status_code == 200
    return r.content.decode()


def test_the_overview_pages_hundreds_of_agents(client_as, many):
    c = client_as("viewer")
    html = get(c)
    assert scope_rows(html) == [name(i) for i in range(50)]
    assert "1–50 of 120" in text_of(html)
    assert "Page 1 of 3" in text_of(html)
    assert 'href="?page=2"' in html
    last = get(c, "?page=3")
    assert scope_rows(last) == [name(i) for i in range(100, 120)]
    assert "101–120 of 120" in text_of(last)
    assert get(c, "?page=999").count("agent-119") >= 1  # past the end: the last page
    assert scope_rows(get(c, "?page=999")) == scope_rows(last)


def test_filter_by_name_is_a_case_insensitive_substring(client_as, many):
    c = client_as("viewer")
    html = get(c, "?q=GENT-01")
    assert scope_rows(html) == [name(i) for i in range(10, 20)]
    assert "1–10 of 10" in text_of(html) and "(of 120)" in text_of(html)
    assert 'value="GENT-01"' in html  # the box keeps what was typed
    none = get(c, "?q=nobody")
    assert scope_rows(none) == []
    assert "No agents match “nobody”" in text_of(none)
    assert 'href="?"' in none  # "Show all" clears the filter


SORTS = [
    ("name", ["agent-000", "agent-001"]),
    ("-name", ["agent-119", "agent-118"]),
    ("-size", ["agent-007"]),  # then the agents with daily logs
    ("size", ["agent-000", "agent-001"]),
    ("last", ["agent-001", "agent-002"]),
    ("-review", ["agent-010", "agent-012", "agent-011"]),
]


def test_sort_by_each_column_both_ways(client_as, many):
    c = client_as("viewer")
    for sort, first in SORTS:
        rows = scope_rows(get(c, f"?sort={sort}"))
        assert rows[:len(first)] == first, sort
        assert len(rows) == 50
    rows = scope_rows(get(c, "?sort=-last"))
    assert sorted(rows[:3]) == ["agent-010", "agent-011", "agent-012"]  # today's logs
    assert rows[3] == "agent-000"


def test_the_review_column_counts_undecided_entries_and_links_to_them(client_as, many):
    html = get(client_as("viewer"), "?q=agent-01")
    row = re.search(r'href="/s/agent-010/">agent-010</a></th>(.*?)</tr>', html, re.S).group(1)
    assert 'href="/review/?scope=agent-010">3</a>' in row
    row = re.search(r'href="/s/agent-013/">agent-013</a></th>(.*?)</tr>', html, re.S).group(1)
    assert text_of(row).split()[-1] == "0"


def test_a_scope_row_shows_each_new_write_and_review_count(client_as, many):
    """Rows are kept rendered between requests: a write to the scope must still show."""
    c = client_as("viewer")

    def row(html: str) -> str:
        return re.search(r'href="/s/agent-011/">agent-011</a></th>(.*?)</tr>', html,
                         re.S).group(1)

    before = row(get(c, "?q=agent-011"))
    assert 'href="/review/?scope=agent-011">1</a>' in before
    assert row(get(c, "?q=agent-011")) == before  # unchanged: the same row
    today = timezone.localdate().isoformat()
    many.append(many.path_for(Kind.DAILY, name(11), today), "\n## 09:00\n\na new finding\n",
                actor=Actor.agent(name(11)), tool="remember")
    many.flush()
    after = row(get(c, "?q=agent-011"))
    assert 'href="/review/?scope=agent-011">2</a>' in after
    assert after != before


def test_sort_headers_flip_direction_and_keep_the_other_filters(client_as, many):
    html = get(client_as("viewer"), "?q=agent-0&wq=topic-1&sort=-size")
    assert 'aria-sort="descending"' in html
    table = re.search(r'<table class="table ov-scopes">(.*?)</table>', html, re.S).group(1)
    heads = dict(re.findall(r'<a class="ov-sort" href="([^"]+)"[^>]*>([A-Za-z ]+)', table))
    by_label = {v.strip(): k.replace("&amp;", "&") for k, v in heads.items()}
    assert by_label["Size"] == "?q=agent-0&sort=size&wq=topic-1"  # flips, keeps both filters
    assert by_label["Last change"].startswith("?q=agent-0&sort=-last")
    assert 'name="sort" value="-size"' in html  # typing keeps the sort (hidden field)


BAD = ["?sort=bogus", "?page=-1", "?page=abc", "?page=99999999999999", "?q=%00",
       "?q=" + "a" * 500, "?wsort=review", "?wpage=0&wq=%00", "?sort=&page=&q="]


def test_bad_parameters_fall_back_to_defaults(client_as, many):
    c = client_as("viewer")
    for query in BAD:
        html = get(c, query)
        assert scope_rows(html) == [name(i) for i in range(50)], query
        assert world_rows(html)[:1] == ["topic-59"], query


def test_world_topics_filter_sort_and_page_on_their_own(client_as, many):
    c = client_as("viewer")
    html = get(c)
    assert world_rows(html)[:2] == ["topic-59", "topic-58"]  # newest first by default
    assert len(world_rows(html)) == 50 and "1–50 of 60" in text_of(html)
    assert world_rows(get(c, "?wpage=2")) == [f"topic-{i:02d}" for i in range(9, -1, -1)]
    html = get(c, "?wq=PIC-3&wsort=-size&page=2")
    assert world_rows(html) == [f"topic-{i:02d}" for i in range(39, 29, -1)]
    assert scope_rows(html)[:1] == ["agent-050"]  # the scope table stays on its page 2
    assert world_rows(get(c, "?wsort=name"))[:2] == ["topic-00", "topic-01"]


def test_htmx_gets_the_table_it_asked_for_and_the_other_out_of_band(client_as, many):
    c = client_as("viewer")
    r = c.get("/?q=agent-11&wsort=name", HTTP_HX_REQUEST="true",
              HTTP_HX_TARGET="ov-scopes-table")
    html = r.content.decode()
    assert r.status_code == 200 and "HX-Request" in r["Vary"]
    assert "<html" not in html and "Global memory" not in html
    assert scope_rows(html) == [name(i) for i in range(110, 120)]
    # the world table comes along out of band, so its links keep the new scope filter
    assert '<div id="ov-world-table" hx-swap-oob="true">' in html
    world = html.split('<div id="ov-world-table" hx-swap-oob="true">', 1)[1]
    assert 'href="?q=agent-11&amp;wsort=-name"' in world  # its Topic header flips
    r = c.get("/?wq=topic-0", HTTP_HX_REQUEST="true", HTTP_HX_TARGET="ov-world-table")
    html = r.content.decode()
    assert "<html" not in html
    assert world_rows(html) == [f"topic-0{i}" for i in range(9, -1, -1)]
    assert '<div id="ov-scopes-table" hx-swap-oob="true">' in html
    page = c.get("/?q=agent-11")
    assert "HX-Request" in page["Vary"] and "<html" in page.content.decode()


def test_the_filter_works_without_javascript(client_as, many):
    html = get(client_as("viewer"))
    form = re.search(r'<form class="ov-form" method="get" action="/"[^>]*>(.*?)</form>', html, re.S)
    assert form, "a plain GET form"
    body = form.group(1)
    assert 'name="q"' in body and 'name="wq"' in body and 'type="submit"' in body
    assert 'hx-get="/"' in body and 'hx-push-url="true"' in body


def test_the_overview_says_so_while_a_large_workspace_is_first_catalogued(
        tmp_path, settings, client_as, monkeypatch):
    """First start on a big repository: the page answers at once with the scopes by name
    and says it is indexing; once the catalogue is filled, counts and times are there."""
    import threading

    from memoryui.search.catalogue import Catalogue
    from memoryui.workspace import get_store, reset_store

    seed = Store(tmp_path / "ws")
    seed.write("agents/ops-bot/memory/MEMORY.md", "# M\n", actor=Actor.agent("ops-bot"),
               tool="reflect")
    seed.close()
    release = threading.Event()
    real = Catalogue.fill
    from memoryui.search import catalogue

    monkeypatch.setattr(catalogue, "FILL_AT_ONCE_BELOW", 0)
    monkeypatch.setattr(Catalogue, "fill", lambda self: release.wait() and real(self))
    settings.MEMORYUI_WORKSPACE = tmp_path / "ws"
    settings.MEMORYUI_SEARCH_DB = tmp_path / "search.sqlite3"
    reset_store()
    try:
        c = client_as("viewer")
        page = c.get("/").content.decode()
        assert "indexing this workspace for the first time" in page and "ops-bot" in page
        assert 'http-equiv="refresh"' in page
        release.set()
        Catalogue.of(get_store()).wait_for_fill(60)
        page = c.get("/").content.decode()
        assert "for the first time" not in page and 'http-equiv="refresh"' not in page
        assert "last change" in page and "ops-bot" in page and "1 file" in page
    finally:
        release.set()
        reset_store()
