"""Promoted text that fits, through the real Django client on a real git workspace: the
editor keeps a lead's edits when the target or the place changes, provenance follows
MEMORYUI_PROVENANCE, Promote is offered on a daily log's page and on search hits, and a
dismissal made in the UI comes back from history after `rebuild_review`."""

from __future__ import annotations

import html as html_mod
import io
import re
from urllib.parse import quote, urlencode

import pytest
from django.core.management import call_command

from memoryui.models import ReviewState
from memoryui.store import Actor, Kind, Store, parse_daily

pytestmark = pytest.mark.django_db

D = "2026-02-12"
MEMORY = "# ops-bot memory\n\n## Facts\n- I work for Initech.\n\n## Lessons\nCheck canaries.\n"
BOT = Actor.agent("ops-bot")


def log(store: Store, time: str, text: str) -> str:
    path = store.path_for(Kind.DAILY, "ops-bot", D)
    store.append(path, f"\n## {time}\n\n{text}\n", header=f"# {D}\n", actor=BOT,
                 tool="remember")
    entry = next(e for e in parse_daily(store.read(path)) if e.time == time)
    return f"{path}#{entry.id}"


@pytest.fixture
def seeded(workspace: Store) -> dict[str, str]:
    workspace.write(workspace.path_for(Kind.MEMORY, "ops-bot"), MEMORY, actor=BOT,
                    tool="reflect")
    return {"canary": log(workspace, "09:15", "Canary at 5% caught the bad build."),
            "disk": log(workspace, "16:40", "Paged Bob at night for disk pressure.")}


def fields(html: str) -> dict[str, str]:
    """What the editor's save form holds (the chooser sends these along on a refit)."""
    def area(name: str) -> str:
        m = re.search(rf'<textarea[^>]*name="{name}"[^>]*>(.*?)</textarea>', html, re.S)
        return html_mod.unescape(m.group(1))
    path = re.search(r'id="path-[^"]+" name="path" value="([^"]*)"', html)
    return {"text": area("text"), "started": area("started"),
            "path": path.group(1) if path else ""}


def open_editor(client, key: str, **params: str) -> str:
    r = client.get("/review/promote/?" + urlencode({"entry": key, "slot": "entry-x", **params}),
                   HTTP_HX_REQUEST="true")
    assert r.status_code == 200, r.content.decode()[:2000]
    return r.content.decode()


def refit(client, key: str, form: dict[str, str], **params: str):
    """What the chooser's select does with JavaScript: POST with the editor's text."""
    return client.post("/review/promote/", {"entry": key, "slot": "entry-x", "refit": "1",
                                            **form, **params}, HTTP_HX_REQUEST="true")


def mark(key: str, rel: str) -> str:
    return f"([{D}, ops-bot]({rel}#e-{key.split('#')[1]}))"


def test_changing_target_or_place_keeps_the_leads_edits(client_as, seeded) -> None:
    client = client_as("curator")
    key = seeded["canary"]
    html = open_editor(client, key, kind="memory", scope="ops-bot", place="1")
    form = fields(html)
    own = mark(key, f"daily/{D}.md")
    assert form["text"] == form["started"] == MEMORY.replace(
        "- I work for Initech.\n",
        f"- I work for Initech.\n- Canary at 5% caught the bad build. {own}\n")
    # Unedited, another place is simply the new draft: a paragraph after "## Lessons" prose.
    r = refit(client, key, form, kind="memory", scope="ops-bot", place="2")
    assert fields(r.content.decode())["text"] == (
        MEMORY + f"\nCanary at 5% caught the bad build. {own}\n")
    # Edited, then sent to global memory: the edit stays, the link is re-pointed.
    form["text"] = form["text"].replace("caught the bad build", "caught build 4711")
    r = refit(client, key, form, kind="global")
    new = fields(r.content.decode())
    shared = mark(key, f"../agents/ops-bot/memory/daily/{D}.md")
    assert new["text"] == f"Canary at 5% caught build 4711. {shared}\n"
    assert new["started"] == f"Canary at 5% caught the bad build. {shared}\n"
    assert new["path"] == "memory/MEMORY.md"
    # ... and back under "## Facts": a list item again, still edited.
    r = refit(client, key, new, kind="memory", scope="ops-bot", place="1")
    assert fields(r.content.decode())["text"] == MEMORY.replace(
        "- I work for Initech.\n", f"- I work for Initech.\n- Canary at 5% caught build 4711. {own}\n")


def test_a_world_topic_still_to_be_named_carries_the_edits(client_as, seeded,
                                                           workspace) -> None:
    client = client_as("curator")
    key = seeded["canary"]
    form = fields(open_editor(client, key, kind="memory", scope="ops-bot"))
    form["text"] = form["text"].replace("Canary at 5%", "The 5% canary")
    r = refit(client, key, form, kind="world")
    html = r.content.decode()
    assert r.status_code == 200 and 'name="name"' in html and 'name="refit"' in html
    carried = re.search(r'<textarea name="text" hidden>(.*?)</textarea>', html, re.S)
    assert html_mod.unescape(carried.group(1)) == form["text"]
    # The lead types the name; the chooser form (with the carried text) is posted.
    r = refit(client, key, {"text": form["text"], "started": form["started"],
                            "path": form["path"]}, kind="world", name="deploys")
    text = fields(r.content.decode())["text"]
    rel = f"../../agents/ops-bot/memory/daily/{D}.md"
    assert text == f"# Deploys\n\nThe 5% canary caught the bad build. {mark(key, rel)}\n"


