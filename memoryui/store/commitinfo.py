"""What a commit says, as `history` returns it: id, parents, author, time, the message with
memoryui's trailers (`Memoryui-Actor`, `Memoryui-Tool`), and the files it changed; and the
one reading of a commit's author, actor and subject (`summary`)."""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field

from .diffs import FileDiff


@dataclass
class FileChange:
    status: str  # A M D R
    path: str
    old_path: str | None = None


@dataclass
class CommitInfo:
    sha: str
    parents: list[str]
    author: str
    email: str
    time: int
    message: str
    files: list[FileChange] = field(default_factory=list)

    @property
    def short(self) -> str:
        return self.sha[:8]

    @property
    def subject(self) -> str:
        return self.message.split("\n", 1)[0]

    @property
    def when(self) -> dt.datetime:
        return dt.datetime.fromtimestamp(self.time, tz=dt.UTC)

    @property
    def trailers(self) -> dict[str, list[str]]:
        return parse_trailers(self.message)

    @property
    def actor(self) -> str:
        """`agent:x` / `user:y` from the trailer; commits made outside memoryui: `git:name`."""
        values = self.trailers.get("Memoryui-Actor")
        return values[0] if values else f"git:{self.author}"

    @property
    def actor_kind(self) -> str:
        return self.actor.split(":", 1)[0]

    @property
    def tools(self) -> list[str]:
        return self.trailers.get("Memoryui-Tool", [])

    @property
    def body(self) -> str:
        """The message without subject and trailers."""
        lines = self.message.rstrip("\n").split("\n")[1:]
        while lines and TRAILER_RE.match(lines[-1]):
            lines.pop()
        return "\n".join(lines).strip()


@dataclass
class CommitDetail(CommitInfo):
    diffs: list[FileDiff] = field(default_factory=list)
    patch: str = ""


TRAILER_RE = re.compile(r"^([A-Za-z][A-Za-z0-9-]*): (.*)$")


def parse_trailers(message: str) -> dict[str, list[str]]:
    """Trailers of the last paragraph (git's own rule, simplified)."""
    paragraphs = message.rstrip("\n").split("\n\n")
    out: dict[str, list[str]] = {}
    if len(paragraphs) < 2:
        return out
    for line in paragraphs[-1].split("\n"):
        m = TRAILER_RE.match(line)
        if not m:
            return {}
        out.setdefault(m.group(1), []).append(m.group(2))
    return out


def summary(author: str, message: str) -> dict[str, str]:
    """Author, actor (`Memoryui-Actor` or `git:<author>`) and subject of a commit: the one
    reading of a commit object, whether libgit2 or `git cat-file` read it."""
    actors = parse_trailers(message).get("Memoryui-Actor") or [""]
    return {"author": author, "actor": actors[0].strip() or f"git:{author}",
            "subject": " ".join(message.split("\n\n", 1)[0].split("\n"))}
