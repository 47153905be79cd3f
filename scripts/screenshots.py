"""Take the README's screenshots from a served demo workspace.

    python3 scripts/screenshots.py            # writes docs/screenshots/{overview,review,file}.png

It builds the demo (as `memoryui demo` does) in a temporary folder, serves it with
`manage.py serve`, signs in as the demo admin in Debian's Chromium through Playwright and
saves each page at 1360x900. Nothing outside the temporary folder and docs/screenshots/ is
touched.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from playwright.sync_api import Page, ViewportSize, sync_playwright

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "screenshots"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
VIEWPORT: ViewportSize = {"width": 1360, "height": 900}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_healthy(base: str, deadline_s: float = 90.0) -> None:
    """Poll /healthz until the server answers (a fresh start migrates first)."""
    end = time.monotonic() + deadline_s
    while True:
        try:
            with urllib.request.urlopen(f"{base}/healthz", timeout=5) as reply:
                if reply.status == 200:
                    return
        except OSError:
            if time.monotonic() > end:
                raise
        time.sleep(0.5)


def pages(root: Path) -> dict[str, str]:
    """The pages to take: the overview, the review queue and a rendered daily log."""
    log = sorted((root / "agents/ops-bot/memory/daily").iterdir())[-1].name
    return {
        "overview": "/",
        "review": "/review/",
        "file": f"/f/agents/ops-bot/memory/daily/{log}",
    }


def take(page: Page, base: str, name: str, path: str) -> None:
    page.goto(base + path)
    page.wait_for_load_state("networkidle")
    page.screenshot(path=str(OUT / f"{name}.png"), full_page=False)
    print(f"docs/screenshots/{name}.png  <- {path}")


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="memoryui-shots-") as tmp:
        var = Path(tmp) / "var"
        env = {**os.environ, "MEMORYUI_VAR_DIR": str(var),
               "MEMORYUI_WORKSPACE": str(var / "workspace"), "PYTHONPATH": str(ROOT)}
        manage = [sys.executable, str(ROOT / "manage.py")]
        subprocess.run([*manage, "demo"], env=env, check=True, cwd=ROOT)
        user, password = (var / "demo-login.txt").read_text().split("\n")[:2]
        base = f"http://127.0.0.1:{free_port()}"
        server = subprocess.Popen([*manage, "serve", "--bind", base[len("http://"):],
                                   "--workers", "1"], env=env, cwd=ROOT)
        try:
            wait_healthy(base)
            OUT.mkdir(parents=True, exist_ok=True)
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=CHROMIUM,
                                             args=["--headless=new", "--no-sandbox"])
                page = browser.new_context(viewport=VIEWPORT).new_page()
                page.goto(f"{base}/accounts/login/")
                page.fill("input[name=username]", user)
                page.fill("input[name=password]", password)
                page.click("button[type=submit], input[type=submit]")
                page.wait_for_url(lambda url: "/accounts/login/" not in url)
                for name, path in pages(var / "workspace").items():
                    take(page, base, name, path)
                browser.close()
        finally:
            server.terminate()
            server.wait(timeout=30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
