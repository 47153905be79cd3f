"""The project's own commands and endpoints: healthz, demo, user, snapshot, serve --help,
settings from the environment, security headers."""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.contrib.auth import authenticate
from django.core.management import CommandError, call_command

from memoryui.roles import role_of
from memoryui.store import Store

ROOT = Path(__file__).resolve().parents[2]


def test_healthz_says_ok_when_workspace_and_database_answer(client, workspace, db):
    r = client.get("/healthz")
    assert r.status_code == 200
    assert r.json() == {"ok": True}
    assert (workspace.root / ".git").is_dir(), "a missing workspace is created and git init-ed"


def test_pages_send_a_strict_csp_and_security_headers(client, workspace, db):
    r = client.get("/accounts/login/")
    csp = r["Content-Security-Policy"]
    assert "script-src 'self'" in csp and "'unsafe-inline'" not in csp
    assert "frame-ancestors 'none'" in csp
    assert r["X-Frame-Options"] == "DENY"
    assert r["X-Content-Type-Options"] == "nosniff"


def test_demo_builds_a_living_workspace_with_history(tmp_path, db, settings):
    settings.VAR_DIR = tmp_path / "var"
    out = StringIO()
    call_command("demo", "--dir", str(tmp_path / "demo"), stdout=out)
    assert "sign in as: admin / " in out.getvalue()
    password = out.getvalue().rsplit(" / ", 1)[1].strip()
    admin = authenticate(username="admin", password=password)
    assert admin is not None and role_of(admin) == "admin"
    store = Store(tmp_path / "demo")
    authors = {c.author for c in store.log(limit=500)}
    assert {"ops-bot", "research-agent", "support-bot", "alice"} <= authors
    kinds = {info.address.kind.value for info in store.tree().values() if info.address}
    assert {"world", "global", "memory", "daily", "note", "scratchpad", "skill",
            "directive"} <= kinds
    days = {c.when.date() for c in store.log(kind="daily", limit=500)}
    assert max(days) - min(days) >= dt.timedelta(days=14), "several weeks of daily logs"
    assert [e.status for e in store.pending()] == ["modified"], "one pending change"
    # Running it again keeps the workspace and prints the same login.
    again = StringIO()
    call_command("demo", "--dir", str(tmp_path / "demo"), stdout=again)
    assert "keeping it" in again.getvalue() and password in again.getvalue()


def test_user_command_creates_and_updates_people(db, monkeypatch):
    monkeypatch.setenv("MEMORYUI_PASSWORD", "s3cret-pass")
    call_command("user", "dana", "--role", "curator", stdout=StringIO())
    assert role_of(authenticate(username="dana", password="s3cret-pass")) == "curator"
    call_command("user", "dana", "--role", "viewer", stdout=StringIO())
    assert role_of(authenticate(username="dana", password="s3cret-pass")) == "viewer"
    monkeypatch.setenv("MEMORYUI_PASSWORD", "short")
    with pytest.raises(CommandError, match="8 characters"):
        call_command("user", "eve", "--role", "admin", stdout=StringIO())


def test_snapshot_commits_outside_edits_per_owning_scope(workspace, db):
    bot = "agents/ops-bot/memory/MEMORY.md"
    (workspace.root / "agents/ops-bot/memory").mkdir(parents=True)
    (workspace.root / bot).write_text("written natively by the agent\n")
    (workspace.root / "memory/world").mkdir(parents=True)
    (workspace.root / "memory/world/people.md").write_text("# People\n")
    out = StringIO()
    call_command("snapshot", stdout=out)
    assert "committed 2 file(s)" in out.getvalue()
    assert workspace.pending() == []
    assert workspace.log(path=bot)[0].author == "ops-bot"
    out = StringIO()
    call_command("snapshot", stdout=out)
    assert "nothing to commit" in out.getvalue()


@pytest.mark.parametrize("command", ["serve", "demo", "user", "snapshot", "token", "reindex",
                                     "rebuild_review"])
def test_every_command_has_help(command):
    proc = subprocess.run([sys.executable, "manage.py", command, "--help"], cwd=ROOT,
                          capture_output=True, text=True, env={**os.environ})
    assert proc.returncode == 0, proc.stderr
    assert "usage: manage.py " + command in proc.stdout


def test_settings_follow_the_environment(tmp_path):
    env = {**os.environ, "MEMORYUI_WORKSPACE": str(tmp_path / "w"), "MEMORYUI_LAYOUT": "dagu",
           "DATABASE_URL": "postgres://u:p@db.example:5432/mem", "SECRET_KEY": "k" * 50,
           "DEBUG": "true", "ALLOWED_HOSTS": "memory.example.com",
           "DJANGO_SETTINGS_MODULE": "memoryui.settings", "MEMORYUI_VAR_DIR": str(tmp_path)}
    code = ("from django.conf import settings as s; d = s.DATABASES['default']; "
            "print(s.MEMORYUI_WORKSPACE, s.MEMORYUI_LAYOUT, d['ENGINE'], d['HOST'], "
            "s.DEBUG, s.ALLOWED_HOSTS, s.SECRET_KEY == 'k' * 50)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True,
                         text=True, check=True).stdout.split()
    assert out == [str(tmp_path / "w"), "dagu", "django.db.backends.postgresql",
                   "db.example", "True", "['memory.example.com']", "True"]


def test_secret_key_is_generated_once_when_not_given(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "SECRET_KEY"}
    env.update(MEMORYUI_VAR_DIR=str(tmp_path), DJANGO_SETTINGS_MODULE="memoryui.settings")
    code = "from django.conf import settings; print(settings.SECRET_KEY)"
    keys = [subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env,
                           capture_output=True, text=True, check=True).stdout.strip()
            for _ in range(2)]
    assert keys[0] == keys[1] and len(keys[0]) >= 50
    assert (tmp_path / "secret_key").stat().st_mode & 0o077 == 0
