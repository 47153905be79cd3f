"""One navigation scheme: the same breadcrumbs and tabs on every page about a file, a Tokens
link for admins only, a favicon, and no inline style or script on any page (strict CSP).

A real git workspace (tests/web/test_browse.py's seed) through the Django test client.
"""

from __future__ import annotations

import re
import subprocess

import pytest

from memoryui.store import Actor, Store
from tests.web.test_browse import GLOBAL, MEM, SKILL, WORLD, daily, hrefs, seed, tags

LOG = daily("ops-bot", "2026-03-01")


@pytest.fixture
def ws(workspace: Store) -> Store:
    seed(workspace)
    return workspace


def crumbs(html: str) -> list[tuple[str, str | None]]:
    """(text, href or None) of each breadcrumb, in order."""
    nav = html.split('class="breadcrumbs"', 1)[1].split("</nav>", 1)[0]
    out = []
    for li in re.findall(r"<li[^>]*>(.*?)</li>", nav, re.S):
        m = re.search(r'href="([^"]*)"', li)
        out.append((re.sub(r"<[^>]+>", "", li).strip(), m.group(1) if m else None))
    return out


def tabs(html: str) -> list[tuple[str, str | None]]:
    """(label, aria-current or None) of the file tabs."""
    nav = html.split('class="file-tabs"', 1)[1].split("</nav>", 1)[0]
    return [(re.sub(r"<[^>]+>", "", a).strip(), (re.search(r'aria-current="(\w+)"', a) or [None, None])[1])
            for a in re.findall(r"<a [^>]*>.*?</a>", nav, re.S)]


def shas(store: Store, path: str) -> list[str]:
    out = subprocess.run(["git", "log", "--format=%H", "--", path], cwd=store.root,
                         capture_output=True, text=True, check=True).stdout
    return out.split()


def test_a_daily_log_has_the_same_crumbs_on_file_history_blame_and_editor(ws, client_as):
    c = client_as("curator")
    trail = [("Workspace", "/"), ("Agents", "/#ov-scopes"), ("ops-bot", "/s/ops-bot/"),
             ("Daily logs", "/s/ops-bot/#sc-daily"), ("2026-03-01.md", "/f/" + LOG)]
    assert crumbs(c.get("/f/" + LOG).content.decode()) == trail[:-1] + [("2026-03-01.md", None)]
    new, old = shas(ws, LOG)[0], shas(ws, LOG)[-1]
    for url, leaf in [("/history/" + LOG, "History"), ("/blame/" + LOG, "Blame"),
                      ("/edit/" + LOG, "Edit"), (f"/compare/{LOG}?from={old}&to={new}", "Compare"),
                      (f"/at/{new}/{LOG}", f"at {new[:8]}")]:
        r = c.get(url)
        assert r.status_code == 200, url
        assert crumbs(r.content.decode()) == trail + [(leaf, None)], url


def test_a_skill_has_a_skills_level_and_shared_files_their_kind(ws, client_as):
    c = client_as("viewer")
    assert crumbs(c.get("/f/" + SKILL).content.decode()) == [
        ("Workspace", "/"), ("Skills", "/#ov-skills"),
        ("deploy-rollback", "/f/" + SKILL), ("SKILL.md", None)]
    assert crumbs(c.get("/history/" + SKILL).content.decode())[1:3] == [
        ("Skills", "/#ov-skills"), ("deploy-rollback", "/f/" + SKILL)]
    assert [t for t, _ in crumbs(c.get("/f/" + WORLD).content.decode())] == [
        "Workspace", "World topics", "people.md"]
    assert [t for t, _ in crumbs(c.get("/f/" + GLOBAL).content.decode())] == [
        "Workspace", "Global memory", "MEMORY.md"]
    assert [t for t, _ in crumbs(c.get("/f/" + MEM).content.decode())] == [
        "Workspace", "Agents", "ops-bot", "MEMORY.md"]


def test_every_file_page_shows_the_same_tabs_with_the_current_one_marked(ws, client_as):
    c = client_as("curator")
    new, old = shas(ws, MEM)[0], shas(ws, MEM)[-1]
    names = ["View", "Source", "Edit", "History", "Blame"]
    for url, current in [("/f/" + MEM, ("View", "page")), ("/f/" + MEM + "?view=raw", ("Source", "page")),
                         ("/edit/" + MEM, ("Edit", "page")), ("/history/" + MEM, ("History", "page")),
                         ("/blame/" + MEM, ("Blame", "page")),
                         (f"/compare/{MEM}?from={old}&to={new}", ("History", "true")),
                         (f"/at/{old}/{MEM}", ("History", "true"))]:
        html = c.get(url).content.decode()
        got = tabs(html)
        assert [t for t, _ in got] == names, url
        assert [(t, cur) for t, cur in got if cur] == [current], url
        links = hrefs(html.split('class="file-tabs"', 1)[1].split("</nav>", 1)[0])
        assert links == {"/f/" + MEM, "/f/" + MEM + "?view=raw", "/edit/" + MEM,
                         "/history/" + MEM, "/blame/" + MEM}


