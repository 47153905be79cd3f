"""A settings typo stops every entry point with one sentence, `memoryui: <sentence>` on
stderr and exit status 2, never a traceback (memoryui/settings.py, memoryui/startup.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

TYPOS = [
    ("MEMORYUI_LAYOUT", "bogus", "must be duragent, dagu, zerostack or jutul"),
    ("MEMORYUI_COMMIT_DELAY", "abc", "must be a number"),
    ("MEMORYUI_COMMIT_DELAY", "nan", "must be a finite number"),
    ("MEMORYUI_MAX_BODY", "-1", "must be zero or more"),
    ("MEMORYUI_THREADS", "1.5", "must be an integer"),
    ("MEMORYUI_WORKERS", "0", "must be at least 1"),
    ("MEMORYUI_WORKERS", "two", "must be an integer"),
    ("MEMORYUI_SEARCH_BACKEND", "elastic", "must be auto, sqlite or postgres"),
    ("MEMORYUI_SECRETS", "maybe", "must be block, flag or off"),
    ("MEMORYUI_PROVENANCE", "x", "must be marker or none"),
    ("MEMORYUI_SYNC_PUSH", "sometimes", "must be auto or manual"),
    ("MEMORYUI_SYNC_INTERVAL", "soon", "must be a number"),
    ("MEMORYUI_SIMILAR", "101", "must be at most 100"),
    ("MEMORYUI_EMBEDDINGS", "maybe", "must be on or off"),
    ("DEBUG", "maybe", "must be one of 1, true"),
    ("SECURE_COOKIES", "si", "must be one of 1, true"),
    ("LOG_LEVEL", "loud", "must be DEBUG, INFO"),
    ("TZ", "Mars/Olympus", "must name a time zone"),
    ("DATABASE_URL", "nonsense://db", "must be a database URL"),
    ("MEMORYUI_LOGIN_FAILURES", "many", "must be an integer"),
    ("MEMORYUI_LOGIN_COOLOFF", "0", "must be at least 1"),
    ("MEMORYUI_PROPOSAL_WEBHOOK", "chat.example.com/hook", "must be an http:// or https://"),
]


def _env(tmp_path: Path, **extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORYUI_")}
    return {**env, "MEMORYUI_VAR_DIR": str(tmp_path), "SECRET_KEY": "test-only",
            "MEMORYUI_WORKSPACE": str(tmp_path / "ws"), "PYTHONPATH": str(ROOT),
            "DATABASE_URL": f"sqlite:///{tmp_path}/db.sqlite3",
            "DJANGO_SETTINGS_MODULE": "memoryui.settings", **extra}


def _run(args: list[str], env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)


def _one_sentence(proc: subprocess.CompletedProcess, name: str, words: str) -> None:
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    [line] = proc.stderr.strip().splitlines()
    assert line.startswith(f"memoryui: {name} ") and words in line


@pytest.mark.parametrize(("name", "value", "words"), TYPOS, ids=[t[0] + "=" + t[1] for t in TYPOS])
def test_manage_py_names_the_bad_setting_in_one_line(tmp_path, name, value, words):
    proc = _run([sys.executable, "manage.py", "check"], _env(tmp_path, **{name: value}))
    _one_sentence(proc, name, words)


def test_the_asgi_entry_under_uvicorn_gives_the_same_line(tmp_path):
    proc = _run([sys.executable, "-m", "uvicorn", "memoryui.asgi:application", "--port", "0"],
                _env(tmp_path, MEMORYUI_LAYOUT="bogus"))
    _one_sentence(proc, "MEMORYUI_LAYOUT", "must be duragent")


def test_the_wsgi_entry_gives_the_same_line(tmp_path):
    proc = _run([sys.executable, "-c", "import memoryui.wsgi"],
                _env(tmp_path, MEMORYUI_COMMIT_DELAY="abc"))
    _one_sentence(proc, "MEMORYUI_COMMIT_DELAY", "must be a number")


def test_sync_status_without_a_remote_says_sync_is_off(tmp_path):
    proc = _run([sys.executable, "manage.py", "sync", "--status"], _env(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "sync is off: MEMORYUI_REMOTE is not set"
    plain = _run([sys.executable, "manage.py", "sync"], _env(tmp_path))
    assert plain.returncode == 1 and "sync is off" in plain.stderr
