"""Duplicates by meaning, contradiction candidates and their three choices, and related
memories on the review cards, through the real Django client on a real git workspace (the
real embedding model and search index)."""

from __future__ import annotations

import html as html_mod
import re
import subprocess
from urllib.parse import quote, urlencode

import pytest

from memoryui.models import ContradictionVerdict, ReviewState
from memoryui.review import dom_id, meaning
from memoryui.search.embeddings import embedder
from memoryui.store import Actor, Kind, Store

from .test_review import D2, log, queue_url

pytestmark = [pytest.mark.django_db,
              pytest.mark.skipif(embedder() is None, reason="the embedding model is missing")]

OLD = "Refunds are allowed for purchases under 30 days."
NEW = "Refunds only under 14 days since the policy change."
BOB = "Bob prefers to be contacted on Slack rather than email."
MEMORY = f"# support-bot memory\n\n## Policies\n\n- {OLD}\n- {BOB}\n"


@pytest.fixture
def seeded(workspace: Store) -> dict[str, str]:
    meaning.clear_caches()
    s = workspace
    s.write(s.path_for(Kind.MEMORY, "support-bot"), MEMORY, actor=Actor.agent("support-bot"),
            tool="reflect")
    s.write(s.path_for(Kind.MEMORY, "ops-bot"),
            "# ops-bot memory\n\n- Postgres dumps happen nightly at 02:00.\n",
            actor=Actor.agent("ops-bot"), tool="reflect")
    return {
        "new": log(s, "support-bot", D2, "09:00", NEW),
        "para": log(s, "support-bot", D2, "10:00", "Bob would rather get a Slack message than an email."),
        "other": log(s, "support-bot", D2, "11:00", "Customers asked for a dark mode."),
        "dumps": log(s, "support-bot", D2, "12:00",
                     "The Postgres database is dumped every night at 02:00."),
    }


def card(page: str, key: str) -> str:
    """The <li> of one entry on a queue page."""
    start = page.index(f'id="{dom_id(key)}"')
    return page[start:page.index("</li>\n", page.index('class="related-slot"', start))]


def choose(client, key: str, path: str, digest: str, choice: str, **headers: str):
    data = {"entry": key, "path": path, "digest": digest, "choice": choice,
            "next": queue_url()}
    return client.post("/review/contradiction/", urlencode(data),
                       content_type="application/x-www-form-urlencoded", **headers)


def digest_on(page: str) -> str:
    return re.search(r'name="digest" value="([0-9a-f]{16})"', page).group(1)


def test_the_card_shows_the_contradiction_side_by_side_and_the_paraphrase(client_as, seeded):
    page = client_as("curator").get(queue_url()).content.decode()
    new = html_mod.unescape(card(page, seeded["new"]))
    assert "may contradict" in new and "different in a number" in new
    assert f"- {OLD}" in new and NEW in new  # both texts
    assert "Replace the old line" in new and "Keep both" in new and "Dismiss" in new
    para = html_mod.unescape(card(page, seeded["para"]))
    assert "duplicate by meaning" in para and f"- {BOB}" in para
    assert "may contradict" not in para
    other = card(page, seeded["other"])
    assert "duplicate by meaning" not in other and "may contradict" not in other
    viewer = client_as("viewer").get(queue_url()).content.decode()
    assert "may contradict" in viewer and "Replace the old line" not in viewer


def test_keep_both_is_remembered_and_changes_no_file(client_as, seeded, workspace):
    client = client_as("curator")
    page = client.get(queue_url()).content.decode()
    digest = digest_on(card(page, seeded["new"]))
    path = workspace.path_for(Kind.MEMORY, "support-bot")
    resp = choose(client, seeded["new"], path, digest, "keep")
    assert resp.status_code == 302 and resp["Location"] == queue_url()
    assert workspace.read(path) == MEMORY
    row = ContradictionVerdict.objects.get()
    assert (row.choice, row.decided_by, row.target_path) == ("keep", "curator", path)
    after = client.get(queue_url()).content.decode()
    assert "may contradict" not in card(after, seeded["new"])
    assert "Kept both" in after
    assert not ReviewState.objects.exists()  # the entry is still to review


def test_dismiss_through_htmx_swaps_the_card(client_as, seeded, workspace):
    client = client_as("curator")
    page = client.get(queue_url()).content.decode()
    path = workspace.path_for(Kind.MEMORY, "support-bot")
    resp = choose(client, seeded["new"], path, digest_on(card(page, seeded["new"])),
                  "dismiss", HTTP_HX_REQUEST="true")
    assert resp.status_code == 200 and resp["HX-Reswap"] == "none"
    body = resp.content.decode()
    assert f'id="{dom_id(seeded["new"])}"' in body and 'hx-swap-oob="true"' in body
    assert "may contradict" not in body and "not flagged again" in body
    assert ContradictionVerdict.objects.get().choice == "dismiss"


