"""Secrets in the UI: a person's save is flagged with a warning, the file page and overview
say so, one click removes it from the current text (history kept), admins allow a value, and
a flagged review entry is promoted only when the lead confirms."""

from __future__ import annotations

import html as htmllib
import re
from urllib.parse import urlencode

import pytest

from memoryui.store import Actor, Kind, Store, parse_daily, version_of
from tests.secrets.samples import AWS, GITHUB

pytestmark = pytest.mark.django_db

MEM = "agents/ops-bot/memory/MEMORY.md"
D = "2026-02-11"


def hidden(page: str, name: str) -> str:
    m = re.search(rf'<input type="hidden" name="{name}" value="([^"]*)"', page)
    assert m, f"no hidden {name}"
    return htmllib.unescape(m.group(1))


def test_a_person_saving_a_secret_is_warned_and_the_file_is_flagged(client_as, workspace):
    client = client_as("curator")
    workspace.write(MEM, "# ops-bot\n", actor=Actor.agent("ops-bot"), tool="reflect")
    text = f"# ops-bot\n\n- CI key {AWS}\n"
    resp = client.post("/edit/" + MEM, {"text": text, "base": version_of("# ops-bot\n")},
                       follow=True)
    assert resp.status_code == 200
    page = resp.content.decode()
    assert workspace.read(MEM) == text  # flagged, not refused: people's writes go through
    assert f"Saved, but {MEM} contains a secret (AWS Access Key on line 3)" in page
    assert 'class="secret-warning"' in page and "rotate the secret" in page
    assert "Remove from current text" in page and "Allow this" not in page  # curator
    assert AWS not in page.split("<article", 1)[0]  # the warning never repeats the value
    overview = client.get("/").content.decode()
    assert "1 file contains secrets." in overview and MEM in overview


def test_remove_from_current_text_commits_the_redacted_text(client_as, workspace):
    workspace.write(MEM, f"# ops-bot\n\n- token {GITHUB}\n- keep this\n",
                    actor=Actor.user("bob"), tool="edit")
    before = workspace.log(MEM, limit=5)
    client = client_as("curator")
    page = client.get("/f/" + MEM).content.decode()
    version = hidden(page, "version")
    resp = client.post("/secrets/remove/" + MEM, {"version": version}, follow=True)
    assert resp.status_code == 200
    assert workspace.read(MEM) == "# ops-bot\n\n- token [REDACTED]\n- keep this\n"
    commit = workspace.log(MEM, limit=1)[0]
    assert commit.subject == f"Remove secret from {MEM}" and commit.actor == "user:curator"
    assert len(workspace.log(MEM, limit=5)) == len(before) + 1  # history is not rewritten
    assert GITHUB in workspace.file_at(MEM, before[0].sha)
    assert workspace.secrets.flagged() == {}
    done = resp.content.decode()
    assert "Removed the secret from the current text" in done and "rotate the secret" in done
    assert 'class="secret-warning"' not in done
    # A stale version (someone saved meanwhile) is a 409 and changes nothing.
    workspace.write(MEM, f"# ops-bot\n\n{AWS}\n", actor=Actor.user("bob"), tool="edit")
    stale = client.post("/secrets/remove/" + MEM, {"version": version})
    assert stale.status_code == 409 and workspace.read(MEM).endswith(f"{AWS}\n")


def test_remove_needs_a_curator_and_a_valid_version(client_as, workspace):
    workspace.write(MEM, f"{AWS}\n", actor=Actor.user("bob"), tool="edit")
    viewer = client_as("viewer")
    assert viewer.post("/secrets/remove/" + MEM, {"version": version_of(f"{AWS}\n")}
                       ).status_code == 403
    curator = client_as("curator")
    assert curator.post("/secrets/remove/" + MEM, {"version": "nope"}).status_code == 400
    assert curator.post("/secrets/remove/../etc/passwd", {"version": "0" * 64}
                        ).status_code in (400, 404)
    assert workspace.read(MEM) == f"{AWS}\n"