def test_provenance_none_writes_no_marker_but_keeps_the_trailer(client_as, seeded, workspace,
                                                                settings) -> None:
    settings.MEMORYUI_PROVENANCE = "none"
    client = client_as("curator")
    key = seeded["canary"]
    html = client.get("/review/promote/?" + urlencode({"entry": key, "kind": "global"})
                      ).content.decode()
    form = fields(html)
    assert form["text"] == "Canary at 5% caught the bad build.\n"
    base = re.search(r'name="base" value="([^"]*)"', html).group(1)
    r = client.post("/review/promote/", {"entry": key, "kind": "global", "text": form["text"],
                                         "base": base})
    assert r.status_code == 302
    assert workspace.read("memory/MEMORY.md") == "Canary at 5% caught the bad build.\n"
    assert workspace.log(limit=1)[0].trailers["Promoted-From"] == [key]


def test_promote_on_a_daily_log_page_for_curators_only(client_as, seeded, workspace) -> None:
    daily = workspace.path_for(Kind.DAILY, "ops-bot", D)
    page = f"/f/{daily}"
    viewer = client_as("viewer").get(page).content.decode()
    assert "Paged Bob" in viewer and "js-promote-entry" not in viewer
    html = client_as("curator").get(page).content.decode()
    links = re.findall(r'<a class="btn btn-sm js-promote-entry" href="([^"]+)"', html)
    assert len(links) == 2
    url = html_mod.unescape(links[1])
    assert url == ("/review/promote/?entry=" + quote(daily, safe="") + "%23" +
                   seeded["disk"].split("#")[1] + "&next=" + quote(page, safe=""))
    r = client_as("curator").get(url)
    editor = r.content.decode()
    assert r.status_code == 200 and "Paged Bob at night for disk pressure." in fields(editor)[
        "text"]
    assert f'name="next" value="{page}"' in editor  # back to the daily log afterwards


def test_promote_on_search_hits_that_are_daily_entries(client_as, seeded, workspace) -> None:
    workspace.write("memory/world/deploys.md", "# Deploys\n\nCanary rules.\n", actor=BOT,
                    tool="t")
    html = client_as("curator").get("/search/?q=canary").content.decode()
    hits = html.split('<li class="search-result">')[1:]
    daily = [h for h in hits if "badge-daily" in h]
    others = [h for h in hits if "badge-daily" not in h]
    assert daily and others
    assert all("js-promote-entry" in h for h in daily)
    assert not any("js-promote-entry" in h for h in others)
    link = html_mod.unescape(re.search(r'js-promote-entry" href="([^"]+)"', daily[0]).group(1))
    assert quote(seeded["canary"].split("#")[1]) in link and "next=%2Fsearch%2F" in link
    assert "js-promote-entry" not in client_as("viewer").get("/search/?q=canary").content.decode()


def test_a_dismissal_in_the_ui_survives_rebuild_review_from_an_empty_database(
        client_as, seeded, workspace) -> None:
    client = client_as("curator")
    assert client.post("/review/dismiss/", {"entry": seeded["disk"]}).status_code == 302
    ReviewState.objects.all().delete()
    out = io.StringIO()
    call_command("rebuild_review", stdout=out)
    assert out.getvalue().strip().endswith("kept 0 dismissal(s), restored 1 from history")
    state = ReviewState.objects.get()
    assert (state.status, state.reviewed_by, state.path + "#" + state.entry_id) == (
        "dismissed", "curator", seeded["disk"])
    html = client.get(f"/review/?from={D}&to={D}&status=dismissed").content.decode()
    assert "Dismissed by curator" in html and "Paged Bob" in html


def test_a_dismissal_commit_is_not_shown_to_agents(client, client_as, seeded, workspace,
                                                   make_token) -> None:
    assert client_as("curator").post("/review/dismiss/",
                                     {"entry": seeded["disk"]}).status_code == 302
    sha = workspace.log(limit=1)[0].sha
    auth = {"HTTP_AUTHORIZATION": f"Bearer {make_token('ops-bot')}"}
    assert client.get(f"/api/v1/commits/{sha}", **auth).status_code == 403
    listed = client.get("/api/v1/history?limit=100", **auth).json()["commits"]
    assert sha not in {c["sha"] for c in listed} and listed  # its own commits still are


@pytest.mark.parametrize("path", ["../../etc/passwd", "/etc/passwd", ".git/config",
                                  "agents/ops-bot/memory/daily/2026-02-12.md", "x" * 1025])
def test_a_refit_from_a_bad_or_foreign_path_is_a_fresh_draft_never_a_500(client_as, seeded,
                                                                          path) -> None:
    client = client_as("curator")
    key = seeded["canary"]
    r = refit(client, key, {"text": "edited\n", "started": "x\n", "path": path}, kind="global")
    if len(path) > 1024:
        assert r.status_code == 400
        return
    assert r.status_code == 200
    assert fields(r.content.decode())["text"].startswith("Canary at 5% caught the bad build.")
