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
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    data = base / "data"
    subprocess.run([*as_user, str(bindir / "initdb"), "-D", str(data), "-A", "trust", "-U",
                    "memoryui", "-E", "UTF8", "--no-sync"], check=True, capture_output=True)
    subprocess.run([*as_user, str(bindir / "pg_ctl"), "-D", str(data), "-l",
                    str(base / "log"), "-w", "-o",
                    f"-k {base} -p {port} -c listen_addresses=127.0.0.1 -c fsync=off",
                    "start"], check=True, capture_output=True)
    try:
        yield f"postgresql://memoryui@127.0.0.1:{port}"
    finally:
        subprocess.run([*as_user, str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate",
                        "stop"], capture_output=True)
        shutil.rmtree(base, ignore_errors=True)


def pg_database(server: str) -> str:
    import psycopg

    name = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(f"{server}/postgres", autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return f"{server}/{name}"