def test_an_admin_allows_a_false_positive(client_as, workspace):
    workspace.write(MEM, f"# docs\n\nexample key {AWS}\n", actor=Actor.user("bob"), tool="edit")
    admin = client_as("admin")
    page = admin.get("/f/" + MEM).content.decode()
    assert "Allow this" in page
    resp = admin.post("/secrets/allow/" + MEM, {"version": hidden(page, "version"),
                                                "digest": hidden(page, "digest")}, follow=True)
    assert resp.status_code == 200
    assert 'class="secret-warning"' not in resp.content.decode()
    assert workspace.secrets.flagged() == {}
    # The value is allowed everywhere: an agent may now write it.
    workspace.append("agents/ops-bot/memory/daily/2026-02-12.md", f"{AWS}\n",
                     actor=Actor.agent("ops-bot"), tool="remember")
    assert AWS not in (workspace.root / ".git/memoryui/secrets-allow.json").read_text()
    curator = client_as("curator")
    assert curator.get("/secrets/allowed/").status_code == 403
    assert curator.post("/secrets/allow/" + MEM, {"version": "0" * 64, "digest": "0" * 64}
                        ).status_code == 403
    # The allow list page shows it; taking it back reports the value again.
    admin = client_as("admin")
    listing = admin.get("/secrets/allowed/").content.decode()
    assert "AWS Access Key" in listing and MEM in listing and AWS not in listing
    back = admin.post("/secrets/allowed/", {"digest": hidden(listing, "digest")}, follow=True)
    assert back.status_code == 200 and "Nothing is allowed yet." in back.content.decode()
    assert [f.kind for f in workspace.secrets.findings(MEM)] == ["AWS Access Key"]
    assert admin.post("/secrets/allowed/", {"digest": "0" * 64}).status_code == 400


def _flagged_entry(store: Store) -> str:
    """An agent wrote natively (no tool): the pending commit flags the entry."""
    path = store.path_for(Kind.DAILY, "ops-bot", D)
    full = store.root / path
    full.parent.mkdir(parents=True, exist_ok=True)
    full.write_text(f"# {D}\n\n## 09:15\n\nDeployed; the CI key is {AWS}.\n")
    store.commit_pending()
    entry = parse_daily(store.read(path))[0]
    return f"{path}#{entry.id}"


def test_a_flagged_entry_is_marked_and_promoted_only_when_confirmed(client_as, workspace):
    key = _flagged_entry(workspace)
    client = client_as("curator")
    queue = client.get("/review/?" + urlencode({"from": D, "to": D})).content.decode()
    assert "⚠ Secret: AWS Access Key (line 5)" in queue
    url = "/review/promote/?" + urlencode({"entry": key, "kind": "memory", "scope": "ops-bot"})
    page = client.get(url).content.decode()
    base = re.search(r'name="base" value="([^"]*)"', page).group(1)
    text = htmllib.unescape(re.search(r'<textarea[^>]*name="text"[^>]*>(.*?)</textarea>',
                                      page, re.S).group(1))
    data = {"entry": key, "kind": "memory", "scope": "ops-bot", "text": text, "base": base}
    asked = client.post("/review/promote/", data)
    assert asked.status_code == 400
    body = asked.content.decode()
    assert "The text contains a secret (AWS Access Key on line" in body
    assert 'name="secret_ok"' in body
    assert not workspace.exists(MEM)
    done = client.post("/review/promote/", {**data, "secret_ok": "1"})
    assert done.status_code == 302
    assert AWS in workspace.read(MEM)
    assert sorted(workspace.secrets.flagged()) == sorted([key.split("#")[0], MEM])


def test_scan_secrets_command_rebuilds_the_record(workspace):
    from io import StringIO

    from django.core.management import call_command

    (workspace.root / "notes.md").write_text(f"key {AWS}\n")
    workspace.commit_pending()
    (workspace.root / ".git/memoryui/secrets.json").unlink()
    assert workspace.secrets.flagged() == {}
    out = StringIO()
    call_command("scan_secrets", stdout=out)
    assert out.getvalue() == "1 file(s) contain secrets\n  notes.md: AWS Access Key (line 1)\n"
    assert list(workspace.secrets.flagged()) == ["notes.md"]
