"""The detector: Yelp's detect-secrets plugins run line by line, offline.

Only the plugins that look for a known shape of credential run (keys, tokens, private
keys, JWTs, passwords in URLs): the entropy and keyword plugins flag ordinary prose and
ids in markdown, and public IPs are not secrets in an ops log. `analyze_string` is called
directly, so no plugin ever verifies a token over the network.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass

from detect_secrets.plugins.artifactory import ArtifactoryDetector
from detect_secrets.plugins.aws import AWSKeyDetector
from detect_secrets.plugins.azure_storage_key import AzureStorageKeyDetector
from detect_secrets.plugins.basic_auth import BasicAuthDetector
from detect_secrets.plugins.cloudant import CloudantDetector
from detect_secrets.plugins.discord import DiscordBotTokenDetector
from detect_secrets.plugins.github_token import GitHubTokenDetector
from detect_secrets.plugins.gitlab_token import GitLabTokenDetector
from detect_secrets.plugins.jwt import JwtTokenDetector
from detect_secrets.plugins.mailchimp import MailchimpDetector
from detect_secrets.plugins.npm import NpmDetector
from detect_secrets.plugins.openai import OpenAIDetector
from detect_secrets.plugins.private_key import PrivateKeyDetector
from detect_secrets.plugins.pypi_token import PypiTokenDetector
from detect_secrets.plugins.sendgrid import SendGridDetector
from detect_secrets.plugins.slack import SlackDetector
from detect_secrets.plugins.square_oauth import SquareOAuthDetector
from detect_secrets.plugins.stripe import StripeDetector
from detect_secrets.plugins.telegram_token import TelegramBotTokenDetector
from detect_secrets.plugins.twilio import TwilioKeyDetector

PLUGINS = [cls() for cls in (
    AWSKeyDetector, ArtifactoryDetector, AzureStorageKeyDetector, BasicAuthDetector,
    CloudantDetector, DiscordBotTokenDetector, GitHubTokenDetector, GitLabTokenDetector,
    JwtTokenDetector, MailchimpDetector, NpmDetector, OpenAIDetector, PrivateKeyDetector,
    PypiTokenDetector, SendGridDetector, SlackDetector, SquareOAuthDetector, StripeDetector,
    TelegramBotTokenDetector, TwilioKeyDetector)]
REDACTED = "[REDACTED]"


@dataclass(frozen=True)
class Finding:
    """One secret: its kind and 1-based line. `digest` (sha256 of the value) lets an admin
    allow it; the value itself is never kept, logged or shown."""

    kind: str
    line: int
    digest: str

    def as_dict(self) -> dict[str, object]:
        return {"kind": self.kind, "line": self.line, "digest": self.digest}

    @classmethod
    def from_dict(cls, d: dict) -> Finding:
        return cls(str(d["kind"]), int(d["line"]), str(d["digest"]))


def digest(value: str) -> str:
    return hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()


_TAIL = re.compile(r"[A-Za-z0-9_\-]*")
# Every shape any plugin looks for: a plugin yields only where one of its denylist patterns
# matches, so a line none of them finds (nearly every line of memory) is clean without
# running the plugins (20 generators and 40 `findall`s a line: 48 of the 650 us of CPU an
# agent's `remember` took in its request thread; 26 with this pass first).
_SHAPES = tuple(pattern.search for plugin in PLUGINS for pattern in plugin.denylist)


def _suspect(line: str) -> bool:
    """Some plugin's pattern matches somewhere in `line` (then the plugins decide)."""
    return any(search(line) for search in _SHAPES)


def _values(line: str) -> Iterable[tuple[str, str]]:
    """(kind, whole value) of each secret a plugin sees in one line.

    A plugin may yield only a part (GitHub's yields the `ghp` prefix, a JWT's stops before
    its signature), so the value is the pattern's whole match, run on to the token's end;
    for a password in a URL it is just the password.
    """
    for plugin in PLUGINS:
        if not any(plugin.analyze_string(line)):
            continue
        for pattern in plugin.denylist:
            for m in pattern.finditer(line):
                if isinstance(plugin, BasicAuthDetector) and m.groups():
                    value = m.group(1)
                else:
                    tail = _TAIL.match(line, m.end())
                    value = line[m.start():tail.end() if tail else m.end()]
                if value:
                    yield plugin.secret_type, value


def scan_lines(lines: Iterable[tuple[int, str]], allowed: Iterable[str] = ()
               ) -> list[Finding]:
    """Findings in (line number, text) pairs, skipping pragma lines and allowed digests."""
    from .allow import line_allowed  # the allow rules import Finding from here

    allowed = set(allowed)
    found: list[Finding] = []
    for number, line in lines:
        if not _suspect(line) or line_allowed(line):
            continue
        seen: set[tuple[str, str]] = set()
        for kind, value in _values(line):
            key = (kind, digest(value))
            if key in seen or key[1] in allowed:
                continue
            seen.add(key)
            found.append(Finding(kind, number, key[1]))
    return found


def scan_text(text: str, allowed: Iterable[str] = ()) -> list[Finding]:
    """Every finding in a whole text (the flagged record; files already on disk)."""
    return scan_lines(enumerate(text.splitlines(), 1), allowed)


def added_lines(old: str | None, new: str) -> list[tuple[int, str]]:
    """The lines of `new` a write adds, with their line numbers in `new`.

    An append is the common case: only the tail (and the last old line, when the append
    continues it) is new. Otherwise a line counts as added when the old text has no equal
    line, so untouched or merely moved old lines (and an old secret in them) are not rescanned.
    """
    if not old:
        return list(enumerate(new.splitlines(), 1))
    if new.startswith(old):
        start = old.rfind("\n") + 1  # the last old line may go on in the appended text
        first = old.count("\n", 0, start) + 1
        return list(enumerate(new[start:].splitlines(), first))
    before = set(old.splitlines())
    return [(n, line) for n, line in enumerate(new.splitlines(), 1) if line not in before]


def redact(text: str, lines: Iterable[int]) -> str:
    """`text` with every secret on the given lines replaced by [REDACTED] (nothing else moves)."""
    wanted = set(lines)
    out = text.splitlines(keepends=True)
    in_key = False
    for i, line in enumerate(out, 1):
        if in_key:  # a private key's body, up to its END line
            in_key = "-----END" not in line
            ending = line[len(line.rstrip("\r\n")):]
            out[i - 1] = line if not in_key else REDACTED + ending
            continue
        if i not in wanted:
            continue
        found = list(_values(line))
        if any(k == "Private Key" for k, _v in found):  # the BEGIN line goes whole
            in_key = "-----END" not in line
            out[i - 1] = REDACTED + line[len(line.rstrip("\r\n")):]
            continue
        for value in sorted({v for _k, v in found}, key=len, reverse=True):
            line = line.replace(value, REDACTED)
        out[i - 1] = line
    return "".join(out)
