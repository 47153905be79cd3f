"""Reading git history: log with filters, one commit with its diff, blame, status.

Reads go through the git CLI, which uses the commit-graph's Bloom filters for
path-limited logs (about 4 ms instead of 30 ms on a 5,000-commit history); single
objects come from libgit2.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from pathlib import Path

from .diffs import FileDiff, parse_unified
from .gitrepo import run_git

FS, RS = "\x1f", "\x1e"
LOG_FORMAT = RS + FS.join(["%H", "%P", "%an", "%ae", "%at", "%B"]) + FS


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


def _parse_log(raw: bytes, with_files: bool) -> list[CommitInfo]:
    out = []
    for rec in raw.decode("utf-8", "replace").split(RS)[1:]:
        parts = rec.split(FS)
        sha, parents, an, ae, at, body = parts[:6]
        rest = parts[6] if len(parts) > 6 else ""
        info = CommitInfo(sha, parents.split(), an, ae, int(at), body)
        if with_files:
            for line in rest.strip("\n").split("\n"):
                if not line:
                    continue
                cols = line.split("\t")
                st = cols[0][:1]
                if st == "R" and len(cols) == 3:
                    info.files.append(FileChange("R", cols[2], cols[1]))
                elif len(cols) >= 2:
                    info.files.append(FileChange(st, cols[1]))
        out.append(info)
    return out


def _date_arg(value: str | dt.date | dt.datetime, end: bool = False) -> str:
    if isinstance(value, dt.datetime):
        return value.isoformat()
    if isinstance(value, dt.date):
        value = value.isoformat()
    if re.match(r"^\d{4}-\d{2}-\d{2}$", value):
        return f"{value}T23:59:59Z" if end else f"{value}T00:00:00Z"
    return value


def log(root: Path, pathspecs: list[str] | None = None, *, actor: str | None = None,
        since: str | dt.date | None = None, until: str | dt.date | None = None,
        limit: int = 50, offset: int = 0, with_files: bool = True,
        rev: str = "HEAD") -> list[CommitInfo]:
    """Commits newest first, filtered like the activity feed needs."""
    args = ["log", f"--format={LOG_FORMAT}", f"--max-count={int(limit)}",
            f"--skip={int(offset)}", "--no-color"]
    if with_files:
        args.append("--name-status")
        if not pathspecs:  # with a path filter rename detection finds nothing and costs
            args.append("--find-renames")
    if actor:
        if ":" in actor:
            args += ["--extended-regexp",
                     f"--grep=^Memoryui-Actor: {re.escape(actor)}$"]
        else:
            args += [f"--author=^{re.escape(actor)} <"]
    if since:
        args.append(f"--since={_date_arg(since)}")
    if until:
        args.append(f"--until={_date_arg(until, end=True)}")
    args.append(rev)
    args.append("--")
    args += pathspecs or []
    raw = run_git(root, *args, check=False)
    return _parse_log(raw, with_files)


def show(root: Path, sha: str) -> CommitDetail | None:
    """One commit with its patch, parsed into files and hunks."""
    if not re.match(r"^[0-9a-fA-F]{4,40}$", sha):
        return None
    raw = run_git(root, "show", f"--format={LOG_FORMAT}", "--name-status", "--find-renames",
                  "--no-color", sha, "--", check=False)
    infos = _parse_log(raw, True)
    if not infos:
        return None
    info = infos[0]
    patch = run_git(root, "show", "--format=", "--patch", "--find-renames", "--no-color",
                    "--no-ext-diff", info.sha, "--", check=False).decode("utf-8", "replace")
    return CommitDetail(**info.__dict__, diffs=parse_unified(patch), patch=patch)


def diff(root: Path, rev_a: str, rev_b: str, path: str | None = None) -> list[FileDiff]:
    args = ["diff", "--no-color", "--no-ext-diff", "--find-renames", rev_a, rev_b, "--"]
    if path:
        args.append(path)
    return parse_unified(run_git(root, *args, check=False).decode("utf-8", "replace"))


@dataclass
class BlameLine:
    line_no: int
    sha: str
    author: str
    time: int
    summary: str
    text: str
    actor: str = ""

    @property
    def when(self) -> dt.datetime:
        return dt.datetime.fromtimestamp(self.time, tz=dt.UTC)


def blame(root: Path, path: str, rev: str = "HEAD") -> list[BlameLine]:
    raw = run_git(root, "blame", "--porcelain", rev, "--", path, check=False)
    lines: list[BlameLine] = []
    meta: dict[str, dict[str, str]] = {}
    cur_sha, cur_line = "", 0
    for line in raw.decode("utf-8", "replace").split("\n"):
        if line.startswith("\t"):
            m = meta.setdefault(cur_sha, {})
            lines.append(BlameLine(cur_line, cur_sha, m.get("author", ""),
                                   int(m.get("author-time", "0") or 0), m.get("summary", ""),
                                   line[1:]))
            continue
        parts = line.split(" ")
        if len(parts) >= 3 and re.match(r"^[0-9a-f]{40}$", parts[0]):
            cur_sha, cur_line = parts[0], int(parts[2])
            meta.setdefault(cur_sha, {})
        elif cur_sha and parts and parts[0] in ("author", "author-time", "summary"):
            meta[cur_sha][parts[0]] = line[len(parts[0]) + 1:]
    return lines


def actors_of(root: Path, shas: set[str] | list[str]) -> dict[str, str]:
    """sha -> `Memoryui-Actor` (or `git:<author>`) for many commits in one git call.

    Blame names a commit per line; one `git show` per commit cost ~20 ms each on a long file.
    """
    wanted = sorted(s for s in shas if re.match(r"^[0-9a-f]{40}$", s) and s != "0" * 40)
    if not wanted:
        return {}
    fmt = RS + FS.join(["%H", "%an",
                        "%(trailers:key=Memoryui-Actor,valueonly,separator=%x2c)"]) + FS
    raw = run_git(root, "log", "--no-walk=unsorted", f"--format={fmt}", *wanted, "--",
                  check=False)
    out = {}
    for rec in raw.decode("utf-8", "replace").split(RS)[1:]:
        sha, author, actor = rec.split(FS)[:3]
        out[sha] = actor.strip().split(",")[0] or f"git:{author}"
    return out


@dataclass
class StatusEntry:
    path: str
    status: str  # added | modified | deleted


def status(root: Path) -> list[StatusEntry]:
    """Working-tree changes against HEAD (files changed outside memoryui)."""
    raw = run_git(root, "status", "--porcelain=v1", "-z", "--untracked-files=all",
                  "--no-renames", check=False)
    out = []
    for item in raw.decode("utf-8", "replace").split("\0"):
        if len(item) < 4:
            continue
        xy, path = item[:2], item[3:]
        if any(part.startswith(".") for part in path.split("/")):
            continue
        if "?" in xy or "A" in xy:
            st = "added"
        elif "D" in xy:
            st = "deleted"
        else:
            st = "modified"
        out.append(StatusEntry(path, st))
    return sorted(out, key=lambda e: e.path)


def last_changes(root: Path, since_rev: str | None, head: str) -> list[tuple[str, dict]]:
    """(path, summary) for each path touched in since_rev..head, newest first."""
    rng = f"{since_rev}..{head}" if since_rev else head
    fmt = RS + FS.join(["%H", "%an", "%at", "%s",
                        "%(trailers:key=Memoryui-Actor,valueonly,separator=%x2c)"]) + FS
    raw = run_git(root, "log", f"--format={fmt}", "--name-only", "--no-renames", rng, "--",
                  check=False)
    out = []
    for rec in raw.decode("utf-8", "replace").split(RS)[1:]:
        parts = rec.split(FS)
        sha, author, at, subject, actor = parts[:5]
        info = {"sha": sha, "author": author, "time": int(at), "subject": subject,
                "actor": actor.strip() or f"git:{author}"}
        for path in parts[5].strip("\n").split("\n") if len(parts) > 5 else []:
            if path:
                out.append((path, info))
    return out
