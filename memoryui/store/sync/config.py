"""What a sync talks to (the remote), and keeping its password out of every message."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

from ..errors import Conflicting, Missing, StoreError

PUSH_MODES = ("auto", "manual")
MASK = "***"

# scheme://userinfo@host: the userinfo of any URL in a text, whatever git printed. The
# userinfo runs to the LAST `@` before the path: a password may hold unencoded `@`s.
_URL_USERINFO = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)(?P<info>[^/\s'\"]+)@")


class SyncError(StoreError):
    """A sync step failed; the message is already free of passwords."""

    code = "sync_error"
    status = 502


class NoSuchConflict(Missing, SyncError):
    """The path has no open sync conflict (resolved meanwhile, or never conflicted)."""


class ConflictChanged(Conflicting, SyncError):
    """The remote edited a conflicted file again since the curator loaded it."""


class ConflictOpen(Conflicting, SyncError):
    """A file with an open sync conflict cannot be published before it is resolved."""


@dataclass(frozen=True)
class RemoteConfig:
    """MEMORYUI_REMOTE and friends; the URL may carry credentials git understands."""

    url: str
    branch: str | None = None  # None: the remote's default branch, else main
    interval: float = 30.0  # seconds between background rounds (0: on demand only)
    push: str = "auto"  # auto | manual
    timeout: float = 120.0  # seconds one git network command may take

    def __post_init__(self) -> None:
        if not self.url.strip():
            raise SyncError("MEMORYUI_REMOTE is empty")
        if self.push not in PUSH_MODES:
            raise SyncError(f"MEMORYUI_SYNC_PUSH must be auto or manual, not {self.push!r}")
        if self.branch is not None and not valid_branch(self.branch):
            raise SyncError(f"MEMORYUI_REMOTE_BRANCH {self.branch!r} is not a branch name")
        if self.interval < 0:
            raise SyncError("MEMORYUI_SYNC_INTERVAL must be 0 or more seconds")

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> RemoteConfig | None:
        """The configuration from environment-style settings; None when no remote is set."""
        url = (env.get("MEMORYUI_REMOTE") or "").strip()
        if not url:
            return None
        try:
            interval = float(env.get("MEMORYUI_SYNC_INTERVAL") or 30)
            timeout = float(env.get("MEMORYUI_SYNC_TIMEOUT") or 120)
        except ValueError:
            raise SyncError("MEMORYUI_SYNC_INTERVAL and MEMORYUI_SYNC_TIMEOUT are seconds") from None
        return cls(url, (env.get("MEMORYUI_REMOTE_BRANCH") or "").strip() or None, interval,
                   (env.get("MEMORYUI_SYNC_PUSH") or "auto").strip().lower(), timeout)

    def display_url(self) -> str:
        """The URL as pages and logs show it: any password replaced by ***."""
        return mask_secrets(self.url, self.url)

    def mask(self, text: str) -> str:
        return mask_secrets(text, self.url)


def valid_branch(name: str) -> bool:
    return bool(re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._/-]{0,200}", name)) and ".." not in name \
        and not name.endswith((".lock", "/", ".")) and "//" not in name


def secrets_of(url: str | None) -> list[str]:
    """The strings of a URL that must never be shown: its password (raw and decoded),
    and for http(s) a lone user name, which is how tokens are usually passed."""
    if not url:
        return []
    m = _URL_USERINFO.match(url.strip())
    if not m:
        return []
    user, sep, password = m.group("info").partition(":")
    found = [password] if sep else []
    if not sep and m.group("scheme").lower() in ("http://", "https://"):
        found = [user]
    # git splits such a URL at the FIRST `@` and may echo the rest as a host name
    # ("Could not resolve host: ss@w0rd@host"): each piece after an `@` is secret too.
    found += [s.split("@", i)[-1] for s in list(found) for i in range(1, s.count("@") + 1)]
    out = []
    for s in found:
        for v in (s, unquote(s)):
            if len(v) >= 3 and v not in out:
                out.append(v)
    return sorted(out, key=len, reverse=True)


def mask_secrets(text: str, url: str | None = None) -> str:
    """`text` with every URL password masked, and `url`'s secrets masked wherever they occur.

    git echoes URLs in its errors ("unable to access 'https://u:pw@host/'"), so every
    message that leaves the sync package goes through here.
    """
    if not text:
        return text
    for secret in secrets_of(url):
        text = text.replace(secret, MASK)

    def userinfo(m: re.Match[str]) -> str:
        user, sep, _password = m.group("info").partition(":")
        if sep:
            return f"{m.group('scheme')}{user}:{MASK}@"
        if m.group("scheme").lower() in ("http://", "https://"):
            return f"{m.group('scheme')}{MASK}@"
        return m.group(0)

    return _URL_USERINFO.sub(userinfo, text)


def host_of(url: str) -> str:
    """A short name for the remote in commit messages (no credentials, no path)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "remote"
    return parts.hostname or "remote"