def test_viewers_get_no_edit_tab_and_a_deleted_file_only_its_history(ws, client_as):
    viewer = client_as("viewer")
    assert [t for t, _ in tabs(viewer.get("/f/" + MEM).content.decode())] == [
        "View", "Source", "History", "Blame"]
    ws.delete(WORLD, actor=Actor.user("alice"), tool="edit")
    html = viewer.get("/history/" + WORLD).content.decode()
    assert tabs(html) == [("History", "page")]


def test_only_admins_see_the_tokens_link(ws, client_as):
    for role, shown in [("viewer", False), ("curator", False), ("admin", True)]:
        c = client_as(role)
        html = c.get("/").content.decode()
        header = html.split('<header class="topbar">', 1)[1].split("</header>", 1)[0]
        assert ("/settings/tokens/" in hrefs(header)) is shown, role
        c.logout()
    admin = client_as("admin")
    html = admin.get("/settings/tokens/").content.decode()
    header = html.split('<header class="topbar">', 1)[1].split("</header>", 1)[0]
    assert any(t == "a" and a.get("href") == "/settings/tokens/" and a.get("aria-current") == "page"
               for t, a in tags(header))


def test_the_favicon_is_linked_and_served(ws, client_as, client):
    html = client_as("viewer").get("/").content.decode()
    icon = re.search(r'<link rel="icon" href="([^"]+)"', html).group(1)
    assert icon.endswith("favicon.svg")
    r = client.get(icon)
    assert r.status_code == 200 and b"<svg" in b"".join(r.streaming_content)
    r = client.get("/favicon.ico")  # asked for by browsers whatever the page says
    assert r.status_code == 301 and r["Location"] == icon


def test_the_phone_drawer_works_without_javascript(ws, client_as):
    html = client_as("viewer").get("/f/" + LOG).content.decode()
    assert re.search(r'<input type="checkbox" id="drawer-toggle"[^>]*aria-controls="sidebar"', html)
    assert '<label for="drawer-toggle" class="drawer-button">' in html
    assert '<aside class="sidebar" id="sidebar"' in html


def main_pages(ws: Store) -> list[str]:
    new, old = shas(ws, MEM)[0], shas(ws, MEM)[-1]
    return ["/", "/s/ops-bot/", "/s/ops-bot/history/", "/f/" + LOG, "/f/" + LOG + "?view=raw",
            "/edit/" + MEM, "/history/" + MEM, "/blame/" + MEM, f"/compare/{MEM}?from={old}&to={new}",
            f"/compare/?from={old}&to={new}", f"/at/{old}/{MEM}", f"/commit/{new}/", "/activity/",
            "/pending/", "/search/?q=deploy", "/review/", "/sync/", "/settings/tokens/", "/new/",
            "/delete/" + MEM, "/f/no/such/file.md"]


def test_no_page_has_an_inline_style_or_script(ws, client_as):
    c = client_as("admin")
    for url in main_pages(ws):
        r = c.get(url)
        assert r.status_code in (200, 404), url
        html = r.content.decode()
        assert not re.search(r"<[^>]+\sstyle=", html), url
        assert not re.search(r"<style[\s>]", html), url
        assert not re.search(r"<[^>]+\son[a-z]+=", html), url
        for attrs in re.findall(r"<script\b([^>]*)>", html):
            assert "src=" in attrs, url


def test_every_trail_starts_at_the_workspace_and_scopes_sit_under_their_kind(ws, client_as):
    c = client_as("admin")
    for url in main_pages(ws):
        html = c.get(url).content.decode()
        if 'class="breadcrumbs"' in html and "<ol>" in html.split('class="breadcrumbs"', 1)[1][:40]:
            assert crumbs(html)[0] == ("Workspace", "/"), url
    assert crumbs(c.get("/s/ops-bot/").content.decode()) == [
        ("Workspace", "/"), ("Agents", "/#ov-scopes"), ("ops-bot", None)]
    assert crumbs(c.get("/s/ops-bot/history/").content.decode()) == [
        ("Workspace", "/"), ("Agents", "/#ov-scopes"), ("ops-bot", "/s/ops-bot/"),
        ("History", None)]
