"""Finding a local PostgreSQL installation (tests and benchmarks start their own server)."""

from __future__ import annotations

import importlib.util
import os
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest


def pg_bindir() -> Path | None:
    """The folder with initdb/pg_ctl: from pg_config, else Debian's newest version."""
    found = shutil.which("pg_config")
    if found:
        out = subprocess.run([found, "--bindir"], capture_output=True, text=True).stdout.strip()
        if out and (Path(out) / "initdb").exists():
            return Path(out)
    versions = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"))
    return versions[-1].parent if versions else None


def pg_server() -> Iterator[str]:
    """A throwaway Postgres on 127.0.0.1 (the Postgres backend is tested for real)."""
    bindir = pg_bindir()
    if bindir is None or importlib.util.find_spec("psycopg") is None:
        pytest.skip("Postgres not installed: apt-get install -y postgresql; "
                    "pip install 'psycopg[binary]'")
    base = Path(tempfile.mkdtemp(prefix="memoryui-pg-"))
    as_user: list[str] = []
    if os.geteuid() == 0:  # initdb refuses root: run the server as the postgres user
        shutil.chown(base, "postgres")
        as_user = ["runuser", "-u", "postgres", "--"]
    data = base / "data"
    subprocess.run([*as_user, str(bindir / "initdb"), "-D", str(data), "-A", "trust", "-U",
                    "memoryui", "-E", "UTF8", "--no-sync"], check=True, capture_output=True)
    port = _start(as_user, bindir, base)
    try:
        yield f"postgresql://memoryui@127.0.0.1:{port}"
    finally:
        subprocess.run([*as_user, str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate",
                        "stop"], capture_output=True)
        shutil.rmtree(base, ignore_errors=True)


def _start(as_user: list[str], bindir: Path, base: Path) -> int:
    """Start the server on a free port; another process may take the port between our
    probe and the server's bind (xdist workers start theirs at once), so try a few."""
    for attempt in range(5):
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        started = subprocess.run(
            [*as_user, str(bindir / "pg_ctl"), "-D", str(base / "data"), "-l",
             str(base / "log"), "-w", "-t", "300", "-o",
             f"-k {base} -p {port} -c listen_addresses=127.0.0.1 -c fsync=off", "start"],
            capture_output=True, text=True)
        if started.returncode == 0:
            return port
        if attempt == 4:
            log = (base / "log").read_text() if (base / "log").exists() else ""
            raise RuntimeError(f"PostgreSQL did not start: {started.stderr}\n{log[-2000:]}")
    raise AssertionError("unreachable")


def pg_database(server: str) -> str:
    import psycopg

    name = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(f"{server}/postgres", autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return f"{server}/{name}"
