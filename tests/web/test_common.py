"""The one web toolkit: one error page for every area, one identity per person, one time
format, fragments that say `Vary: HX-Request`, links built by the URLconf.

Real workspaces in tmp_path through the Django test client; the full disk is a real tmpfs.
"""

from __future__ import annotations

import datetime as dt
import os
import re

import pytest
from django.urls import reverse

from memoryui.store import Actor, Store, version_of
from memoryui.web.common import ago
from memoryui.web.links import file_url, link
from tests import fulldisk
from tests.web.test_history import MEM, V3, Seeded, seed


@pytest.fixture
def seeded(workspace) -> Seeded:
    return seed(workspace)


def error_card(html: str) -> str:
    m = re.search(r'<div class="card error-card" role="alert">(.*?)</div>', html, re.S)
    assert m, "the one error page"
    return m.group(1)


# -- one error page ---------------------------------------------------------------------


@pytest.mark.parametrize(("url", "status", "title", "message"), [
    ("/s/bad%20name/", 400, "Bad request", "invalid scope name"),
    ("/commit/deadbeefdeadbeef/", 404, "Not found", "no such commit"),
    ("/history/agents/ops-bot/memory/NOPE.md", 404, "Not found", "has no history"),
    ("/history/../x", 400, "Bad request", "invalid path"),
    ("/blame/agents/ops-bot/memory/NOPE.md", 404, "Not found", "not in the committed"),
    ("/history/" + MEM + "?page=0", 400, "Bad request", "invalid page"),
])
def test_every_area_answers_a_refusal_with_the_same_error_page(client_as, seeded, url, status,
                                                               title, message):
    r = client_as("viewer").get(url)
    assert r.status_code == status
    html = r.content.decode()
    assert f"<h1>{title}</h1>" in html
    assert message in error_card(html)
    assert "Nothing was changed" not in html  # a GET changes nothing anyway
    assert "HX-Request" in r["Vary"]


def test_a_refused_post_says_nothing_was_changed(client_as, seeded):
    r = client_as("curator").post("/restore/" + MEM, {"rev": "zz", "base": version_of(V3)})
    assert r.status_code == 400
    card = error_card(r.content.decode())
    assert "rev must be a commit sha" in card and "Nothing was changed" in card


def test_an_htmx_refusal_is_a_flash_swapped_out_of_band(client_as, seeded):
    r = client_as("viewer").get("/commit/deadbeefdeadbeef/?path=" + MEM,
                                HTTP_HX_REQUEST="true")
    assert r.status_code == 404
    body = r.content.decode()
    assert r["HX-Reswap"] == "none" and "HX-Request" in r["Vary"]
    assert 'id="messages"' in body and 'hx-swap-oob="true"' in body
    assert "no such commit" in body and "<html" not in body


small_disk = fulldisk.small_disk  # the fixture


def test_a_full_disk_is_a_507_page_and_the_file_stays(small_disk, settings, client_as):
    from memoryui.workspace import get_store, reset_store

    settings.MEMORYUI_WORKSPACE = small_disk.path / "ws"
    reset_store()
    try:
        store = get_store()
        store.write(MEM, V3, actor=Actor.agent("ops-bot"), tool="reflect")
        small_disk.fill()
        big = "".join(f"- fact {i}: {os.urandom(8).hex()}\n" for i in range(3000))
        r = client_as("curator").post("/edit/" + MEM, {"text": big, "base": version_of(V3),
                                                       "message": ""})
        assert r.status_code == 507
        html = r.content.decode()
        assert "<h1>The disk is full</h1>" in html
        assert "the workspace disk is full" in error_card(html)
        assert store.read(MEM) == V3
        small_disk.free()
    finally:
        reset_store()


def test_unexpected_errors_get_the_standalone_500_page(settings, client):
    from django.template import loader

    html = loader.get_template("500.html").render()
    assert "Something went wrong" in html and "has been logged" in html
    assert "<script" not in html and "style=" not in html


# -- one identity per person --------------------------------------------------------------


def test_a_person_is_one_author_for_edits_restores_and_pending_commits(client_as, seeded):
    store: Store = seeded.store
    c = client_as("curator")
    from django.contrib.auth import get_user_model

    person = get_user_model().objects.get(username="curator")
    person.email = "cu@example.org"
    person.save()
    r = c.post("/edit/" + MEM, {"text": V3 + "- by hand\n", "base": version_of(V3),
                                "message": ""})
    assert r.status_code == 302
    c.post("/restore/" + MEM, {"rev": seeded.shas["mem1"],
                               "base": version_of(V3 + "- by hand\n")})
    (store.root / MEM).write_text("# outside\n")
    c.post("/pending/commit", {"paths": [MEM], "attribute": "me"})
    commits = store.log(MEM, limit=3)
    assert [(i.actor, i.author, i.email) for i in commits] == [
        ("user:curator", "curator", "cu@example.org")] * 3
    assert [i.tools for i in commits][:2] == [["snapshot"], ["restore"]]


