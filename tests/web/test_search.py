"""The search page: what a signed-in person sees when they look for something."""

from __future__ import annotations

import os
import re
import time

import pytest

from memoryui.store import Actor, parse_daily

BOT = Actor.agent("ops-bot")
ALICE = Actor.user("alice")


@pytest.fixture
def ws(workspace):
    s = workspace
    s.write(s.path_for("note", "ops-bot", "kafka-rebalancing"),
            "# Kafka rebalancing\n\nConsumers pause while partitions move.\n", actor=BOT, tool="t")
    s.write(s.path_for("note", "billing-agent", "invoices"),
            "# Invoices\n\nThe invoice run waits for kafka lag to drop.\n",
            actor=Actor.agent("billing-agent"), tool="t")
    s.write(s.path_for("world", None, "xss"),
            "kafka <script>alert('pwned')</script> & <b>bold</b>\n", actor=ALICE, tool="t")
    daily = s.path_for("daily", "ops-bot", "2026-02-12")
    for hhmm, body in (("09:00", "Coffee and checks."), ("11:30", "Kafka broker 3 restarted.")):
        s.append(daily, f"\n## {hhmm}\n\n{body}\n", header="# 2026-02-12\n", actor=BOT,
                 tool="remember")
    return s


def test_anonymous_people_are_sent_to_sign_in(client, ws):
    resp = client.get("/search/?q=kafka")
    assert resp.status_code == 302
    assert resp["Location"].startswith("/accounts/login/")


def test_a_viewer_finds_ranked_highlighted_results(client_as, ws):
    resp = client_as("viewer").get("/search/?q=kafka")
    assert resp.status_code == 200
    html = resp.content.decode()
    assert "<mark>Kafka</mark>" in html or "<mark>kafka</mark>" in html
    links = re.findall(r'class="search-result-path mono" href="([^"]+)"', html)
    # The note named after the query comes first.
    assert links[0] == "/f/agents/ops-bot/memory/notes/kafka-rebalancing.md"
    assert len(links) == 4
    assert 'href="/s/billing-agent/"' in html
    assert "badge-note" in html and "badge-daily" in html and "badge-world" in html
    assert "4 files match" in html


def test_file_text_is_escaped_in_snippets(client_as, ws):
    html = client_as("viewer").get("/search/?q=pwned").content.decode()
    assert "<script>alert" not in html
    assert "&lt;script&gt;alert(&#x27;<mark>pwned</mark>&#x27;)" in html
    assert "<b>bold</b>" not in html


def test_a_daily_hit_links_to_its_entry(client_as, ws):
    html = client_as("viewer").get("/search/?q=broker").content.decode()
    text = ws.read(ws.path_for("daily", "ops-bot", "2026-02-12"))
    entry = next(e for e in parse_daily(text) if "broker" in e.body)
    assert f'href="/f/agents/ops-bot/memory/daily/2026-02-12.md#e-{entry.id}"' in html
    assert "entry at 11:30" in html


def test_htmx_gets_only_the_results_fragment(client_as, ws):
    resp = client_as("viewer").get("/search/?q=invoice", HTTP_HX_REQUEST="true",
                                   HTTP_HX_TARGET="search-results")
    html = resp.content.decode()
    assert resp.status_code == 200
    assert "<html" not in html and "<form" not in html
    assert "agents/billing-agent/memory/notes/invoices.md" in html


def test_the_form_works_without_javascript_and_updates_as_you_type(client_as, ws):
    html = client_as("viewer").get("/search/").content.decode()
    form = re.search(r'<form class="search-form"[^>]*>', html).group(0)
    assert 'method="get"' in form and 'action="/search/"' in form
    assert 'hx-trigger="input changed delay:250ms' in html
    assert 'name="scope"' in html and 'name="kind"' in html and 'name="from"' in html
    assert "<script>" not in html.split("</head>")[1]  # no inline scripts (CSP)
    assert 'style="' not in html


def test_filters_narrow_the_results(client_as, ws):
    c = client_as("viewer")
    html = c.get("/search/?q=kafka&scope=billing-agent").content.decode()
    assert "invoices.md" in html and "kafka-rebalancing.md" not in html
    html = c.get("/search/?q=kafka&kind=daily").content.decode()
    assert "2026-02-12.md" in html and "invoices.md" not in html
    html = c.get("/search/?q=kafka&kind=daily&from=2026-03-01").content.decode()
    assert "No matches" in html


