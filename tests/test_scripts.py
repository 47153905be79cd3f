"""The Quick start scripts install into the checkout's .venv, never the system's Python."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
QUICK_START = [ROOT / "scripts/run.sh", ROOT / "scripts/test.sh"]


def _lines(path: Path) -> list[str]:
    return [ln.strip() for ln in path.read_text().splitlines()
            if ln.strip() and not ln.strip().startswith("#")]


def test_both_quick_start_scripts_use_the_checkouts_venv() -> None:
    helper = _lines(ROOT / "scripts/venv.sh")
    assert "if ! python3 -m venv .venv; then" in helper
    assert any("apt-get install -y -qq python3-venv" in ln for ln in helper)
    assert 'PY="$PWD/.venv/bin/python"' in helper
    for script in QUICK_START:
        lines = _lines(script)
        assert ". scripts/venv.sh" in lines, script.name
        # Everything Python runs from .venv: pip, ruff, pytest, memoryui itself.
        for ln in lines:
            bare = re.sub(r'"\$PY" -m \w+|\.venv/bin/\w+', "", ln)
            assert not re.search(r"(^|[\s;&|(])(python3?|pip3?|pytest|ruff|mypy)\s", bare), ln
        assert any(ln.startswith('"$PY" -m pip install') for ln in lines), script.name


def test_nothing_is_installed_into_the_system_python() -> None:
    for path in [*QUICK_START, ROOT / "scripts/venv.sh", ROOT / ".ci/run"]:
        assert "PIP_BREAK_SYSTEM_PACKAGES" not in path.read_text(), path.name
        assert "playwright install" not in path.read_text(), path.name  # Debian's chromium


def test_ci_runs_the_test_script_verbatim() -> None:
    assert "bash scripts/test.sh" in _lines(ROOT / ".ci/run")
