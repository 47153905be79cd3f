"""Reading git history: which commits (`log`, `commits`, `last_changes`), one commit with
its diff (`show`), two versions compared (`diff`), and the working tree's status (blame:
`blame.py`; the values returned: `commitinfo.py`; tree diffs: `treediff.py`).

Logs go through the git CLI, which uses the commit-graph's Bloom filters for
path-limited logs; single commits and diffs come from libgit2. Paths are always exact: the
CLI is asked for NUL-separated output (`-z`), which git never C-quotes, and libgit2 hands
paths over as they are, so a name with `"`, a TAB, a backslash or a newline is never
mistaken for another path (and never escapes the scope read rule).
"""

from __future__ import annotations

import datetime as dt
import re
import subprocess
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import pygit2

from . import dated
from .commitinfo import CommitDetail, CommitInfo, FileChange, parse_trailers, summary
from .diffs import FileDiff
from .gitcli import git_env, run_git
from .gitindex import open_repo
from .treediff import blob_changes, tree_diff, tree_of

FS, RS = "\x1f", "\x1e"
LOG_FORMAT = RS + FS.join(["%H", "%P", "%an", "%ae", "%at", "%B"]) + FS


def _parse_log(raw: bytes, with_files: bool) -> list[CommitInfo]:
    out = []
    for (sha, parents, an, ae, at, body), changes in _records(raw, 6):
        info = CommitInfo(sha, parents.split(), an, ae, int(at or 0), body)
        if with_files:
            info.files = changes
        out.append(info)
    return out


_RECORD_START = re.compile("\x1e(?=[0-9a-f]{40}\x1f)")
_SHA = re.compile("^[0-9a-f]{40}$")


def _records(raw: bytes, nfields: int) -> Iterator[tuple[list[str], list[FileChange]]]:
    """Parse `git log -z --format=RS f1 FS ... fn FS [--name-status]`.

    A record starts at RS followed by a full sha and FS; its first n-1 fields end at FS,
    the last (a body) at FS NUL; then, with files, a newline and NUL-terminated tokens:
    a status, then one path (two for R/C). Paths are taken whole between NULs, so no
    character a name may hold (quote, TAB, newline, even RS) can confuse the parser.
    """
    for rec in _RECORD_START.split(raw.decode("utf-8", "replace"))[1:]:
        *fields, rest = rec.split(FS, nfields - 1)
        body, _, tail = rest.partition(FS + "\0")
        fields.append(body)
        tokens = tail[1:].split("\0") if tail[:1] == "\n" else tail.split("\0")
        changes: list[FileChange] = []
        i, n = 0, len(tokens) - 1  # the last token is what follows the final NUL
        while i < n:
            status = tokens[i][:1]
            if not status:
                i += 1
            elif status in "RC" and i + 2 < n:
                changes.append(FileChange(status, tokens[i + 2], tokens[i + 1]))
                i += 3
            else:
                changes.append(FileChange(status, tokens[i + 1] if i + 1 < n else ""))
                i += 2
        yield fields, changes


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
        rev: str = "HEAD", all_files: bool = False) -> list[CommitInfo]:
    """Commits newest first, filtered like the activity feed needs (`all_files`: list every
    file a commit touches, not only those matching the pathspecs).

    `since`/`until` compare the author date each row shows, on every commit: git's own
    `--since` stops at the first older commit and misses newer ones listed after it when
    dates are out of order (imports, clock skew), so dated logs pick commits first.
    """
    args = ["log", "-z", f"--format={LOG_FORMAT}", "--no-color"]
    if with_files:
        args.append("--name-status")
        if all_files:
            args.append("--full-diff")
        if not pathspecs:  # with a path filter rename detection finds nothing and costs
            args.append("--find-renames")
    if since or until:
        start = max(0, int(offset))
        shas = _dated(root, pathspecs, _actor_args(actor), since, until, rev,
                      start + max(0, int(limit)))
        picked = shas[start:]
        if not picked:
            return []
        args += ["--no-walk=unsorted", *picked]
    else:
        args += [f"--max-count={int(limit)}", f"--skip={int(offset)}",
                 *_actor_args(actor), rev]
    args.append("--")
    args += pathspecs or []
    raw = run_git(root, *args, check=False)
    return _parse_log(raw, with_files)


def commits(root: Path, shas: list[str],
            repo: pygit2.Repository | None = None) -> list[CommitInfo]:
    """These commits (full ids), in this order, without their files: one `git log
    --no-walk` for all, or with `repo`, a few read by libgit2 (no process at all, for a
    page of a few rows such as the compare page's two)."""
    if not shas:
        return []
    if repo is not None and len(shas) <= FEW_COMMITS:
        return [info for sha in dict.fromkeys(shas)  # once each, as git log lists them
                if (info := _read_commit(repo, sha)) is not None]
    raw = run_git(root, "log", "-z", f"--format={LOG_FORMAT}", "--no-color",
                  "--no-walk=unsorted", *shas, "--", check=False)
    return _parse_log(raw, with_files=False)