# -- one time format, links from the URLconf ---------------------------------------------------


def test_one_relative_time_format():
    now = dt.datetime(2026, 3, 10, 12, 0, tzinfo=dt.UTC)
    cases = [(now - dt.timedelta(seconds=5), "just now"),
             (now - dt.timedelta(minutes=1), "1 minute ago"),
             (now - dt.timedelta(minutes=59, seconds=59), "59 minutes ago"),
             (now - dt.timedelta(hours=3, minutes=50), "3 hours ago"),
             (now - dt.timedelta(days=1, hours=2), "yesterday"),
             (now - dt.timedelta(days=12), "12 days ago"),
             (now - dt.timedelta(days=45), "on 2026-01-24"),
             (now + dt.timedelta(hours=1), "in the future"),
             ((now - dt.timedelta(hours=2)).timestamp(), "2 hours ago")]
    for when, text in cases:
        assert ago(when, now) == text, when


def test_history_and_browse_pages_print_times_alike(client_as, seeded):
    """The same commit reads the same on the file page, its history and the activity feed."""
    c = client_as("viewer")
    expected = ago(seeded.store.log(MEM, limit=1)[0].when)
    times = []
    for url in ("/s/ops-bot/", "/history/" + MEM, "/activity/?scope=ops-bot"):
        html = c.get(url).content.decode()
        times.append(re.findall(r"<time [^>]*>([^<]+)</time>", html)[0])
    assert times == [expected] * 3


@pytest.mark.parametrize("path", ["a/b c.md", 'x/ü"\t\\.md', "a#b?c%d&e.md", "a+b;c@d.md"])
def test_links_are_what_reverse_makes(path):
    assert file_url(path) == reverse("file", args=[path])
    assert link("file_at", "abc1234", path) == reverse("file_at", args=["abc1234", path])


# -- fragments say Vary: HX-Request, on the page and on the fragment ---------------------------


@pytest.mark.parametrize("method, url, data", [
    ("get", "/activity/", None),
    ("get", "/commit/{sha}/?path=" + MEM, None),
    ("post", "/preview/", {"text": "# hi\n", "path": MEM}),
])
def test_views_that_answer_fragments_vary_on_hx_request(client_as, seeded, method, url, data):
    c = client_as("curator")
    url = url.format(sha=seeded.shas["mem3"])
    page = getattr(c, method)(url, data)
    fragment = getattr(c, method)(url, data, HTTP_HX_REQUEST="true")
    assert page.status_code == fragment.status_code == 200
    assert "<html" in page.content.decode() and "<html" not in fragment.content.decode()
    for r in (page, fragment):
        assert "HX-Request" in r["Vary"]


# -- forms: errors next to the field ------------------------------------------------------------


def field_errors(html: str, field_id: str) -> str:
    """The error list inside the field's own `<div class="field">` (next to its input)."""
    m = re.search(rf'<div class="field[^"]*">(?:(?!<div class="field).)*?id="{field_id}"'
                  rf'(?:(?!<div class="field).)*?(<ul class="errorlist"[^>]*>.*?</ul>)',
                  html, re.S)
    assert m, f"no errors next to #{field_id}"
    return m.group(1)


def test_editor_form_shows_the_message_error_next_to_its_field(client_as, seeded):
    r = client_as("curator").post("/edit/" + MEM, {"text": "# x\n", "base": version_of(V3),
                                                   "message": "m" * 501})
    assert r.status_code == 400
    html = r.content.decode()
    assert "at most 500 characters" in field_errors(html, "editor-message")
    assert seeded.store.read(MEM) == V3


def test_new_file_errors_sit_next_to_the_field(client_as, seeded):
    html = client_as("curator").post("/new/", {"kind": "note", "scope": "bad scope",
                                               "name": "x", "text": "x"}).content.decode()
    assert "invalid scope name" in field_errors(html, "new-scope")


def test_activity_filter_errors_sit_next_to_the_field(client_as, seeded):
    html = client_as("viewer").get("/activity/?since=2026-13-01&kind=bogus").content.decode()
    assert "2026-13-01&#x27; is not a date" in field_errors(html, "f-since")
    assert "invalid kind" in field_errors(html, "f-kind")


# -- every link in the UI's templates comes from the URLconf ------------------------------------


def test_templates_spell_no_paths_of_their_own():
    """`{% url %}` (or a filter built on reverse()) everywhere; only 500.html, rendered when
    anything may be broken, links to "/" literally."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "templates"
    pattern = re.compile(r'(?:href|action|hx-get|hx-post|hx-put|hx-delete|src)="/[^"]*"')
    found = {}
    for tpl in sorted(root.rglob("*.html")):
        rel = tpl.relative_to(root).as_posix()
        if rel == "500.html":
            continue
        hits = pattern.findall(tpl.read_text())
        if hits:
            found[rel] = hits
    assert found == {}
