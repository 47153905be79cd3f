"""Dismissing review entries, putting them back, and undoing promotions with a revert commit."""

from __future__ import annotations

from urllib.parse import urlencode

import pytest

from memoryui.models import Promotion, ReviewState
from memoryui.store import Actor, Kind, Store
from tests.web.reviewer import promote_end_to_end, queue_url
from tests.web.reviewing import MEMORY, seed

pytestmark = pytest.mark.django_db


@pytest.fixture
def seeded(workspace: Store) -> dict[str, str]:
    return seed(workspace)


def test_dismiss_and_put_back(client_as, seeded, workspace) -> None:
    from memoryui.review import dom_id

    client = client_as("curator")
    key = seeded["sup1"]
    head = workspace.head()
    r = client.post("/review/dismiss/", {"entry": key, "next": queue_url()})
    assert r.status_code == 302 and r["Location"] == queue_url()
    state = ReviewState.objects.get()
    assert (state.status, state.reviewed_by, state.promotion) == ("dismissed", "curator", None)
    # Recorded in history too: an empty commit (no file changes) by the person.
    c = workspace.log(limit=1)[0]
    assert c.parents == [head] and c.files == [] and c.trailers["Dismissed"] == [key]
    assert c.actor == "user:curator" and c.tools == ["review-dismiss"]
    assert "Globex prefers email" not in client.get(queue_url()).content.decode()
    html = client.get(queue_url(status="dismissed")).content.decode()
    assert "Dismissed by curator" in html and "Put back in the queue" in html
    r = client.post("/review/reopen/", {"entry": key}, HTTP_HX_REQUEST="true")
    assert r.status_code == 200 and f'id="{dom_id(key)}"' in r.content.decode()
    assert ReviewState.objects.count() == 0
    assert workspace.log(limit=1)[0].trailers["Reopened"] == [key]
    assert "Globex prefers email" in client.get(queue_url()).content.decode()


def test_htmx_dismiss_of_several_entries_updates_each_out_of_band(client_as, seeded) -> None:
    from memoryui.review import dom_id

    client = client_as("curator")
    keys = [seeded["ops1"], seeded["ops3"]]
    r = client.post("/review/dismiss/", urlencode([("entry", k) for k in keys]),
                    content_type="application/x-www-form-urlencoded", HTTP_HX_REQUEST="true")
    html = r.content.decode()
    assert r.status_code == 200 and r["HX-Reswap"] == "none"
    for k in keys:
        assert f'id="{dom_id(k)}" hx-swap-oob="true"' in html
    assert "Dismissed 2 entries." in html
    assert ReviewState.objects.filter(status="dismissed").count() == 2
    # Without JavaScript, "dismiss selected" asks on a page of its own first.
    page = client.get("/review/dismiss/confirm/?" + urlencode({"entry": seeded["res1"]}))
    assert page.status_code == 200 and 'action="/review/dismiss/"' in page.content.decode()


def test_a_promoted_entry_cannot_be_dismissed_or_put_back(client_as, seeded) -> None:
    client = client_as("curator")
    key = seeded["ops1"]
    promote_end_to_end(client, [key], kind="memory", scope="ops-bot")
    r = client.post("/review/dismiss/", {"entry": key})
    assert r.status_code == 409 and "undo the promotion first" in r.content.decode()
    r = client.post("/review/reopen/", {"entry": key}, HTTP_HX_REQUEST="true")
    assert r.status_code == 409 and r["HX-Reswap"] == "none"
    assert "undo the promotion instead" in r.content.decode()
    assert ReviewState.objects.get().status == "promoted"


def test_a_dismissed_entry_can_still_be_promoted(client_as, seeded) -> None:
    client = client_as("curator")
    key = seeded["ops1"]
    client.post("/review/dismiss/", {"entry": key})
    r, _ = promote_end_to_end(client, [key], kind="memory", scope="ops-bot")
    assert r.status_code == 302
    assert ReviewState.objects.get().status == "promoted"


