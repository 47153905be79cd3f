"""The shipped deployment files. The proxy configurations, `deploy/nginx.conf` and
`deploy/Caddyfile`, run by Debian's nginx and Caddy in front of a real server: TLS ends in
the proxy; memoryui builds https links, sees the client the proxy saw (not an address the
client names itself), over TCP and over a unix socket, and takes hosts' git pushes larger
than any page body, streamed through. The systemd units load in systemd without a key it
would ignore."""

from __future__ import annotations

import http.client
import os
import random
import shutil
import sqlite3
import ssl
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.api.realserver import RealServer, Reply, free_port, sign_in_form
from tests.gitserve.hosts import git
from tests.waiting import wait_for

ROOT = Path(__file__).resolve().parents[1]
PROGRAMS = {"nginx": shutil.which("nginx") or "/usr/sbin/nginx",
            "caddy": shutil.which("caddy") or "/usr/bin/caddy"}
PROXIES = [pytest.param(kind, marks=pytest.mark.skipif(not Path(program).exists(),
                                                        reason=f"{kind} is not installed"))
           for kind, program in PROGRAMS.items()]


class Proxied:
    """nginx or Caddy on 127.0.0.1:`port` with a certificate of its own, in front of
    `server` (or of the unix `socket` it listens on), run from the shipped file with only
    the addresses and certificate changed."""

    def __init__(self, kind: str, server: RealServer, tmp: Path,
                 socket: Path | None = None) -> None:
        self.kind, self.server, self.tmp, self.socket = kind, server, tmp, socket
        self.port, self.plain_port = free_port(), free_port()
        self.base = f"https://127.0.0.1:{self.port}"
        self.cert, self.key = tmp / "proxy.pem", tmp / "proxy.key"
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days",
                        "2", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                        "-keyout", str(self.key), "-out", str(self.cert)],
                       check=True, capture_output=True, timeout=120)
        self.tls = ssl.create_default_context(cafile=str(self.cert))

    def _upstream(self, unix: str) -> str:
        return f"{unix}{self.socket}" if self.socket else f"127.0.0.1:{self.server.port}"

    def _shipped(self, name: str, changes: tuple[tuple[str, str], ...]) -> str:
        text = (ROOT / "deploy" / name).read_text()
        for old, new in changes:
            assert text.count(old) == 1, f"deploy/{name} no longer has {old!r}"
            text = text.replace(old, new)
        return text

    def _nginx(self) -> list[str]:
        site = self._shipped("nginx.conf", (
            ("server 127.0.0.1:8000;", f"server {self._upstream('unix:')};"),
            ("listen 443 ssl", f"listen 127.0.0.1:{self.port} ssl"),
            ("listen 80;", f"listen 127.0.0.1:{self.plain_port};"),
            ("/etc/ssl/memory.example.com.pem", str(self.cert)),
            ("/etc/ssl/memory.example.com.key", str(self.key))))
        (self.tmp / "site.conf").write_text(site)
        temp = " ".join(f"{kind}_temp_path {self.tmp / kind};"
                        for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
        (self.tmp / "nginx.conf").write_text(
            ("user root;\n" if os.geteuid() == 0 else "")
            + f"daemon off; worker_processes 1; pid {self.tmp / 'nginx.pid'};\n"
            f"error_log {self.tmp / 'proxy.log'};\n"
            "events { worker_connections 256; }\n"
            f"http {{ access_log off; {temp} include {self.tmp / 'site.conf'}; }}\n")
        return [PROGRAMS["nginx"], "-p", str(self.tmp), "-c", str(self.tmp / "nginx.conf"),
                "-e", str(self.tmp / "proxy.log")]  # (not the system's log, before the file's)

    def _caddy(self) -> list[str]:
        # No admin endpoint and no port 80 (tests run side by side), this certificate.
        site = self._shipped("Caddyfile", (
            ("memory.example.com {", "{\n\tadmin off\n\tauto_https disable_redirects\n}\n"
             f"https://127.0.0.1:{self.port} {{\n\ttls {self.cert} {self.key}"),
            ("reverse_proxy 127.0.0.1:8000", f"reverse_proxy {self._upstream('unix/')}")))
        (self.tmp / "Caddyfile").write_text(site)
        return [PROGRAMS["caddy"], "run", "--adapter", "caddyfile",
                "--config", str(self.tmp / "Caddyfile")]

    @contextmanager
    def running(self) -> Iterator[Proxied]:
        command = self._nginx() if self.kind == "nginx" else self._caddy()
        home = {"HOME": str(self.tmp), "XDG_DATA_HOME": str(self.tmp),
                "XDG_CONFIG_HOME": str(self.tmp)}  # Caddy's own files
        with (self.tmp / "proxy.out").open("wb") as out:
            proc = subprocess.Popen(command, env={**os.environ, **home}, stdout=out,
                                    stderr=subprocess.STDOUT)
        try:
            wait_for(f"{self.kind} to answer", lambda: self._answers(proc), timeout=120)
            yield self
        finally:
            proc.terminate()
            proc.wait(60)

    def _answers(self, proc: subprocess.Popen) -> bool:
        if proc.poll() is not None:
            logs = [p.read_text() for p in (self.tmp / "proxy.out", self.tmp / "proxy.log")
                    if p.exists()]
            raise AssertionError(f"{self.kind} stopped:\n" + "\n".join(logs))
        try:
            return self.send("GET", "/healthz").status == 200
        except OSError:
            return False

    def send(self, method: str, path: str, body: bytes | None = None,
             headers: dict[str, str] | None = None) -> Reply:
        conn = http.client.HTTPSConnection("127.0.0.1", self.port, context=self.tls, timeout=120)
        try:
            conn.request(method, path, body=body, headers=headers or {})
            reply = conn.getresponse()
            return Reply(reply.status, reply.headers, reply.read())
        finally:
            conn.close()

    def sign_in(self, name: str, password: str, headers: dict[str, str]) -> tuple[int, str]:
        """The login form's status, and the session cookie when it signed in."""
        done = sign_in_form(self.send, self.base, name, password, headers)
        session = done.cookies().get("sessionid")
        return done.status, f"sessionid={session}" if session else ""


def _server(tmp: Path) -> RealServer:
    server = RealServer(tmp / "server", workers=1, env={
        "MEMORYUI_LOGIN_FAILURES": "3", "MEMORYUI_PASSWORD": "lead-password-1"})
    server.migrate()
    server.manage("user", "lead", "--role", "curator")
    server.tokens = {"alpha": server.token("alpha"),  # type: ignore[attr-defined]
                     "host": server.token("--git", "--scopes", "alpha", "--name", "dagu-1")}
    return server


@contextmanager
def behind(kind: str, tmp: Path) -> Iterator[Proxied]:
    server = _server(tmp)
    with server:
        server.start()
        with Proxied(kind, server, tmp).running() as proxied:
            yield proxied


@contextmanager
def behind_a_socket(kind: str, tmp: Path) -> Iterator[Proxied]:
    """Stock uvicorn on a unix socket (docs/deployment.md, "A proxy in front"), which only
    `FORWARDED_ALLOW_IPS=*` trusts: a peer on a socket has no address to name."""
    server = _server(tmp)
    folder = Path(tempfile.mkdtemp(prefix="memoryui-uds-"))  # (a socket's path: 107 bytes)
    socket = folder / "web.sock"
    with (tmp / "uvicorn.log").open("wb") as log:
        web = subprocess.Popen(
            [sys.executable, "-m", "uvicorn", "memoryui.asgi:application", "--uds",
             str(socket), "--workers", "1"], cwd=ROOT,
            env={**server.env, "FORWARDED_ALLOW_IPS": "*"}, stdout=log, stderr=subprocess.STDOUT)
    try:
        with Proxied(kind, server, tmp, socket).running() as proxied:
            yield proxied
    finally:
        web.terminate()
        web.wait(60)
        shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.parametrize("kind", PROXIES)
def test_memoryui_behind_a_proxy_builds_https_links_and_sees_the_client_the_proxy_saw(
        kind: str, tmp_path: Path) -> None:
    with behind(kind, tmp_path) as proxy:
        _sees_https_and_the_client(kind, proxy)


@pytest.mark.parametrize("kind", PROXIES)
def test_memoryui_on_a_unix_socket_behind_a_proxy_trusts_it_with_a_star(
        kind: str, tmp_path: Path) -> None:
    with behind_a_socket(kind, tmp_path) as proxy:
        _sees_https_and_the_client(kind, proxy)
    failures = sqlite3.connect(proxy.server.tmp / "db.sqlite3")
    try:  # the lockout counted the address the proxy saw, not one the client named
        assert {ip for (ip,) in failures.execute("SELECT ip_address FROM axes_accessattempt")
                } == {"127.0.0.1"}
    finally:
        failures.close()


def _sees_https_and_the_client(kind: str, proxy: Proxied) -> None:
    status, session = proxy.sign_in("lead", "lead-password-1", {})
    assert status == 302 and session
    page = proxy.send("GET", "/activity/", headers={"Cookie": session})
    assert page.status == 200
    assert f"{proxy.base}/activity.atom" in page.body.decode()  # the feed's address: https
    if kind == "nginx":  # plain HTTP only redirects (Caddy's own redirect is on port 80)
        plain = http.client.HTTPConnection("127.0.0.1", proxy.plain_port, timeout=60)
        plain.request("GET", "/activity/")
        moved = plain.getresponse()
        assert (moved.status, moved.headers["Location"]) == (
            301, "https://127.0.0.1/activity/")
        plain.close()
    # A client that names an address of its own in X-Forwarded-For is still the
    # address the proxy saw: its failures lock that address, whatever it names next.
    answers = [proxy.sign_in("mallory", "guess", {"X-Forwarded-For": "203.0.113.9"})[0]
               for _ in range(3)]
    assert answers == [200, 200, 429]
    assert proxy.sign_in("lead", "lead-password-1",
                         {"X-Forwarded-For": "198.51.100.1"})[0] == 429


def _words(rng: random.Random, size: int) -> str:
    """`size` bytes of prose-like text that compresses about as badly as text can."""
    letters = "abcdefghijklmnopqrstuvwxyz"
    out, total = [], 0
    while total < size:
        word = "".join(rng.choice(letters) for _ in range(rng.randint(2, 9)))
        out.append(word)
        total += len(word) + 1
    return " ".join(out)[:size - 1] + "\n"


@pytest.mark.parametrize("kind", PROXIES)
def test_a_host_pushes_more_than_a_page_body_through_a_proxy(kind: str, tmp_path: Path
                                                             ) -> None:
    with behind(kind, tmp_path) as proxy:
        server = proxy.server
        status, body = server.call_tool(server.tokens["alpha"], "alpha", "reflect",  # type: ignore[attr-defined]
                                        {"content": "# alpha\n\nseeded by the agent\n"})
        assert status == 200, body
        creds = tmp_path / "host.credentials"
        creds.write_text(f"https://dagu-1:{server.tokens['host']}@127.0.0.1:{proxy.port}\n")  # type: ignore[attr-defined]
        creds.chmod(0o600)
        config = ["-c", f"credential.helper=store --file={creds}",
                  "-c", "user.name=dagu-1", "-c", "user.email=dagu-1@hosts.example"]
        wait_for("the seed commit", lambda: git(server.workspace, "rev-parse", "HEAD",
                                                check=False).returncode == 0, timeout=120)
        tls = {"GIT_SSL_CAINFO": str(proxy.cert)}  # (the variable outranks git's config)
        git(tmp_path, *config, "clone", f"{proxy.base}/git/workspace.git", "host", env=tls)
        host = tmp_path / "host"
        assert "seeded by the agent" in (host / "agents/alpha/memory/MEMORY.md").read_text()
        rng = random.Random(7)
        notes = {f"agents/alpha/memory/notes/survey-{i}.md": _words(rng, 900_000)
                 for i in range(6)}  # each under MEMORYUI_MAX_BODY; the pack near 3 MB
        for path, text in notes.items():
            (host / path).parent.mkdir(parents=True, exist_ok=True)
            (host / path).write_text(text)
        git(host, *config, "add", "-A")
        git(host, *config, "commit", "-qm", "dagu: the survey")
        sha = git(host, "rev-parse", "HEAD").stdout.strip()
        pushed = git(host, *config, "push", "origin", "HEAD:main", check=False, env=tls)
        assert pushed.returncode == 0, pushed.stderr
        assert git(server.workspace, "rev-parse", "HEAD").stdout.strip() == sha
        for path, text in notes.items():
            assert (server.workspace / path).read_text() == text


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd is not installed")
def test_the_systemd_units_load_with_every_setting_they_name(tmp_path: Path) -> None:
    """A key in the wrong section is skipped with only a line in the journal: a restart
    limit that systemd ignored would let a crashing server loop for ever."""
    env = tmp_path / "env"
    env.write_text("MEMORYUI_WORKSPACE=/srv/memory\n")
    for unit in ("memoryui-committer.service", "memoryui-web.service"):
        text = (ROOT / "deploy" / unit).read_text()
        text = (text.replace("/opt/memoryui/.venv/bin/python", sys.executable)
                .replace("/opt/memoryui", str(ROOT)).replace("/etc/memoryui/env", str(env)))
        (tmp_path / unit).write_text(text)
    checked = subprocess.run(
        ["systemd-analyze", "verify", "--man=no", "./memoryui-committer.service",
         "./memoryui-web.service"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert checked.returncode == 0, checked.stderr
    assert checked.stdout + checked.stderr == ""
