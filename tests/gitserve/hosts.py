"""Helpers for the git-remote tests: a real `serve` with host tokens, and hosts that are
real git clones talking smart HTTP to it (credentials through git's credential store)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.api.realserver import RealServer

GIT_TIMEOUT = 300.0  # bounds a hang only


def git(cwd: Path, *args: str, check: bool = True, env: dict[str, str] | None = None
        ) -> subprocess.CompletedProcess:
    out = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True,
                         timeout=GIT_TIMEOUT, env={**os.environ, "GIT_TERMINAL_PROMPT": "0",
                                                   **(env or {})})
    if check and out.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed:\n{out.stderr}")
    return out


class Host:
    """An agent host: a clone of /git/workspace.git with its token in a credential store."""

    def __init__(self, server: RealServer, token: str, folder: Path, name: str = "host"):
        self.server = server
        self.folder = folder
        self.name = name
        self.url = f"{server.base_url}/git/workspace.git"
        creds = folder.parent / f"{folder.name}.credentials"
        creds.write_text(f"http://{name}:{token}@127.0.0.1:{server.port}\n")
        creds.chmod(0o600)
        self.config = ["-c", f"credential.helper=store --file={creds}",
                       "-c", f"user.name={name}", "-c", f"user.email={name}@hosts.example"]

    def git(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        return git(self.folder, *self.config, *args, check=check)

    def clone(self) -> subprocess.CompletedProcess:
        return git(self.folder.parent, *self.config, "clone", self.url, self.folder.name)

    def commit(self, files: dict[str, str | bytes | None], message: str = "host change"
               ) -> str:
        for path, content in files.items():
            full = self.folder / path
            if content is None:
                full.unlink()
                continue
            full.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                full.write_bytes(content)
            else:
                full.write_text(content)
        self.git("add", "-A")
        self.git("commit", "-q", "-m", message)
        return self.git("rev-parse", "HEAD").stdout.strip()

    def push(self, *extra: str) -> subprocess.CompletedProcess:
        return self.git("push", *extra, "origin", "HEAD:main", check=False)


def workspace_has(ws: Path, sha: str) -> bool:
    """Whether the server's repository holds object `sha` (quarantine dropped or not)."""
    return git(ws, "cat-file", "-e", sha, check=False).returncode == 0
