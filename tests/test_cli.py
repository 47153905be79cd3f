"""`memoryui ...` (the console command, here as `python -m memoryui`) runs memoryui's
management commands with its settings, and a bad setting is one sentence, exit 2."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT = 300.0  # bounds a hang only


def memoryui(tmp: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    return subprocess.run(
        [sys.executable, "-m", "memoryui", *args], cwd=tmp, capture_output=True, text=True,
        timeout=TIMEOUT, env={**base, "PYTHONPATH": str(ROOT),
                              "DATABASE_URL": f"sqlite:///{tmp / 'db.sqlite3'}",
                              "MEMORYUI_VAR_DIR": str(tmp), "MEMORYUI_WORKSPACE": str(tmp / "ws"),
                              **env})


def test_help_lists_memoryuis_commands(tmp_path: Path) -> None:
    done = memoryui(tmp_path, "--help")
    assert done.returncode == 0, done.stderr
    assert "Type 'memoryui help <subcommand>'" in done.stdout
    listed = done.stdout.split("[memoryui]", 1)[1]
    for command in ("demo", "serve", "token", "user", "sync", "reindex"):
        assert f"    {command}\n" in listed


def test_a_real_command_runs_with_memoryuis_settings(tmp_path: Path) -> None:
    assert memoryui(tmp_path, "migrate", "--verbosity", "0").returncode == 0
    created = memoryui(tmp_path, "token", "create", "ops-bot")
    assert created.returncode == 0, created.stderr
    raw = created.stdout.rstrip("\n").split("\n")[-1]
    listed = memoryui(tmp_path, "token", "list")
    assert listed.returncode == 0, listed.stderr
    assert "ops-bot" in listed.stdout and raw not in listed.stdout


def test_a_bad_setting_is_one_sentence_and_exit_2(tmp_path: Path) -> None:
    done = memoryui(tmp_path, "token", "list", MEMORYUI_PROVENANCE="sometimes")
    assert done.returncode == 2
    assert done.stderr == ("memoryui: MEMORYUI_PROVENANCE must be marker or none, got "
                           "'sometimes'\n")
    assert "Traceback" not in done.stdout + done.stderr
