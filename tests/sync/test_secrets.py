"""A remote URL's password never shows: errors, status, state files, logs, command output.

The remote is real smart HTTP with Basic auth (git http-backend on 127.0.0.1).
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

from memoryui.store import Store
from memoryui.store.sync import RemoteConfig, Syncer, bootstrap, mask_secrets
from tests.sync.helpers import at, remember
from tests.sync_fixtures import HttpGit, free_port, make_bare, tip

SECRET = "s3cret-pw-4711"
WRONG = "not-the-pw-9313"
ROOT = Path(__file__).resolve().parents[2]


def test_mask_secrets_covers_what_git_prints() -> None:
    url = f"https://alice:{SECRET}@git.example.com/team/memory.git"
    assert RemoteConfig(url).display_url() == "https://alice:***@git.example.com/team/memory.git"
    msg = f"fatal: unable to access '{url}/': The requested URL returned error: 403"
    assert SECRET not in mask_secrets(msg, url)
    assert SECRET not in mask_secrets(f"password was {SECRET}", url)  # anywhere, not only URLs
    assert "s3cret%2Dpw" not in mask_secrets("x s3cret%2Dpw-4711", "https://a:s3cret%2Dpw-4711@h/")
    # Any URL in a text loses its password even without knowing it; a token user too.
    assert mask_secrets("see https://bob:hunter22@h/x.git") == "see https://bob:***@h/x.git"
    assert mask_secrets("https://ghp_tokenvalue123@github.com/x") == "https://***@github.com/x"
    assert mask_secrets("ssh://git@host/x.git") == "ssh://git@host/x.git"  # a user is no secret


def test_a_password_url_syncs_and_never_shows_the_password(tmp_path, caplog) -> None:
    make_bare(tmp_path / "srv" / "memory.git")
    caplog.set_level(logging.INFO, logger="memoryui")
    with HttpGit(tmp_path / "srv", password=SECRET) as http:
        config = RemoteConfig(http.url("memory.git"))
        assert bootstrap(tmp_path / "a", config) == "ready"
        store = Store(tmp_path / "a")
        syncer = Syncer(store, config)
        remember(store, "ops", "over authenticated http", at(9, 0))
        r = syncer.round(blocking=True)
        assert (r.error, r.pushed) == (None, True)
        assert tip(tmp_path / "srv" / "memory.git") == store.head()
        st = syncer.status()
        assert st.url == f"http://alice:***@127.0.0.1:{http.port}/memory.git"
        assert st.state == "synced"

        bad = Syncer(store, RemoteConfig(http.url("memory.git", password=WRONG)))
        r = bad.round(blocking=True)
        assert r.error and "git fetch" in r.error and "alice:***@" in r.error
        st = bad.status()
        assert st.state == "failing"
        texts = [r.error, r.summary(), repr(st), st.label, caplog.text]
        texts += [p.read_text(errors="replace") for p in (tmp_path / "a" / ".git").rglob("*")
                  if p.is_file() and p.stat().st_size < 1_000_000]
        for text in texts:
            assert SECRET not in text and WRONG not in text
        store.close()


def test_an_unreachable_password_url_is_masked(tmp_path) -> None:
    url = f"http://alice:{SECRET}@127.0.0.1:{free_port()}/memory.git"
    store = Store(tmp_path / "a")
    r = Syncer(store, RemoteConfig(url, branch="main")).round(blocking=True)
    assert r.error and SECRET not in r.error and "alice:***@" in r.error
    store.close()


def _manage(tmp_path: Path, remote: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MEMORYUI_REMOTE": remote, "MEMORYUI_VAR_DIR": str(tmp_path / "var"),
           "MEMORYUI_WORKSPACE": str(tmp_path / "ws"),
           "MEMORYUI_SEARCH_DB": str(tmp_path / "search.sqlite3"), "LOG_LEVEL": "DEBUG"}
    env.pop("DATABASE_URL", None)
    return subprocess.run([sys.executable, "manage.py", "sync", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)


def test_manage_py_sync_prints_a_summary_never_the_password(tmp_path) -> None:
    make_bare(tmp_path / "srv" / "memory.git")
    (tmp_path / "var").mkdir()
    with HttpGit(tmp_path / "srv", password=SECRET) as http:
        ok = _manage(tmp_path, http.url("memory.git"))
        assert ok.returncode == 0, ok.stderr
        assert ok.stdout.strip() == "sync: up to date"
        status = _manage(tmp_path, http.url("memory.git"), "--status")
        assert status.returncode == 0
        assert f"alice:***@127.0.0.1:{http.port}" in status.stdout
        assert "state:      synced" in status.stdout

        store = Store(tmp_path / "ws")  # an agent wrote something meanwhile
        remember(store, "ops", "to be pushed", at(9, 0))
        store.close()
        failed = _manage(tmp_path, http.url("memory.git", password=WRONG))
        assert failed.returncode != 0
        assert "FAILED" in failed.stderr and "alice:***@" in failed.stderr
        status = _manage(tmp_path, http.url("memory.git", password=WRONG), "--status")
        assert "state:      failing" in status.stdout
        assert "last error: git fetch http://alice:***@" in status.stdout
        pushed = _manage(tmp_path, http.url("memory.git"))
        assert pushed.stdout.strip() == "sync: pushed"
        for proc in (ok, status, failed, pushed):
            for text in (proc.stdout, proc.stderr):
                assert SECRET not in text and WRONG not in text


def test_a_password_with_unencoded_at_signs_is_masked_whole(tmp_path, caplog) -> None:
    """`user:p@ss@w0rd@host`: everything between `//` and the authority's last `@` is secret."""
    at_secret = "p@ss@w0rd-4711"
    url = f"https://alice:{at_secret}@git.example.com/team/memory.git"
    assert RemoteConfig(url).display_url() == "https://alice:***@git.example.com/team/memory.git"
    assert mask_secrets(f"see {url}") == "see https://alice:***@git.example.com/team/memory.git"
    make_bare(tmp_path / "srv" / "memory.git")
    caplog.set_level(logging.INFO, logger="memoryui")
    with HttpGit(tmp_path / "srv", password=at_secret) as http:
        syncer = Syncer(Store(tmp_path / "a"), RemoteConfig(http.url("memory.git"), branch="main"))
        remember(syncer.store, "ops", "over authenticated http", at(9, 0))
        r = syncer.round(blocking=True)
        st = syncer.status()
        assert st.url == f"http://alice:***@127.0.0.1:{http.port}/memory.git"
        texts = [r.error or "", r.summary(), repr(st), st.label, caplog.text]
        texts += [p.read_text(errors="replace") for p in (tmp_path / "a" / ".git").rglob("*")
                  if p.is_file() and p.stat().st_size < 1_000_000]
        for text in texts:
            for piece in ("p@ss", "ss@w0rd", "w0rd-4711"):
                assert piece not in text, text
        syncer.store.close()
