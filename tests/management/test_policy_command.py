"""`manage.py policy`: set, override per scope and token, clear, list; one-sentence errors
for a bad kind, policy or scope; `token create --read-only` and `token list` showing both."""

from __future__ import annotations

import io

import pytest
from django.core.management import CommandError, call_command

from memoryui.models import Token
from memoryui.policies import policy_for


def run(command: str, *args: str) -> str:
    out = io.StringIO()
    call_command(command, *args, stdout=out)
    return out.getvalue()


@pytest.mark.django_db
def test_default_scope_and_token_levels():
    assert policy_for("ops-bot", "world") == "write"
    assert run("policy", "*", "world", "propose") == "world in every scope: propose\n"
    run("policy", "qa-bot", "world", "read")
    raw = run("token", "create", "ops-bot", "--name", "trusted").split()[-1]
    tok = Token.authenticate(raw)
    run("policy", "*", "world", "write", "--token", tok.prefix)
    assert policy_for("ops-bot", "world") == "propose"
    assert policy_for("qa-bot", "world") == "read"
    assert policy_for("ops-bot", "world", tok) == "write"
    assert policy_for("ops-bot", "daily") == "write"  # daily logs are always direct
    listed = run("policy", "--list")
    assert "qa-bot" in listed and "propose" in listed and "trusted" in listed
    tokens = run("token", "list")
    assert "world=write" in tokens
    assert "cleared world in scope qa-bot" in run("policy", "qa-bot", "world", "--clear")
    assert policy_for("qa-bot", "world") == "propose"


@pytest.mark.django_db
@pytest.mark.parametrize("args,message", [
    (("*", "daily", "propose"), "unknown kind 'daily'"),
    (("*", "memory", "maybe"), "unknown policy 'maybe'; use one of: write, propose, read"),
    (("../x", "memory", "read"), "invalid scope name"),
    (("*", "memory"), "usage: policy SCOPE KIND POLICY"),
])
def test_bad_input_is_one_sentence(args, message):
    with pytest.raises(CommandError, match=message.replace("(", r"\(")):
        run("policy", *args)


@pytest.mark.django_db
def test_read_only_tokens_are_created_and_listed():
    raw = run("token", "create", "ops-bot", "--read-only").split()[-1]
    tok = Token.authenticate(raw)
    assert tok is not None and tok.read_only
    assert "read-only" in run("token", "list")
    with pytest.raises(CommandError, match="writes nothing"):
        run("token", "create", "ops-bot", "--read-only", "--world")
