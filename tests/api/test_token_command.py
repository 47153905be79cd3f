"""`manage.py token create|list|revoke`: the raw token alone on the last line, only a hash
stored, grants as asked, scope names validated, revocation effective at once."""

from __future__ import annotations

import io
import subprocess
import sys

import pytest
from django.core.management import CommandError, call_command

from memoryui.models import Token, hash_token
from tests.api.realserver import ROOT


def run(*args: str) -> str:
    out = io.StringIO()
    call_command("token", *args, stdout=out)
    return out.getvalue()


@pytest.mark.django_db
def test_create_prints_the_token_alone_on_the_last_line():
    out = run("create", "ops-bot", "--world", "--name", "laptop")
    raw = out.rstrip("\n").split("\n")[-1]
    assert raw.startswith("mui_") and " " not in raw
    tok = Token.authenticate(raw)
    assert tok is not None
    assert (tok.scope, tok.name, tok.can_write_world, tok.can_write_global, tok.is_admin) == \
        ("ops-bot", "laptop", True, False, False)
    assert tok.key_hash == hash_token(raw)
    assert not Token.objects.filter(key_hash=raw).exists()  # never stored raw
    assert raw not in out.rstrip("\n").split("\n")[:-1]


@pytest.mark.django_db
def test_admin_token_without_or_with_a_scope():
    admin = Token.authenticate(run("create", "--admin").strip().split("\n")[-1])
    assert admin.is_admin and admin.scope == ""
    scoped = Token.authenticate(run("create", "ops-bot", "--admin", "--global").split()[-1])
    assert scoped.is_admin and scoped.scope == "ops-bot" and scoped.can_write_global


@pytest.mark.django_db
@pytest.mark.parametrize("scope", ["../etc", "a b", "x" * 65, "ops.bot", "é"])
def test_invalid_scope_names_are_refused(scope):
    with pytest.raises(CommandError, match="invalid scope name"):
        run("create", scope)
    assert Token.objects.count() == 0


@pytest.mark.django_db
def test_scope_is_required_unless_admin():
    with pytest.raises(CommandError, match="--admin"):
        run("create")


@pytest.mark.django_db
def test_list_shows_prefix_scope_grants_and_state_never_the_token():
    raw = run("create", "ops-bot", "--world").split()[-1]
    run("create", "--admin", "--name", "ci")
    tok = Token.authenticate(raw)
    run("revoke", tok.prefix)
    out = run("list")
    lines = out.strip().split("\n")
    assert lines[0].split() == ["ID", "PREFIX", "NAME", "SCOPE", "GRANTS", "POLICIES",
                                "CREATED", "LAST", "USED", "REVOKED"]
    row = next(ln for ln in lines if tok.prefix in ln)
    assert "ops-bot" in row and "world" in row and row.split()[-2:] != ["-", "-"]
    admin_row = next(ln for ln in lines if " ci " in ln)
    assert "admin" in admin_row and admin_row.rstrip().endswith("-")  # not revoked
    assert raw not in out
    active = run("list", "--active")
    assert tok.prefix not in active and " ci " in active


@pytest.mark.django_db
def test_revoke_by_prefix_id_or_raw_value():
    raws = [run("create", f"s{i}").split()[-1] for i in range(3)]
    toks = [Token.authenticate(r) for r in raws]
    assert "revoked" in run("revoke", toks[0].prefix)
    assert "revoked" in run("revoke", str(toks[1].pk))
    assert "revoked" in run("revoke", raws[2])
    assert all(Token.authenticate(r) is None for r in raws)
    assert "already revoked" in run("revoke", str(toks[1].pk))


@pytest.mark.django_db
def test_revoke_refuses_unknown_and_ambiguous_references():
    for i, prefix in enumerate(["mui_abcd1111", "mui_abcd2222"]):
        Token.objects.create(scope=f"a{i}", key_hash=f"{i}" * 64, prefix=prefix)
    with pytest.raises(CommandError, match="no token matches"):
        run("revoke", "mui_zzzzzzzz")
    with pytest.raises(CommandError, match="matches 2 tokens"):
        run("revoke", "mui_abcd")
    with pytest.raises(CommandError, match="at least 6 characters"):
        run("revoke", "mui_")
    with pytest.raises(CommandError, match="no token matches"):
        run("revoke", "mui_" + "x" * 40)
    assert Token.objects.active().count() == 2


def test_create_from_the_shell_prints_the_token_last(tmp_path):
    env = {"DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
           "MEMORYUI_VAR_DIR": str(tmp_path), "MEMORYUI_WORKSPACE": str(tmp_path / "ws"),
           "PATH": "/usr/bin:/bin", "DJANGO_SETTINGS_MODULE": "memoryui.settings"}
    subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], cwd=ROOT, env=env,
                   check=True, capture_output=True)
    proc = subprocess.run([sys.executable, "manage.py", "token", "create", "ops-bot"],
                          cwd=ROOT, env=env, check=True, capture_output=True, text=True)
    last = proc.stdout.split("\n")[-2] if proc.stdout.endswith("\n") else proc.stdout
    assert last.startswith("mui_") and len(last) > 40
    bad = subprocess.run([sys.executable, "manage.py", "token", "create", "../x"], cwd=ROOT,
                         env=env, capture_output=True, text=True)
    assert bad.returncode != 0 and "invalid scope name" in bad.stderr
