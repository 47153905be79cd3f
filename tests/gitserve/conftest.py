from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.api.realserver import RealServer


@contextmanager
def running_remote(tmp: Path, env: dict[str, str] | None = None) -> Iterator[RealServer]:
    """A server (a few MB is the size limit) with host tokens, seeded by an agent."""
    server = RealServer(tmp, workers=2, env={"MEMORYUI_MAX_BODY": str(1024 * 1024),
                                             "MEMORYUI_PASSWORD": "lead-password-1",
                                             **(env or {})})
    server.migrate()
    server.tokens = {  # type: ignore[attr-defined]
        "alpha": server.token("alpha"),
        "host": server.token("--git", "--scopes", "alpha,bravo", "--world", "--name", "dagu-1"),
        "other": server.token("--git", "--scopes", "charlie", "--name", "zs-2"),
    }
    server.manage("user", "lead", "--role", "curator")
    with server:
        server.start()
        status, body = server.call_tool(server.tokens["alpha"], "alpha", "reflect",  # type: ignore[attr-defined]
                                        {"content": "# alpha\n\nseeded by the agent\n"})
        assert status == 200, body
        yield server


@pytest.fixture(scope="module")
def remote(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealServer]:
    """One server for a module's tests."""
    with running_remote(tmp_path_factory.mktemp("gitremote")) as server:
        yield server
