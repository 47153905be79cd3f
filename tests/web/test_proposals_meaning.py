"""Contradiction candidates on proposed changes: both texts side by side on the inbox and the
proposal's page, keep both and dismiss (remembered, nothing written), and bad input, through
the real Django client on a real git workspace with the real embedding model."""

from __future__ import annotations

import html as html_mod
import re
import subprocess

import pytest

from memoryui import proposing
from memoryui.models import ContradictionVerdict
from memoryui.review import meaning
from memoryui.search.embeddings import embedder
from memoryui.store import Actor, Kind, Store

from .test_proposals import INBOX, proposal

pytestmark = [pytest.mark.django_db,
              pytest.mark.skipif(embedder() is None, reason="the embedding model is missing")]

OLD = "Refunds are allowed for purchases under 30 days."
NEW = "Refunds only under 14 days since the policy change."
MEMORY = "# triage-agent memory\n\n- The CI pipeline caches node_modules between runs.\n"


@pytest.fixture
def seeded(workspace: Store) -> dict[str, str]:
    meaning.clear_caches()
    s = workspace
    world = s.path_for(Kind.WORLD, None, "billing")
    s.write(world, f"# Billing policies\n\n- {OLD}\n- Invoices go out on the 1st.\n",
            actor=Actor.user("alice"), tool="edit")
    s.write(s.path_for(Kind.MEMORY, "triage-agent"), MEMORY,
            actor=Actor.agent("triage-agent"), tool="reflect")
    pid = proposal(s, "triage-agent", MEMORY + f"- {NEW}\n")
    return {"world": world, "pid": pid}


def page(resp) -> str:
    assert resp.status_code == 200, resp.content[:300]
    return html_mod.unescape(resp.content.decode())


def form_fields(text: str) -> dict[str, str]:
    """The hidden fields of the first contradiction form on a page."""
    form = text[text.index('class="inline-form contradiction-actions'):]
    form = form[:form.index("</form>")]
    return dict(re.findall(r'name="(statement|path|digest|next)" value="([^"]*)"', form))


def commits(store: Store) -> int:
    return int(subprocess.run(["git", "-C", str(store.root), "rev-list", "--count", "HEAD"],
                              capture_output=True, text=True, check=True).stdout)


def test_a_viewer_sees_both_texts_side_by_side_but_no_choices(client_as, seeded):
    c = client_as("viewer")
    for url in (INBOX, f"/review/proposals/{seeded['pid']}/"):
        text = page(c.get(url))
        assert "may contradict 1 line" in text
        assert f"{seeded['world']}:3" in text and "different in a number" in text
        assert f"Now in {seeded['world']}" in text and OLD in text
        assert f"Proposed: {proposing.get(seeded['pid']).path}:4 by triage-agent" in text
        assert NEW in text
        assert "/conflict/" not in text  # viewers read, curators choose


def test_dismiss_is_remembered_and_writes_nothing(client_as, seeded, workspace):
    c = client_as("curator")
    url = f"/review/proposals/{seeded['pid']}/"
    fields = form_fields(page(c.get(url)))
    assert fields["path"] == seeded["world"]
    before = commits(workspace)
    resp = c.post(url + "conflict/", {**fields, "choice": "dismiss", "next": url})
    assert resp.status_code == 302 and resp["Location"] == url
    text = page(c.get(url))
    assert "Dismissed; this pair is not flagged again." in text
    assert "may contradict" not in text and OLD not in text
    assert commits(workspace) == before  # nothing written
    assert proposing.get(seeded["pid"]).status == "open"  # approve or reject is still to do
    (v,) = ContradictionVerdict.objects.all()
    assert (v.choice, v.target_path, v.decided_by) == ("dismiss", seeded["world"], "curator")
    assert "may contradict" not in page(c.get(INBOX))


def test_keep_both_with_htmx_swaps_the_card(client_as, seeded):
    c = client_as("curator")
    url = f"/review/proposals/{seeded['pid']}/"
    fields = form_fields(page(c.get(url)))
    resp = c.post(url + "conflict/", {**fields, "choice": "keep"}, HTTP_HX_REQUEST="true")
    text = page(resp)
    assert f'id="proposal-{seeded["pid"]}"' in text
    assert "Kept both; this pair is not flagged again." in text
    assert "may contradict" not in text
    assert ContradictionVerdict.objects.get().choice == "keep"


def test_bad_choices_are_refused_with_a_sentence(client_as, seeded, workspace):
    c = client_as("curator")
    url = f"/review/proposals/{seeded['pid']}/"
    fields = form_fields(page(c.get(url)))
    cases = [
        ({**fields, "choice": "replace"}, 400, "choose keep or dismiss"),
        ({**fields, "choice": "keep", "statement": "nope"}, 400, "not a proposed statement"),
        ({**fields, "choice": "keep", "statement": "proposed-" + "0" * 16}, 400,
         "does not add that statement"),
        ({**fields, "choice": "keep", "digest": "0" * 16}, 400, "changed since"),
        ({**fields, "choice": "keep", "path": "../../etc/passwd"}, 400, ""),
    ]
    for data, status, said in cases:
        resp = c.post(url + "conflict/", data)
        assert resp.status_code == status, (data, resp.content[:300])
        assert said in html_mod.unescape(resp.content.decode())
    assert c.post("/review/proposals/0123456789ab/conflict/",
                  {**fields, "choice": "keep"}).status_code == 404
    assert client_as("viewer").post(url + "conflict/",
                                    {**fields, "choice": "keep"}).status_code == 403
    assert not ContradictionVerdict.objects.exists()


def test_a_decided_proposal_has_no_candidates_and_refuses_choices(client_as, seeded):
    c = client_as("curator")
    url = f"/review/proposals/{seeded['pid']}/"
    fields = form_fields(page(c.get(url)))
    proposing.reject(seeded["pid"], "lead", "not now")
    assert "may contradict" not in page(c.get(url))
    resp = c.post(url + "conflict/", {**fields, "choice": "keep"})
    assert resp.status_code == 409 and b"not open" in resp.content


def test_the_world_topics_page_names_the_proposal_that_may_contradict_it(client_as, seeded):
    link = f"/review/file-meaning/?path={seeded['world']}"
    text = page(client_as("viewer").get(link, headers={"HX-Request": "true"}))
    assert "Open proposals that may contradict this file" in text
    assert f"- {OLD}" in text and f"- {NEW}" in text and "by triage-agent" in text
    assert f'href="/review/proposals/{seeded["pid"]}/"' in text
    proposing.reject(seeded["pid"], "lead", reason="no")
    after = page(client_as("viewer").get(link, headers={"HX-Request": "true"}))
    assert "Open proposals that may contradict" not in after  # decided: no longer open