def test_undo_reverts_with_a_new_commit_and_reopens_the_entries(client_as, seeded,
                                                                workspace) -> None:
    client = client_as("curator")
    keys = [seeded["ops1"], seeded["ops3"]]
    path = workspace.path_for(Kind.MEMORY, "ops-bot")
    r, _ = promote_end_to_end(client, keys, kind="memory", scope="ops-bot")
    promo = Promotion.objects.get()
    r = client.post(f"/review/undo/{promo.pk}/", {"next": queue_url()})
    assert r.status_code == 302
    assert workspace.read(path) == MEMORY
    undo_commit = workspace.log(limit=1)[0]
    assert undo_commit.trailers["Reverts"] == [promo.commit_sha]
    assert undo_commit.actor == "user:curator" and undo_commit.tools == ["promote-undo"]
    promo.refresh_from_db()
    assert promo.undo_commit_sha == undo_commit.sha and promo.undone_by == "curator"
    assert ReviewState.objects.count() == 0
    html = client.get(queue_url()).content.decode()
    assert "Canary at 5%" in html and "Paged Bob" in html
    assert "undone by curator" in html
    r = client.post(f"/review/undo/{promo.pk}/")
    assert r.status_code == 409 and "already undone" in r.content.decode()
    assert client.post("/review/undo/999/").status_code == 404


def test_undo_after_other_edits_is_a_three_way_revert_or_refused(client_as, seeded,
                                                                 workspace) -> None:
    client = client_as("curator")
    path = workspace.path_for(Kind.MEMORY, "ops-bot")
    promote_end_to_end(client, [seeded["ops1"]], kind="memory", scope="ops-bot")
    promo = Promotion.objects.get()
    promoted = workspace.read(path)
    # An unrelated edit elsewhere in the file survives the undo.
    edited = promoted.replace("## Facts\n", "## Facts\n- Office is in Oslo.\n")
    workspace.write(path, edited, actor=Actor.user("alice"), tool="edit")
    assert client.post(f"/review/undo/{promo.pk}/").status_code == 302
    assert workspace.read(path) == MEMORY.replace("## Facts\n", "## Facts\n- Office is in Oslo.\n")
    # An edit of the promoted lines themselves makes the undo refuse, writing nothing.
    promote_end_to_end(client, [seeded["ops1"]], kind="memory", scope="ops-bot")
    promo2 = Promotion.objects.exclude(pk=promo.pk).get()
    text = workspace.read(path).replace("Canary at 5% caught the bad build.", "Canaries work.")
    workspace.write(path, text, actor=Actor.user("alice"), tool="edit")
    head = workspace.head()
    r = client.post(f"/review/undo/{promo2.pk}/")
    assert r.status_code == 409 and "edit it by hand" in r.content.decode()
    assert workspace.head() == head and workspace.read(path) == text
    assert ReviewState.objects.get().status == "promoted"


def test_undo_of_a_promotion_that_created_a_file_deletes_it(client_as, seeded,
                                                            workspace) -> None:
    client = client_as("curator")
    promote_end_to_end(client, [seeded["res1"]], kind="skill", name="rerank",
                       description="Rerank search results. Use when BM25 is not enough.")
    assert workspace.exists("skills/rerank/SKILL.md")
    promo = Promotion.objects.get()
    r = client.post(f"/review/undo/{promo.pk}/", HTTP_HX_REQUEST="true")
    assert r.status_code == 200 and r["HX-Refresh"] == "true"  # the entries come back
    page = client.get(queue_url()).content.decode()
    assert "Undid the promotion into skills/rerank/SKILL.md" in page
    assert "BM25 plus rerank" in page
    assert not workspace.exists("skills/rerank/SKILL.md")
    assert workspace.log(limit=1)[0].trailers["Reverts"] == [promo.commit_sha]