def _read_commit(repo: pygit2.Repository, sha: str) -> CommitInfo | None:
    """One commit as `git log --format=LOG_FORMAT` reads it (author as written, not
    mailmapped; text as UTF-8)."""
    try:
        c = repo[sha] if _SHA.match(sha) else None
    except (KeyError, ValueError):
        return None
    if not isinstance(c, pygit2.Commit):
        return None
    author = c.author
    return CommitInfo(str(c.id), [str(p) for p in c.parent_ids], _utf8(author.raw_name),
                      _utf8(author.raw_email), author.time, _utf8(c.raw_message))


def _utf8(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")


def _actor_args(actor: str | None) -> list[str]:
    if not actor:
        return []
    if ":" in actor:  # "agent:" / "user:" alone: any agent / any person
        end = "" if actor.endswith(":") else "$"
        return ["--extended-regexp", f"--grep=^Memoryui-Actor: {re.escape(actor)}{end}"]
    return [f"--author=^{re.escape(actor)} <"]


def _bound(root: Path, value: str | dt.date | dt.datetime, end: bool) -> int:
    """A since/until value as epoch seconds, read exactly as git reads dates."""
    flag = "--until" if end else "--since"
    out = run_git(root, "rev-parse", f"{flag}={_date_arg(value, end=end)}",
                  check=False).decode().strip()
    m = re.fullmatch(r"--(?:max|min)-age=(-?\d+)", out)
    if not m:
        raise ValueError(f"not a date: {value!r}")
    return int(m.group(1))


def _dated(root: Path, pathspecs: list[str] | None, actor_args: list[str],
           since: str | dt.date | None, until: str | dt.date | None, rev: str,
           stop: int) -> list[str]:
    """The first `stop` shas (newest first) whose author date is within since..until, over
    all history (the dates are kept between pages: `store/dated.py`)."""
    lo = _bound(root, since, False) if since else None
    hi = _bound(root, until, True) if until else None
    head = run_git(root, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}",
                   check=False).decode().strip()
    if not head:
        return []
    return dated.between(root, head, actor_args, pathspecs or [], lo, hi, stop)


def show(root: Path, sha: str, repo: pygit2.Repository | None = None) -> CommitDetail | None:
    """One commit with its diff against its first parent (exact paths, from libgit2)."""
    if not re.fullmatch(r"[0-9a-fA-F]{4,40}", sha):
        return None
    repo = repo or open_repo(root)
    try:
        commit = repo[sha].peel(pygit2.Commit)
    except (KeyError, ValueError, pygit2.GitError):
        return None
    parent = commit.parents[0].tree if commit.parents else None
    diffs, patch = tree_diff(parent, commit.tree)
    files = [FileChange(_CHANGE.get(d.status, "M"), d.path,
                        d.old_path if d.status == "renamed" else None) for d in diffs]
    author = commit.author
    return CommitDetail(str(commit.id), [str(p) for p in commit.parent_ids], author.name,
                        author.email, author.time,
                        commit.raw_message.decode("utf-8", "replace"), files,
                        diffs=diffs, patch=patch)


_CHANGE = {"added": "A", "deleted": "D", "renamed": "R", "modified": "M"}


def diff(root: Path, rev_a: str, rev_b: str, path: str | None = None,
         repo: pygit2.Repository | None = None) -> list[FileDiff]:
    """Changes from rev_a to rev_b (either may be `treediff.EMPTY_TREE`), optionally of one
    path (or a folder): a rename shows when either of its names matches."""
    repo = repo or open_repo(root)
    a, b = tree_of(repo, rev_a), tree_of(repo, rev_b)
    return tree_diff(a, b, path, with_patch=False)[0]


# Up to this many commits are read through libgit2 when a handle is at hand: starting
# `git cat-file` costs 2-3 ms, about the whole `git blame` of a daily log; the pages a few
# commits map are not the scattered thousands `commit_summaries` keeps out of the worker.
FEW_COMMITS = 256


def actors_of(root: Path, shas: set[str] | list[str],
              repo: pygit2.Repository | None = None) -> dict[str, str]:
    """sha -> `Memoryui-Actor` (or `git:<author>`) for many commits in one git call (or,
    for a few with `repo`, read by libgit2): blame names a commit per line, and a long
    file's lines name many commits.
    """
    wanted = {s for s in shas if _SHA.match(s)}
    if repo is not None and len(wanted) <= FEW_COMMITS:
        out: dict[str, str] = {}
        for sha in wanted:
            try:
                c = repo[sha]
            except (KeyError, ValueError):
                continue
            if isinstance(c, pygit2.Commit):
                out[sha] = summary(c.author.raw_name.decode("utf-8", "replace").strip(),
                                   c.raw_message.decode("utf-8", "replace"))["actor"]
        return out
    return {sha: c["actor"] for sha, c in commit_summaries(root, wanted).items()}


