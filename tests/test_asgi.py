"""The ASGI entry point: a worker loads what requests need while it starts, so the first
request to each worker does not pay for it (with four workers, that first request came
whenever the kernel first handed a worker a connection: in the middle of an agent's run)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.api.realserver import RealServer

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


def _proxied(tmp: Path, allow: str) -> RealServer:
    """`serve` (its uvicorn reads no proxy headers, as granian reads none), a lead, and
    three failed sign-ins before an address or a name is refused."""
    server = RealServer(tmp, workers=1, env={"FORWARDED_ALLOW_IPS": allow,
                                             "MEMORYUI_LOGIN_FAILURES": "3",
                                             "MEMORYUI_PASSWORD": "lead-password-1"})
    server.migrate()
    server.manage("user", "lead", "--role", "curator")
    return server


def _mallory_fails_three_times(server: RealServer) -> None:
    answers = [server.try_sign_in("mallory", "guess", {"X-Forwarded-For": MALLORY}).status
               for _ in range(3)]
    assert answers == [200, 200, 429]  # the third failure locks


MALLORY, LEAD = "198.51.100.7", "203.0.113.5"


def test_behind_a_trusted_proxy_each_client_has_its_own_address_and_scheme(
        tmp_path: Path) -> None:
    with _proxied(tmp_path, "127.0.0.1,::1") as server:
        server.start()
        _mallory_fails_three_times(server)
        # Mallory's address is refused, even with the lead's password; the lead, coming
        # through the same proxy from elsewhere, signs in.
        refused = server.try_sign_in("lead", "lead-password-1", {"X-Forwarded-For": MALLORY})
        assert refused.status == 429
        done = server.try_sign_in("lead", "lead-password-1",
                                  {"X-Forwarded-For": f"{MALLORY}, {LEAD}"})  # proxy appended
        assert done.status == 302
        # Behind TLS, the links memoryui builds say https.
        session = f"sessionid={done.cookies()['sessionid']}"
        page = server.send("GET", "/activity/", headers={
            "Cookie": session, "X-Forwarded-For": LEAD, "X-Forwarded-Proto": "https"})
        assert page.status == 200
        assert f"https://127.0.0.1:{server.port}/activity.atom" in page.body.decode()


def test_a_peer_that_is_not_a_trusted_proxy_cannot_choose_its_address(tmp_path: Path) -> None:
    with _proxied(tmp_path, "192.0.2.1") as server:
        server.start()
        _mallory_fails_three_times(server)  # counted against 127.0.0.1, the real peer
        refused = server.try_sign_in("lead", "lead-password-1", {"X-Forwarded-For": LEAD})
        assert refused.status == 429
