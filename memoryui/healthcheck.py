"""`python -m memoryui.healthcheck [URL]`: exit 0 when the running server's /healthz says ok.

For container HEALTHCHECKs (the slim image has no curl). No Django import: it must be quick
and must not need the settings. The Host header is the first usable ALLOWED_HOSTS entry, so
the check passes Django's host validation whatever the operator allowed.
"""

from __future__ import annotations

import json
import os
import sys
import urllib.error
import urllib.request

DEFAULT_URL = "http://127.0.0.1:8000/healthz"


def host_header(allowed: str) -> str:
    """A Host value Django accepts for this ALLOWED_HOSTS (`.example.com` -> example.com)."""
    for entry in (h.strip() for h in allowed.split(",")):
        if entry and entry != "*":
            return entry.lstrip(".")
    return "localhost"


def check(url: str, allowed: str, timeout: float = 5.0) -> tuple[bool, str]:
    request = urllib.request.Request(url, headers={"Host": host_header(allowed)})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as resp:  # noqa: S310 - our URL
            body = json.loads(resp.read() or b"{}")
            return resp.status == 200 and body.get("ok") is True, f"{resp.status} {body}"
    except urllib.error.HTTPError as exc:
        return False, f"{exc.code} {exc.read()[:300]!r}"
    except (OSError, ValueError) as exc:
        return False, str(exc)


def main(argv: list[str]) -> int:
    url = argv[1] if len(argv) > 1 else DEFAULT_URL
    ok, detail = check(url, os.environ.get("ALLOWED_HOSTS", "localhost"))
    print(("healthy: " if ok else "unhealthy: ") + detail)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
