"""The repository stays clean of run-time files, and no setting names a file after a value
that is missing: a stray SQLite index called `None` once sat, committed, at the root."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# Names a missing value turns into (str(None), JSON null, JS undefined) and run-time data.
STRAY_NAME = re.compile(r"(?:^|/)(?:None|null|undefined)$"
                        r"|\.(?:sqlite3?|db)(?:-wal|-shm|-journal)?$")
PATH_SETTINGS = ("VAR_DIR", "MEMORYUI_WORKSPACE", "MEMORYUI_SEARCH_DB", "STATIC_ROOT")
PATH_VARS = ("MEMORYUI_VAR_DIR", "MEMORYUI_WORKSPACE", "MEMORYUI_SEARCH_DB", "STATIC_ROOT",
             "DATABASE_URL")
PROBE = f"""
import json
NAMES = {PATH_SETTINGS!r}
from django.conf import settings as s
out = {{name: str(getattr(s, name)) for name in NAMES}}
out["DATABASE"] = str(s.DATABASES["default"].get("NAME", ""))
print(json.dumps(out))
"""


def _git(*args: str) -> list[str]:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    out = subprocess.run(["git", *args, "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    return [p for p in out.decode("utf-8", "surrogateescape").split("\0") if p]


def test_git_tracks_no_stray_runtime_files() -> None:
    tracked = [p for p in _git("ls-files") if STRAY_NAME.search(p)]
    assert tracked == [], f"run-time files are committed: {tracked}; git rm them"


def test_no_stray_runtime_file_waits_to_be_added() -> None:
    """Not ignored and not tracked: `git add -A` would commit it."""
    untracked = [p for p in _git("ls-files", "--others", "--exclude-standard")
                 if STRAY_NAME.search(p)]
    assert untracked == [], f"stray run-time files in the checkout: {untracked}"


def _settings(tmp_path: Path, *, writes_here: bool = False, **env: str) -> dict[str, str]:
    """The path settings as a fresh process sees them, run from an empty directory."""
    base = {k: v for k, v in os.environ.items() if k not in PATH_VARS}
    cwd = tmp_path / "cwd"
    cwd.mkdir(exist_ok=True)
    proc = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=cwd, capture_output=True, text=True, timeout=300,
        env={**base, "PYTHONPATH": str(ROOT), "DJANGO_SETTINGS_MODULE": "memoryui.settings",
             "SECRET_KEY": "hygiene-test", **env})
    assert proc.returncode == 0, proc.stderr
    if not writes_here:
        assert list(cwd.iterdir()) == [], "the settings wrote into the current directory"
    return json.loads(proc.stdout)


@pytest.mark.parametrize("unset", ["", *PATH_VARS[1:]])
def test_an_unset_or_empty_setting_never_becomes_a_path_of_its_own(tmp_path: Path,
                                                                    unset: str) -> None:
    """Every path setting is absolute and under MEMORYUI_VAR_DIR by default, whether the
    other variables are set, absent or set to an empty string."""
    var = tmp_path / "var"
    env = {"MEMORYUI_VAR_DIR": str(var)}
    if unset:
        env[unset] = ""
    seen = _settings(tmp_path, **env)
    assert seen["VAR_DIR"] == str(var)
    assert seen["MEMORYUI_WORKSPACE"] == str(var / "workspace")
    assert seen["MEMORYUI_SEARCH_DB"] == str(var / "search.sqlite3")
    assert seen["STATIC_ROOT"] == str(var / "staticfiles")
    assert seen["DATABASE"] == str(var / "db.sqlite3")


def test_an_empty_var_dir_means_the_default_not_the_current_directory(tmp_path: Path) -> None:
    seen = _settings(tmp_path, MEMORYUI_VAR_DIR="", MEMORYUI_WORKSPACE=str(tmp_path / "ws"),
                     MEMORYUI_SEARCH_DB=str(tmp_path / "s.sqlite3"),
                     STATIC_ROOT=str(tmp_path / "static"),
                     DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}")
    assert seen["VAR_DIR"] == str(ROOT / "var")
    for name, value in seen.items():
        path = Path(value)
        assert path.is_absolute(), (name, value)
        assert "None" not in path.parts and "null" not in path.parts, (name, value)


def test_relative_paths_are_made_absolute_once(tmp_path: Path) -> None:
    """A relative value is taken from where the process started, not re-read later from
    wherever the code happens to run."""
    seen = _settings(tmp_path, writes_here=True, MEMORYUI_VAR_DIR="rel-var",
                     MEMORYUI_WORKSPACE="rel-ws")
    cwd = tmp_path / "cwd"
    assert seen["VAR_DIR"] == str(cwd / "rel-var")
    assert seen["MEMORYUI_WORKSPACE"] == str(cwd / "rel-ws")
    assert all(Path(v).is_absolute() for v in seen.values())
