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
from django.test import RequestFactory

from memoryui.roles import role_of
from memoryui.store import Store
from tests.catalogued import catalogued

ROOT = Path(__file__).resolve().parents[2]


def test_healthz_says_ok_when_workspace_and_database_answer(client, workspace, db, caplog,
                                                            monkeypatch):
    from memoryui import health

    monkeypatch.setattr(health, "_missing_said", False)  # as in a worker just started
    with caplog.at_level("WARNING", logger="memoryui.health"):
        r = client.get("/healthz")
        assert client.get("/healthz").json() == r.json()
    assert r.status_code == 200
    assert r.json() == {"ok": True, "committer": "missing"}  # the workers commit meanwhile
    assert len([m for m in caplog.messages if "no committer" in m]) == 1, "said once"
    assert (workspace.root / ".git").is_dir(), "a missing workspace is created and git init-ed"
    from memoryui.store.committerlock import CommitterLock
    from memoryui.workspace import get_store

    committer = CommitterLock(get_store().git.state_dir)  # as `manage.py committer` holds it
    assert committer.hold()
    try:
        assert client.get("/healthz").json() == {"ok": True, "committer": "ok"}
    finally:
        committer.close()


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
    admin = authenticate(_sign_in_request(), username="admin", password=password)
    assert admin is not None and role_of(admin) == "admin"
    store = Store(tmp_path / "demo")
    authors = {c.author for c in store.log(limit=500)}
    assert {"ops-bot", "research-agent", "support-bot", "alice"} <= authors
    addresses = [store.address_of(p) for p in catalogued(store)]
    kinds = {a.kind.value for a in addresses if a}
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
    assert role_of(authenticate(_sign_in_request(), username="dana", password="s3cret-pass")) == "curator"
    call_command("user", "dana", "--role", "viewer", stdout=StringIO())
    assert role_of(authenticate(_sign_in_request(), username="dana", password="s3cret-pass")) == "viewer"
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


@pytest.mark.parametrize("command", ["serve", "committer", "demo", "user", "snapshot", "token",
                                     "reindex", "rebuild_review"])
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


def _fresh_env(tmp_path: Path, **more: str) -> dict:
    """A brand-new install: its own empty database and var folder, no password, no TTY."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("MEMORYUI_PASSWORD", "DATABASE_URL", "MEMORYUI_COMMIT_DELAY",
                        "MEMORYUI_MAX_BODY", "LOG_LEVEL")}
    env.update(DJANGO_SETTINGS_MODULE="memoryui.settings", MEMORYUI_VAR_DIR=str(tmp_path),
               DATABASE_URL=f"sqlite:///{tmp_path / 'fresh.sqlite3'}",
               MEMORYUI_WORKSPACE=str(tmp_path / "ws"), **more)
    return env


def _manage(env: dict, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env,
                          input=stdin, stdin=None if stdin is not None else subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=180)


def _sign_in_request() -> object:
    """A sign-in's request: the throttle (django-axes) counts attempts by its address."""
    return RequestFactory().post("/accounts/login/")


def _can_sign_in(env: dict, name: str, password: str) -> str:
    code = ("import django; django.setup()\n"
            "from django.contrib.auth import authenticate\n"
            "from django.test import RequestFactory\n"
            "from memoryui.roles import role_of\n"
            "request = RequestFactory().post('/accounts/login/')\n"
            f"u = authenticate(request, username={name!r}, password={password!r})\n"
            "print(role_of(u) if u else 'no')\n")
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=120, check=True).stdout.strip()


def test_user_on_a_fresh_database_migrates_first(tmp_path):
    env = _fresh_env(tmp_path, MEMORYUI_PASSWORD="long-enough-pw")
    proc = _manage(env, "user", "dana", "--role", "curator")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "dana is now curator"
    assert "migration(s) first" in proc.stderr
    assert _can_sign_in(env, "dana", "long-enough-pw") == "curator"
    again = _manage(env, "user", "dana", "--role", "viewer")
    assert again.returncode == 0 and "migration" not in again.stderr


def test_token_on_a_fresh_database_migrates_first(tmp_path):
    proc = _manage(_fresh_env(tmp_path), "token", "create", "ops-bot")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.rstrip("\n").split("\n")[-1].startswith("mui_")


