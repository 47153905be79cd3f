"""`manage.py rebuild_review`: review state comes back from the Promoted-From trailers."""

from __future__ import annotations

import io
import re
from urllib.parse import urlencode

import pytest
from django.core.management import call_command

from memoryui.models import Promotion, ReviewState
from memoryui.store import Actor, Kind, Store, parse_daily
from tests.review.conftest import snapshot

pytestmark = pytest.mark.django_db
D = "2026-02-12"


def _log(store: Store, scope: str, time: str, text: str) -> str:
    path = store.path_for(Kind.DAILY, scope, D)
    store.append(path, f"\n## {time}\n\n{text}\n", header=f"# {D}\n",
                 actor=Actor.agent(scope), tool="remember")
    entry = next(e for e in parse_daily(store.read(path)) if e.time == time)
    return f"{path}#{entry.id}"


def _promote(client, keys: list[str], **params: str) -> None:
    """Through the UI, as a lead does: open the editor, save its draft."""
    query = urlencode([("entry", k) for k in keys] + list(params.items()))
    html = client.get(f"/review/promote/?{query}").content.decode()
    base = re.search(r'name="base" value="([^"]*)"', html).group(1)
    import html as h
    text = h.unescape(re.search(r'name="text"[^>]*>(.*?)</textarea>', html, re.S).group(1))
    data = [("entry", k) for k in keys] + [("text", text), ("base", base)]
    r = client.post("/review/promote/", urlencode(data + list(params.items())),
                    content_type="application/x-www-form-urlencoded")
    assert r.status_code == 302, r.content.decode()[:500]


def test_rebuild_restores_promotions_keeps_dismissals_and_skips_undone(client_as, workspace):
    s = workspace
    s.write(s.path_for(Kind.MEMORY, "ops-bot"), "# ops-bot\n\n## Lessons\n",
            actor=Actor.agent("ops-bot"), tool="reflect")
    a = _log(s, "ops-bot", "09:00", "Canaries catch bad builds.")
    b = _log(s, "ops-bot", "10:00", "Disk alerts fire at 85%.")
    c = _log(s, "research-agent", "11:00", "Rerank helps.")
    d = _log(s, "support-bot", "12:00", "Globex prefers email.")
    client = client_as("curator")
    _promote(client, [a, b], kind="memory", scope="ops-bot")
    _promote(client, [c], kind="skill", name="rerank",
             description="Rerank results. Use when BM25 is not enough.")
    undone = Promotion.objects.get(target_kind="skill")
    assert client.post(f"/review/undo/{undone.pk}/").status_code == 302
    _promote(client, [c], kind="global")  # promoted again after the undo
    assert client.post("/review/dismiss/", {"entry": d}).status_code == 302
    before = snapshot()
    assert len(before[0]) == 4 and len(before[1]) == 3

    # Lose the promotion state (a fresh database, a restored backup, ...).
    ReviewState.objects.filter(status="promoted").delete()
    Promotion.objects.all().delete()
    out = io.StringIO()
    call_command("rebuild_review", stdout=out)
    assert out.getvalue().strip() == (
        "rebuilt 3 promotion(s) (1 undone), 3 promoted entries; kept 1 dismissal(s)")
    assert snapshot() == before
    undone = Promotion.objects.get(target_kind="skill")
    assert undone.undone_at is not None and undone.entries.count() == 0
    # The queue agrees: nothing left to review except what nobody decided on.
    html = client.get(f"/review/?from={D}&to={D}").content.decode()
    assert "0 entries to review" in html

    # Rebuilding twice changes nothing; a dry run changes nothing either.
    call_command("rebuild_review", stdout=io.StringIO())
    assert snapshot() == before
    ReviewState.objects.filter(status="promoted").delete()
    out = io.StringIO()
    call_command("rebuild_review", "--dry-run", stdout=out)
    assert out.getvalue().startswith("would rebuild 3 promotion(s) (1 undone), 3 promoted")
    assert ReviewState.objects.filter(status="promoted").count() == 0