def test_a_malformed_query_shows_a_message_not_an_error_page(client_as, ws):
    c = client_as("viewer")
    resp = c.get('/search/?q="unbalanced')
    assert resp.status_code == 400
    assert "Unbalanced quote" in resp.content.decode()
    resp = c.get("/search/?q=(kafka", HTTP_HX_REQUEST="true")
    assert resp.status_code == 200  # htmx swaps only 2xx: the message must arrive
    assert "parenthesis is not closed" in resp.content.decode()
    for bad in ("/search/?q=kafka&from=yesterday", "/search/?q=kafka&kind=nonsense",
                "/search/?q=kafka&page=-3", "/search/?q=" + "x" * 2000):
        assert c.get(bad).status_code in (200, 400), bad
    assert c.get("/search/?q=kafka&from=yesterday").status_code == 400
    assert "Unknown kind nonsense" in c.get("/search/?q=kafka&kind=nonsense").content.decode()


def test_a_change_is_searchable_right_after_it_is_saved(client_as, ws):
    c = client_as("viewer")
    assert "No matches" in c.get("/search/?q=zeppelin").content.decode()
    ws.write(ws.path_for("note", "ops-bot", "airships"), "zeppelin maintenance\n",
             actor=ALICE, tool="edit")
    assert "airships.md" in c.get("/search/?q=zeppelin").content.decode()


def test_many_results_are_paged(client_as, workspace):
    for i in range(25):
        workspace.write(workspace.path_for("note", "ops-bot", f"n{i:02d}"), "paging test\n",
                        actor=BOT, tool="t")
    c = client_as("viewer")
    html = c.get("/search/?q=paging").content.decode()
    assert html.count('class="search-result"') == 20
    assert 'href="?q=paging&amp;page=2"' in html
    html = c.get("/search/?q=paging&page=2").content.decode()
    assert html.count('class="search-result"') == 5
    assert "showing 21–25" in html


def test_a_query_error_points_at_the_place(client_as, ws):
    c = client_as("viewer")
    for hx in ({}, {"HTTP_HX_REQUEST": "true"}):
        resp = c.get("/search/", {"q": "kafka OR (broker"}, **hx)
        html = resp.content.decode()
        assert resp.status_code == (200 if hx else 400)
        assert "parenthesis is not closed" in html
        # The query as typed, with the place marked.
        assert ('<span>kafka OR </span><mark class="search-error-mark">(</mark>'
                "<span>broker</span>") in html
        assert "column 10" in html
    html = c.get("/search/", {"q": "kafka OR"}).content.decode()
    assert '<span>kafka OR</span><mark class="search-error-mark"> </mark>' in html


@pytest.mark.parametrize("params, field, needle", [
    ({"to": "9999-12-31"}, "to", "9999-12-31 is out of range"),
    ({"from": "0001-01-01"}, "from", "0001-01-01 is out of range"),
    ({"from": "2026-02-30"}, "from", "is not a date"),
    ({"from": "2026-03-01", "to": "2026-02-01"}, "from", "is after the end date"),
])
def test_a_bad_date_is_a_readable_400_next_to_its_field(client_as, ws, params, field, needle):
    c = client_as("viewer")
    resp = c.get("/search/", {"q": "kafka", **params})
    html = resp.content.decode()
    assert resp.status_code == 400
    label = re.search(rf'<label>\w+ <input type="date" name="{field}"[^>]*>\s*'
                      r'<ul class="errorlist"><li>([^<]*)</li>', html)
    assert label and needle in label.group(1), html
    assert 'aria-invalid="true"' in html
    # Live search (htmx) gets the message in the results area, with a 200 htmx will swap.
    resp = c.get("/search/", {"q": "kafka", **params}, HTTP_HX_REQUEST="true")
    assert resp.status_code == 200 and needle in resp.content.decode()
    assert "HX-Request" in resp["Vary"]


