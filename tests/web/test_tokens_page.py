"""The admins' tokens page: list, create (raw token shown once), revoke with CSRF."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from memoryui.models import Token

URL = "/settings/tokens/"


def raw_token(html: str) -> str | None:
    m = re.search(r'value="(mui_[A-Za-z0-9_-]+)"', html)
    return m.group(1) if m else None


def test_anonymous_is_sent_to_login(client, db):
    resp = client.get(URL)
    assert resp.status_code == 302
    assert resp["Location"].startswith("/accounts/login/")


@pytest.mark.parametrize("role", ["viewer", "curator"])
def test_non_admins_are_forbidden(client_as, role):
    c = client_as(role)
    assert c.get(URL).status_code == 403
    assert c.post(URL, {"scope": "ops-bot"}).status_code == 403
    assert Token.objects.count() == 0


def test_admin_sees_tokens_with_prefix_scope_and_grants(client_as, make_token):
    make_token("ops-bot", world=True)
    make_token(admin=True)
    resp = client_as("admin").get(URL)
    assert resp.status_code == 200
    html = resp.content.decode()
    for tok in Token.objects.all():
        assert tok.prefix in html
    assert 'href="/s/ops-bot/"' in html
    assert ">world<" in html and ">admin<" in html
    assert raw_token(html) is None  # existing tokens are never shown


def test_create_shows_the_raw_token_once(client_as):
    c = client_as("admin")
    resp = c.post(URL, {"scope": "ops-bot", "name": "ci runner", "world": "on"})
    assert resp.status_code == 200
    assert resp["Cache-Control"] == "no-store"
    raw = raw_token(resp.content.decode())
    assert raw is not None
    tok = Token.authenticate(raw)
    assert (tok.scope, tok.name, tok.can_write_world, tok.can_write_global, tok.is_admin) == \
        ("ops-bot", "ci runner", True, False, False)
    assert tok.created_by.username == "admin"
    again = c.get(URL).content.decode()
    assert raw not in again and tok.prefix in again


def test_admin_token_needs_no_scope(client_as):
    resp = client_as("admin").post(URL, {"admin": "on"})
    tok = Token.authenticate(raw_token(resp.content.decode()))
    assert tok.is_admin and tok.scope == ""


@pytest.mark.parametrize("data,message", [
    ({"scope": "../etc"}, "invalid scope name"),
    ({"scope": ""}, "Give the scope"),
    ({"scope": "x" * 65}, "at most 64"),
])
def test_invalid_input_is_shown_and_nothing_is_created(client_as, data, message):
    resp = client_as("admin").post(URL, data)
    assert resp.status_code == 400
    html = resp.content.decode()
    assert message in html
    assert raw_token(html) is None
    assert Token.objects.count() == 0


def test_revoke_is_a_post_with_confirmation(client_as, make_token):
    raw = make_token("ops-bot")
    tok = Token.authenticate(raw)
    c = client_as("admin")
    html = c.get(URL).content.decode()
    form = re.search(rf'<form method="post" action="/settings/tokens/{tok.pk}/revoke"[^>]*>',
                     html)
    assert form and "data-confirm=" in form.group(0)
    assert c.get(f"/settings/tokens/{tok.pk}/revoke").status_code == 405
    resp = c.post(f"/settings/tokens/{tok.pk}/revoke", follow=True)
    assert resp.status_code == 200
    assert "revoked" in resp.content.decode()
    assert Token.authenticate(raw) is None
    api = c.get("/api/v1/tools", HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert api.status_code == 401


def test_revoke_needs_the_csrf_token(make_user, make_token):
    raw = make_token("ops-bot")
    tok = Token.authenticate(raw)
    c = Client(enforce_csrf_checks=True)
    c.force_login(make_user("admin"))
    assert c.post(f"/settings/tokens/{tok.pk}/revoke").status_code == 403
    assert c.post(URL, {"scope": "x"}).status_code == 403
    assert Token.authenticate(raw) is not None
    page = c.get(URL).content.decode()
    assert page.count('name="csrfmiddlewaretoken"') >= 2


def test_page_has_no_inline_script_or_style(client_as, make_token):
    make_token("ops-bot")
    html = client_as("admin").get(URL).content.decode()
    assert "style=" not in html and "<style" not in html
    assert not re.search(r"<script(?![^>]*\bsrc=)", html)


def test_unknown_token_revoke_is_404(client_as):
    assert client_as("admin").post("/settings/tokens/999/revoke").status_code == 404


def test_create_a_git_host_token_and_see_what_it_may_push(client_as):
    c = client_as("admin")
    resp = c.post(URL, {"host": "on", "host_scopes": "alpha, bravo", "world": "on",
                        "skills": "on", "name": "dagu-1"})
    assert resp.status_code == 200
    raw = raw_token(resp.content.decode())
    tok = Token.authenticate(raw)
    assert (tok.is_host, tok.host_scopes, tok.can_write_world, tok.can_push_skills,
            tok.can_push_directives, tok.scope) == (True, ["alpha", "bravo"], True, True,
                                                    False, "")
    html = c.get(URL).content.decode()
    assert "git host: pushes alpha, bravo, world topics, skills; reads the whole workspace" \
        in html
    assert "it reads the whole workspace" in html


@pytest.mark.parametrize("form, field", [
    ({"host": "on", "scope": "alpha"}, "host"),
    ({"host": "on", "host_scopes": "not a scope!"}, "host_scopes"),
    ({"scope": "alpha", "host_scopes": "alpha"}, "host"),
])
def test_host_token_form_errors_are_one_sentence(client_as, form, field):
    resp = client_as("admin").post(URL, form)
    assert resp.status_code == 400
    assert Token.objects.count() == 0