def commit_summaries(root: Path, shas: Iterable[str]) -> dict[str, dict]:
    """sha -> `summary` for many commits in one `git cat-file --batch` (missing ones left
    out). A libgit2 read of each would map pages of the pack into the worker: a few
    thousand scattered commits (the overview's rows) would keep much of a large pack
    resident."""
    wanted = sorted({s for s in shas if _SHA.match(s)})
    if not wanted:
        return {}
    raw = run_git(root, "cat-file", "--batch", input="\n".join(wanted).encode() + b"\n",
                  check=False)
    out: dict[str, dict] = {}
    pos = 0
    while (end := raw.find(b"\n", pos)) >= 0:  # a cut-short reply ends the reading
        head = raw[pos:end].split()
        pos = end + 1
        if len(head) != 3:  # "<sha> missing" (or ambiguous)
            continue
        size = int(head[2])
        body, pos = raw[pos:pos + size], pos + size + 1
        if head[1] != b"commit":
            continue
        headers, _, message = body.decode("utf-8", "replace").partition("\n\n")
        author = next((line[7:].rsplit("<", 1)[0].strip() for line in headers.split("\n")
                       if line.startswith("author ")), "")
        out[head[0].decode()] = summary(author, message)
    return out


@dataclass
class StatusEntry:
    path: str
    status: str  # added | modified | deleted
    refused: str | None = None  # why memoryui will not commit it (a symbolic link, ...)


def status(root: Path) -> list[StatusEntry]:
    """Working-tree changes against HEAD (files changed outside memoryui)."""
    # --no-optional-locks: never hold index.lock, so a person running git by hand in the
    # workspace at the same moment is not refused (git's advice for background status).
    raw = run_git(root, "--no-optional-locks", "status", "--porcelain=v1", "-z",
                  "--untracked-files=all",
                  "--no-renames", check=False)
    out = []
    # surrogateescape: a name that is not UTF-8 still round-trips to the file system.
    for item in raw.decode("utf-8", "surrogateescape").split("\0"):
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


def recent_changes(repo: pygit2.Repository, since_rev: str, head: str, limit: int = 64
                   ) -> list[tuple[str, dict]] | None:
    """What `last_changes(since_rev, head)` yields, read in process for a few new commits
    (a server catching up after each write: no `git log` process per commit, per worker).

    None when git must answer: more than `limit` commits, a merge or a root commit on the
    way, or a change `blob_changes` declines (modes, a file becoming a folder).
    """
    out: list[tuple[str, dict]] = []
    oid = pygit2.Oid(hex=head)
    stop = pygit2.Oid(hex=since_rev)
    for _ in range(limit):
        if oid == stop:
            return out
        c = cast(pygit2.Commit, repo[oid])
        if len(c.parent_ids) != 1:
            return None
        parent = cast(pygit2.Commit, repo[c.parent_ids[0]])
        changes = blob_changes(parent.tree, c.tree, "", [])
        if changes is None:
            return None
        author = c.author.name
        actors = parse_trailers(c.message).get("Memoryui-Actor") or [""]
        info = {"sha": str(c.id), "author": author, "time": int(c.author.time),
                "subject": " ".join(c.message.strip().split("\n\n", 1)[0].split()),
                "actor": actors[0].strip() or f"git:{author}"}
        out.extend((p, info) for p, _x, _y in sorted(changes, key=lambda ch: ch[0]))
        oid = c.parent_ids[0]
    return out if oid == stop else None


def last_changes(root: Path, since_rev: str | None, head: str) -> Iterator[tuple[str, dict]]:
    """(path, summary) for each path touched in since_rev..head, newest first.

    Streamed: the whole history of a large workspace is a hundred MB or more of `git log`
    output, too much to hold at once.
    """
    rng = f"{since_rev}..{head}" if since_rev else head
    fmt = RS + FS.join(["%H", "%an", "%at", "%s",
                        "%(trailers:key=Memoryui-Actor,valueonly,separator=%x2c)"]) + FS
    args = ["git", "-c", "core.quotepath=off", "log", "-z", f"--format={fmt}",
            "--name-status", "--no-renames", rng, "--"]
    with subprocess.Popen(args, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                          env=git_env()) as proc:
        assert proc.stdout is not None
        pending = b""
        while True:
            chunk = proc.stdout.read(1 << 20)
            # A record ends where the next begins: keep the last (maybe partial) one.
            data = pending + chunk
            if chunk:
                cut = data.rfind(b"\x1e")
                while cut > 0 and not _RECORD_START.match(
                        data[cut:cut + 42].decode("ascii", "replace")):
                    cut = data.rfind(b"\x1e", 0, cut)
            else:
                cut = len(data)  # the end: the last record is whole
            if cut <= 0 and chunk:
                pending = data
                continue
            complete, pending = data[:cut], data[cut:]
            for (sha, author, at, subject, actor), changes in _records(complete, 5):
                info = {"sha": sha, "author": author, "time": int(at or 0),
                        "subject": subject, "actor": actor.strip() or f"git:{author}"}
                for change in changes:
                    yield change.path, info
            if not chunk:
                break
