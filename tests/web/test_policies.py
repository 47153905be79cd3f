"""The admins' Policies page, and the policies shown wherever a token or a scope is shown
(Tokens page, scope page); read-only tokens made from the Tokens page."""

from __future__ import annotations

import pytest

from memoryui import policies
from memoryui.models import Token, WritePolicy
from memoryui.store import Actor, Kind

URL = "/settings/policies/"


@pytest.mark.parametrize("role", ["viewer", "curator"])
def test_only_admins_see_or_set_policies(client_as, workspace, role):
    c = client_as(role)
    assert c.get(URL).status_code == 403
    assert c.post(URL, {"scope": "*", "kind": "memory", "policy": "propose"}).status_code == 403
    assert not WritePolicy.objects.exists()
    assert 'href="/settings/policies/"' not in c.get("/").content.decode()


def test_anonymous_is_sent_to_sign_in(client, db, workspace):
    assert client.get(URL)["Location"].startswith("/accounts/login/")


def test_the_default_is_write_everywhere(client_as, workspace):
    page = client_as("admin").get(URL).content.decode()
    assert 'href="/settings/policies/"' in page  # in the header, for admins
    assert page.count('class="badge policy-write"') == len(policies.KINDS)
    assert "None: every agent writes directly." in page


def test_set_for_every_scope_for_one_scope_and_clear(client_as, workspace):
    c = client_as("admin")
    resp = c.post(URL, {"action": "set", "scope": "", "kind": "memory", "policy": "propose"})
    assert resp.status_code == 302
    assert policies.policy_for("ops-bot", "memory") == "propose"
    c.post(URL, {"action": "set", "scope": "ops-bot", "kind": "world", "policy": "read"})
    assert policies.policy_for("ops-bot", "world") == "read"
    assert policies.policy_for("qa-bot", "world") == "write"
    page = c.get(URL).content.decode()
    assert "Agents of scope ops-bot now read world topics." in page
    assert 'class="badge policy-propose"' in page and 'href="/s/ops-bot/"' in page
    resp = c.post(URL, {"action": "clear", "scope": "ops-bot", "kind": "world"})
    assert resp.status_code == 302
    assert policies.policy_for("ops-bot", "world") == "write"


def test_a_token_override_wins_and_shows_on_the_tokens_page(client_as, workspace, make_token):
    make_token("ops-bot")
    tok = Token.objects.get()
    c = client_as("admin")
    c.post(URL, {"action": "set", "scope": "*", "kind": "skill", "policy": "propose",
                 "token": tok.pk})
    assert policies.policy_for("ops-bot", "skill", tok) == "propose"
    assert policies.policy_for("ops-bot", "skill") == "write"
    tokens = c.get("/settings/tokens/").content.decode()
    assert "skills: propose" in tokens


@pytest.mark.parametrize("data, message", [
    ({"action": "set", "scope": "*", "kind": "daily", "policy": "propose"}, "unknown kind"),
    ({"action": "set", "scope": "*", "kind": "memory", "policy": "maybe"}, "unknown policy"),
    ({"action": "set", "scope": "../etc", "kind": "memory", "policy": "read"}, "every scope"),
    ({"action": "set", "scope": "*", "kind": "memory"}, "choose the policy"),
    ({"action": "set", "scope": "*", "kind": "memory", "policy": "read", "token": "999"},
     "no active token"),
    ({"action": "drop", "scope": "*", "kind": "memory"}, "choose set or clear"),
])
def test_bad_input_is_400_with_a_sentence(client_as, workspace, data, message):
    resp = client_as("admin").post(URL, data)
    assert resp.status_code == 400
    assert message in resp.content.decode()
    assert not WritePolicy.objects.exists()


def test_a_read_only_token_is_made_and_shown(client_as, workspace):
    c = client_as("admin")
    resp = c.post("/settings/tokens/", {"scope": "ops-bot", "read_only": "on"})
    assert resp.status_code == 200
    tok = Token.objects.get()
    assert tok.read_only
    page = c.get("/settings/tokens/").content.decode()
    assert ">read-only<" in page and "reads only" in page


def test_the_scope_page_shows_its_policies_and_open_proposals(client_as, workspace):
    from tests.web.test_proposals import proposal

    workspace.write(workspace.path_for(Kind.MEMORY, "ops-bot"), "# M\n", actor=Actor.user("a"),
                    tool="edit")
    policies.set_policy("ops-bot", "memory", "propose")
    proposal(workspace, "ops-bot", "# M\n\n- new\n")
    c = client_as("viewer")
    page = c.get("/s/ops-bot/").content.decode()
    assert 'data-scope-proposals="1"' in page and "/review/proposals/?scope=ops-bot" in page
    assert "MEMORY.md: propose" in page
    overview = c.get("/").content.decode()
    assert 'data-proposals-summary="1"' in overview