def test_replace_commits_the_entry_over_the_old_line(client_as, seeded, workspace):
    client = client_as("curator")
    page = client.get(queue_url()).content.decode()
    path = workspace.path_for(Kind.MEMORY, "support-bot")
    resp = choose(client, seeded["new"], path, digest_on(card(page, seeded["new"])),
                  "replace")
    assert resp.status_code == 302
    assert workspace.read(path) == MEMORY.replace(OLD, NEW)
    message = subprocess.run(["git", "-C", str(workspace.root), "log", "-1", "--format=%an%n%B",
                              "--", path], capture_output=True, text=True, check=True).stdout
    assert message.startswith("curator\nReplace ") and seeded["new"] in message
    assert ReviewState.objects.get().status == "promoted"
    assert ContradictionVerdict.objects.get().choice == "replace"
    after = client.get(queue_url()).content.decode()
    assert f'id="{dom_id(seeded["new"])}"' not in after  # promoted: out of the queue


def test_bad_choices_are_refused_in_one_sentence(client_as, seeded, workspace):
    client = client_as("curator")
    path = workspace.path_for(Kind.MEMORY, "support-bot")
    bad = choose(client, seeded["new"], path, "0" * 16, "replace")
    assert bad.status_code == 400 and "has changed since" in bad.content.decode()
    assert choose(client, seeded["new"], path, "nothex", "keep").status_code == 400
    wrong = choose(client, seeded["new"], path, "0" * 16, "delete")
    assert wrong.status_code == 400 and "choose replace, keep or dismiss" in \
        html_mod.unescape(wrong.content.decode())
    outside = choose(client, seeded["new"], "../etc/passwd", "0" * 16, "replace")
    assert outside.status_code == 400
    daily = seeded["new"].split("#")[0]
    log_path = choose(client, seeded["new"], daily, "0" * 16, "keep")
    assert log_path.status_code == 400 and "is not a file entries are promoted into" in \
        log_path.content.decode()
    assert choose(client_as("viewer"), seeded["new"], path, "0" * 16, "keep").status_code \
        == 403
    assert workspace.read(path) == MEMORY and not ContradictionVerdict.objects.exists()


def test_related_memories_of_an_entry(client_as, seeded, workspace):
    ops = workspace.path_for(Kind.MEMORY, "ops-bot")
    client = client_as("viewer")
    url = f"/review/related/?entry={quote(seeded['dumps'], safe='')}"
    frag = client.get(url, HTTP_HX_REQUEST="true").content.decode()
    assert "Related memories" in frag and "<html" not in frag
    assert f'href="/f/{ops}?view=raw#L1"' in frag and "known by ops-bot" in frag
    assert "nightly at 02:00" in frag
    # its own MEMORY.md is not repeated here: the card's own marks compare with it
    assert workspace.path_for(Kind.MEMORY, "support-bot") not in frag
    page = client.get(url)  # without JavaScript: a page of its own
    assert page.status_code == 200 and ops in page.content.decode()
    assert "<html" in page.content.decode()
    assert client.get("/review/related/?entry=nope").status_code == 400


def test_without_the_model_nothing_is_marked_and_the_panel_says_so(client_as, seeded,
                                                                  workspace, monkeypatch):
    monkeypatch.setenv("MEMORYUI_EMBEDDINGS", "off")
    client = client_as("curator")
    page = client.get(queue_url())
    assert page.status_code == 200
    body = page.content.decode()
    assert "may contradict" not in body and "duplicate by meaning" not in body
    assert f'id="{dom_id(seeded["new"])}"' in body  # the queue itself is whole
    frag = client.get(f"/review/related/?entry={quote(seeded['new'], safe='')}",
                      HTTP_HX_REQUEST="true")
    assert frag.status_code == 200
    assert "Search by meaning is unavailable" in frag.content.decode()
    memory = workspace.path_for(Kind.MEMORY, "support-bot")
    assert client.get(f"/f/{memory}").status_code == 200
    panel = client.get("/review/file-meaning/", {"path": memory}, HTTP_HX_REQUEST="true")
    assert panel.status_code == 200  # the file page's lazy meaning panel
    assert "Search by meaning is unavailable" in panel.content.decode()