def test_the_last_word_typed_finds_longer_words(client_as, ws):
    ws.write(ws.path_for("note", "ops-bot", "paging"),
             "Paged the on-call lead; the escalation went to the CTO.\n", actor=BOT, tool="t")
    c = client_as("viewer")
    for hx in ({}, {"HTTP_HX_REQUEST": "true"}):
        html = c.get("/search/?q=escal", **hx).content.decode()
        assert "agents/ops-bot/memory/notes/paging.md" in html
        assert "<mark>escalation</mark>" in html
    # Earlier words stay whole words.
    assert "No matches" in c.get("/search/?q=escal+lead&mode=keyword").content.decode()
    assert "paging.md" in c.get("/search/?q=lead+escal").content.decode()


def test_not_and_parentheses_work_on_the_page(client_as, ws):
    html = client_as("viewer").get(
        "/search/", {"q": "(kafka OR invoice) AND NOT broker", "mode": "keyword"}
    ).content.decode()
    links = re.findall(r'class="search-result-path mono" href="([^"]+)"', html)
    assert sorted(links) == ["/f/agents/billing-agent/memory/notes/invoices.md",
                             "/f/agents/ops-bot/memory/notes/kafka-rebalancing.md",
                             "/f/memory/world/xss.md"]


def test_changed_is_the_time_of_the_last_commit_not_of_the_file(client_as, ws, tmp_path,
                                                               settings):
    then = time.time() - 20 * 86400
    path = ws.path_for("memory", "ops-bot")
    ws.write(path, "# Memory\n\nwombat runbook\n", actor=BOT, tool="t", when=int(then))
    os.utime(ws.root / path, None)  # touched a minute ago, as a checkout leaves files
    settings.MEMORYUI_SEARCH_DB = tmp_path / "fresh-index.sqlite3"  # a first build
    html = client_as("viewer").get("/search/?q=wombat").content.decode()
    text = re.sub(r"<[^>]+>", "", html)
    assert "changed 20 days ago" in text
    assert "just now" not in text


def test_with_no_index_setting_the_index_lives_in_the_workspace_git_folder(
        client_as, ws, settings, tmp_path, monkeypatch):
    from memoryui.workspace import get_search_index

    monkeypatch.chdir(tmp_path)
    del settings.MEMORYUI_SEARCH_DB
    assert "kafka-rebalancing.md" in client_as("viewer").get("/search/?q=kafka").content.decode()
    assert get_search_index().location == str(ws.root / ".git/memoryui/search.sqlite3")
    assert (ws.root / ".git/memoryui/search.sqlite3").is_file()
    assert not (tmp_path / "None").exists()
    assert ws.pending() == []


# -- search by meaning ------------------------------------------------------------------

def test_words_and_meaning_find_a_paraphrase(client_as, ws):
    ws.write(ws.path_for("note", "ops-bot", "storage"),
             "# Storage\n\nPostgres dumps happen nightly at 02:00.\n", actor=BOT, tool="t")
    c = client_as("viewer")
    html = c.get("/search/", {"q": "when do the database backups run?"}).content.decode()
    assert "agents/ops-bot/memory/notes/storage.md" in html
    assert "Postgres dumps happen nightly at 02:00." in html
    assert ">by meaning</span>" in html
    assert '<option value="hybrid" selected>Words and meaning</option>' in html
    exact = c.get("/search/", {"q": "when do the database backups run?", "mode": "keyword"})
    assert "No matches" in exact.content.decode()
    assert '<option value="keyword" selected>Exact words only</option>' in exact.content.decode()


def test_without_the_model_the_page_says_so(client_as, ws, monkeypatch):
    monkeypatch.setenv("MEMORYUI_EMBEDDINGS", "off")
    for hx in ({}, {"HTTP_HX_REQUEST": "true"}):
        resp = client_as("viewer").get("/search/", {"q": "kafka"}, **hx)
        html = resp.content.decode()
        assert resp.status_code == 200
        assert ("Search by meaning is unavailable: it is turned off (MEMORYUI_EMBEDDINGS=off);"
                " results match keywords only.") in html
        assert "kafka-rebalancing.md" in html


def test_an_unknown_match_mode_is_a_message(client_as, ws):
    resp = client_as("viewer").get("/search/", {"q": "kafka", "mode": "vectors"})
    assert resp.status_code == 400
    assert "Unknown match vectors: use hybrid or keyword." in resp.content.decode()
