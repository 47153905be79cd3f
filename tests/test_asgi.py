"""The ASGI entry point: a worker loads what requests need while it starts, so the first
request to each worker does not pay for it (with four workers, that first request came
whenever the kernel first handed a worker a connection: in the middle of an agent's run)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

STARTUP = """
import asyncio, sys
import memoryui.asgi as asgi
loaded = set(sys.modules)
messages = [{"type": "lifespan.startup"}, {"type": "lifespan.shutdown"}]
sent = []

async def receive():
    return messages.pop(0)

async def send(message):
    sent.append(message["type"])

asyncio.run(asgi.application({"type": "lifespan"}, receive, send))
print(sent)
for name in ("memoryui.urls", "memoryui.api.tools", "memoryui.web.browse.views"):
    print(name, name in loaded, name in sys.modules)
"""


def _start_and_stop(script: str, tmp_path: Path) -> list[str]:
    """What `script` prints after a worker's start and stop in a fresh interpreter."""
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "memoryui.settings",
           "MEMORYUI_VAR_DIR": str(tmp_path / "var"),
           "MEMORYUI_WORKSPACE": str(tmp_path / "ws")}
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                         text=True, timeout=120, cwd=Path(__file__).resolve().parents[1])
    assert out.returncode == 0, out.stderr
    return out.stdout.splitlines()


def test_a_worker_has_its_views_loaded_before_its_first_request(tmp_path: Path) -> None:
    lines = _start_and_stop(STARTUP, tmp_path)
    assert lines[0] == "['lifespan.startup.complete', 'lifespan.shutdown.complete']"
    # Not loaded by importing the application, loaded once it has started.
    assert lines[1:] == ["memoryui.urls False True", "memoryui.api.tools False True",
                         "memoryui.web.browse.views False True"]


def test_a_started_worker_leaves_search_by_meaning_and_served_git_unloaded(
        tmp_path: Path) -> None:
    """numpy (search by meaning's math, 14 MB) and served git's code load on first use, so
    every worker that never embeds text or serves git is that much smaller."""
    script = STARTUP.replace(
        '("memoryui.urls", "memoryui.api.tools", "memoryui.web.browse.views")',
        '("numpy", "memoryui.gitserve.app", "memoryui.review.meaning")')
    # the review pages' meaning code is loaded (the views import it), its numpy is not
    assert _start_and_stop(script, tmp_path)[1:] == ["numpy False False",
                                           "memoryui.gitserve.app False False",
                                           "memoryui.review.meaning False True"]