def test_user_without_a_terminal_or_password_is_a_one_line_error(tmp_path):
    proc = _manage(_fresh_env(tmp_path), "user", "eve", "--role", "admin")
    assert proc.returncode != 0
    assert proc.stderr.strip().splitlines() == [
        "CommandError: no password given: set MEMORYUI_PASSWORD, pipe the password on stdin, "
        "or run this in a terminal to be asked for it"]
    assert "EOFError" not in proc.stderr and "Traceback" not in proc.stderr


def test_user_takes_a_piped_password(tmp_path):
    env = _fresh_env(tmp_path)
    proc = _manage(env, "user", "fay", "--role", "viewer", stdin="piped-password-1\n")
    assert proc.returncode == 0, proc.stderr
    assert _can_sign_in(env, "fay", "piped-password-1") == "viewer"


def test_numeric_settings_have_one_default_and_clear_errors(tmp_path):
    code = ("from django.conf import settings as s; "
            "print(s.MEMORYUI_COMMIT_DELAY, s.MEMORYUI_MAX_BODY, s.LOG_LEVEL)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=_fresh_env(tmp_path),
                         capture_output=True, text=True, timeout=120)
    assert out.stdout.split() == ["0.2", "1048576", "INFO"], out.stderr
    bad = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, timeout=120,
                         env=_fresh_env(tmp_path, MEMORYUI_COMMIT_DELAY="soon"))
    assert bad.returncode != 0
    assert "MEMORYUI_COMMIT_DELAY must be a number, got 'soon'" in bad.stderr


def test_trusted_proxies_are_addresses_or_networks(tmp_path):
    code = "from django.conf import settings as s; print(s.FORWARDED_ALLOW_IPS)"
    ok = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                        timeout=120, env=_fresh_env(tmp_path,
                                                    FORWARDED_ALLOW_IPS="10.0.0.0/8, ::1"))
    assert ok.stdout.strip() == "['10.0.0.0/8', '::1']", ok.stderr
    bad = subprocess.run([sys.executable, "manage.py", "check"], cwd=ROOT, capture_output=True,
                         text=True, timeout=120,
                         env=_fresh_env(tmp_path, FORWARDED_ALLOW_IPS="10.0.0.1,proxy.lan"))
    assert bad.returncode == 2
    assert bad.stderr == ("memoryui: FORWARDED_ALLOW_IPS must list IP addresses and networks "
                          "(or be *), got 'proxy.lan'\n")


def test_the_lock_pins_every_runtime_dependency_the_image_needs():
    import tomllib

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    pins = {}
    for line in (ROOT / "requirements.lock").read_text().splitlines():
        if line and not line.startswith("#"):
            name, sep, version = line.partition("==")
            assert sep and version, line
            pins[canonicalize_name(name)] = version
    for spec in [*project["dependencies"], *project["optional-dependencies"]["postgres"]]:
        req = Requirement(spec)
        assert canonicalize_name(req.name) in pins, f"{req.name} is not in requirements.lock"
        assert req.specifier.contains(pins[canonicalize_name(req.name)]), spec
    assert {"psycopg", "psycopg-binary", "uvicorn", "django"} <= set(pins)


def test_the_dockerfile_installs_the_lock_and_checks_health():
    # No Docker engine runs here or in CI, so the image is checked as text.
    text = (ROOT / "Dockerfile").read_text()
    assert "pip install --no-cache-dir -r requirements.lock" in text
    assert "pip install --no-cache-dir --no-deps ." in text and "pip check" in text
    assert 'CMD ["python", "-m", "memoryui.healthcheck", "http://127.0.0.1:8000/healthz"]' in text
    assert "HEALTHCHECK" in text and "ALLOWED_HOSTS" in text


@pytest.mark.parametrize("allowed,host", [("memory.example.com,localhost", "memory.example.com"),
                                          (".example.com", "example.com"), ("*", "localhost"),
                                          ("", "localhost")])
def test_the_healthcheck_sends_a_host_django_allows(allowed, host):
    from memoryui.healthcheck import host_header

    assert host_header(allowed) == host
