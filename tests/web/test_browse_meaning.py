"""A curated file's page: the recent entries that may contradict it (with the lead's three
choices) and related memories elsewhere, a lazy fragment of the page (a page of its own
without JavaScript), through the real Django client on a real git workspace (the real
embedding model and search index)."""

from __future__ import annotations

import html as html_mod
import re
from urllib.parse import urlencode

import pytest
from django.utils import timezone

from memoryui.models import ContradictionVerdict
from memoryui.review import meaning
from memoryui.search.embeddings import embedder
from memoryui.store import Actor, Kind, Store

from .test_review import log

pytestmark = [pytest.mark.django_db,
              pytest.mark.skipif(embedder() is None, reason="the embedding model is missing")]

OLD = "Backups run nightly."
NEW = "Backups do not run nightly."
MEMORY = f"# ops-bot memory\n\n## Ops\n\n- {OLD}\n- The staging cluster runs in eu-west-1.\n"


@pytest.fixture
def seeded(workspace: Store) -> dict[str, str]:
    meaning.clear_caches()
    s = workspace
    s.write(s.path_for(Kind.MEMORY, "ops-bot"), MEMORY, actor=Actor.agent("ops-bot"),
            tool="reflect")
    s.write(s.path_for(Kind.WORLD, name="infrastructure"),
            "# Infrastructure\n\nThe staging cluster is hosted in the eu-west-1 region.\n",
            actor=Actor.user("lead"), tool="edit")
    today = timezone.localdate().isoformat()
    return {"new": log(s, "ops-bot", today, "09:00", NEW),
            "elsewhere": log(s, "support-bot", today, "09:30", NEW)}


def meaning_of(client, path: str, *, htmx: bool = False) -> str:
    """The file page's meaning panel, as its link (no JavaScript) or htmx would load it."""
    page = client.get(f"/f/{path}").content.decode()
    link = html_mod.unescape(re.search(r'href="(/review/file-meaning/\?path=[^"]+)"',
                                       page).group(1))
    headers = {"HX-Request": "true"} if htmx else {}
    resp = client.get(link, headers=headers)
    assert resp.status_code == 200 and "HX-Request" in resp["Vary"]
    return html_mod.unescape(resp.content.decode())


def test_the_page_shows_the_contradiction_and_the_choice_is_remembered(client_as, seeded,
                                                                       workspace):
    path = workspace.path_for(Kind.MEMORY, "ops-bot")
    client = client_as("curator")
    assert NEW not in client.get(f"/f/{path}").content.decode()  # the page never waits for it
    page = meaning_of(client, path)
    assert "Back to the file" in page
    assert "New entries that may contradict this file" in page
    assert f"- {OLD}" in page and NEW in page and "different in a negation" in page
    assert "New: ops-bot" in page and "New: support-bot" not in page  # its own scope only
    digest = re.search(r'name="digest" value="([0-9a-f]{16})"', page).group(1)
    nxt = re.search(r'name="next" value="([^"]+)"', page).group(1)
    assert nxt == f"/f/{path}"
    resp = client.post("/review/contradiction/", urlencode(
        {"entry": seeded["new"], "path": path, "digest": digest, "choice": "dismiss",
         "next": nxt}), content_type="application/x-www-form-urlencoded")
    assert resp.status_code == 302 and resp["Location"] == f"/f/{path}"
    again = meaning_of(client, path, htmx=True)
    assert "may contradict this file" not in again and "Related memories" in again
    assert "Back to the file" not in again  # the fragment, not the page
    assert ContradictionVerdict.objects.get().choice == "dismiss"
    assert workspace.read(path) == MEMORY


def test_related_memories_on_the_page(client_as, seeded, workspace):
    path = workspace.path_for(Kind.MEMORY, "ops-bot")
    page = meaning_of(client_as("viewer"), path, htmx=True)
    assert "Related memories" in page and "world/infrastructure.md" in page
    assert "Replace the old line" not in page  # a viewer reads, never chooses
    daily = workspace.path_for(Kind.DAILY, "ops-bot", timezone.localdate().isoformat())
    assert "file-meaning" not in client_as("viewer").get(f"/f/{daily}").content.decode()
    resp = client_as("viewer").get("/review/file-meaning/", {"path": daily})
    assert resp.status_code == 404 and "not a curated file" in resp.content.decode()
    for bad in ("../etc/passwd", "", "agents/nobody/MEMORY.md"):
        assert client_as("viewer").get("/review/file-meaning/", {"path": bad}).status_code in (
            400, 404)
