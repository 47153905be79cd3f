"""Reading git history: log with filters, one commit with its diff, status (blame: `blame.py`).

Logs go through the git CLI, which uses the commit-graph's Bloom filters for
path-limited logs (about 4 ms instead of 30 ms on a 5,000-commit history); single
commits and diffs come from libgit2. Paths are always exact: the CLI is asked for
NUL-separated output (`-z`), which git never C-quotes, and libgit2 hands paths over as
they are, so a name with `"`, a TAB, a backslash or a newline is never mistaken for
another path (and never escapes the scope read rule).
"""

from __future__ import annotations

import datetime as dt
import os
import re
import subprocess
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pygit2

from . import dated
from .diffs import DiffLine, FileDiff, Hunk, over_diff_limit
from .gitcli import GIT_ENV, run_git
from .gitindex import open_repo

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"  # git's well-known empty tree
_STATUS = {"A": "added", "D": "deleted", "R": "renamed"}

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
    --no-walk` for all, or with `repo`, a few read by libgit2 (no process at all: the
    compare page's two rows cost more than the diff they head)."""
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
    diffs, patch = _tree_diff(parent, commit.tree)
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
    """Changes from rev_a to rev_b (either may be EMPTY_TREE), optionally of one path
    (or a folder): a rename shows when either of its names matches."""
    repo = repo or open_repo(root)
    a, b = _tree_of(repo, rev_a), _tree_of(repo, rev_b)
    return _tree_diff(a, b, path, with_patch=False)[0]


def _tree_of(repo: pygit2.Repository, rev: str) -> pygit2.Tree | None:
    if rev == EMPTY_TREE:
        return None
    return repo.revparse_single(rev).peel(pygit2.Tree)


FAST_DIFF_FILES = 500  # more changed files than this: libgit2's own diff is as quick
_PLAIN = int(pygit2.enums.FileMode.BLOB)


def _blob_changes(a: pygit2.Tree | None, b: pygit2.Tree | None, prefix: str,
                  out: list[tuple[str, pygit2.Blob | None, pygit2.Blob | None]]
                  ) -> list | None:
    """(path, old blob, new blob) of every file that differs, skipping subtrees whose ids
    are equal: libgit2's tree-to-tree diff visits every entry of both trees (about 100 ms
    on 200k files for a one-line commit). None when only libgit2's diff can say it right
    (a file becoming a folder, a mode other than a plain file, too many files)."""
    ea = {e.name: e for e in a} if a is not None else {}
    eb = {e.name: e for e in b} if b is not None else {}
    for name in ea.keys() | eb.keys():
        x, y = ea.get(name), eb.get(name)
        if x is not None and y is not None and x.id == y.id and x.filemode == y.filemode:
            continue
        kinds = {e.type_str for e in (x, y) if e is not None}
        if kinds == {"tree"}:
            if _blob_changes(x, y, f"{prefix}{name}/", out) is None:
                return None
        elif kinds == {"blob"} and all(e.filemode == _PLAIN for e in (x, y) if e is not None):
            out.append((prefix + name, x, y))
        else:
            return None
        if len(out) > FAST_DIFF_FILES:
            return None
    return out


def _same_file(a: pygit2.Tree | None, b: pygit2.Tree | None, path: str) -> list | None:
    """A path that is a plain file on both sides: its own change alone (no rename can
    involve it, so nothing else in the trees needs looking at); None otherwise."""
    try:
        x, y = a[path], b[path]  # type: ignore[index]
    except (KeyError, TypeError):
        return None
    if not (x.type_str == y.type_str == "blob" and x.filemode == y.filemode == _PLAIN):
        return None
    return [] if x.id == y.id else [(path, x, y)]


def _fast_diff(a: pygit2.Tree | None, b: pygit2.Tree | None, path: str | None,
               with_patch: bool) -> tuple[list[FileDiff], str] | None:
    """The same FileDiffs and patch text as libgit2's diff with rename detection, from the
    changed blobs alone; None when a rename is possible (a file added and another deleted)
    or `_blob_changes` declines."""
    one = _same_file(a, b, path) if path else None
    changes = one if one is not None else _blob_changes(a, b, "", [])
    if changes is None or (any(x is None for _, x, _ in changes)
                           and any(y is None for _, _, y in changes)):
        return None
    changes.sort(key=lambda c: c[0].encode())
    if path:
        changes = [c for c in changes if c[0] == path or c[0].startswith(path + "/")]
    out, text = [], []
    for p, x, y in changes:  # (`changes` keeps the blobs alive while their patches are read)
        if over_diff_limit(x.size if x is not None else 0, y.size if y is not None else 0):
            out.append(FileDiff(p, None, "added" if x is None else "deleted" if y is None
                                else "modified", too_large=True))
            continue
        pt = pygit2.Patch.create_from(x, y, old_as_path=p, new_as_path=p)
        out.append(_file_diff(pt))
        if with_patch:
            text.append(pt.text or "")
    return out, "".join(text)


def _tree_diff(a: pygit2.Tree | None, b: pygit2.Tree | None, path: str | None = None,
               with_patch: bool = True) -> tuple[list[FileDiff], str]:
    if a is None and b is None:
        return [], ""
    fast = _fast_diff(a, b, path, with_patch)
    return fast if fast is not None else _libgit2_diff(a, b, path, with_patch)


def _libgit2_diff(a: pygit2.Tree | None, b: pygit2.Tree | None, path: str | None,
                  with_patch: bool) -> tuple[list[FileDiff], str]:
    if a is None:
        diff = b.diff_to_tree(swap=True)  # from the empty tree to b
    elif b is None:
        diff = a.diff_to_tree()  # from a to the empty tree
    else:
        diff = a.diff_to_tree(b)
    diff.find_similar(flags=pygit2.enums.DiffFind.FIND_RENAMES)
    out, text = [], []
    for i, delta in enumerate(diff.deltas):
        names = (delta.old_file.path, delta.new_file.path)
        if path and not any(n == path or n.startswith(path + "/") for n in names):
            continue
        if over_diff_limit(delta.old_file.size, delta.new_file.size):
            out.append(FileDiff(names[1], names[0] if names[0] != names[1] else None,
                                _STATUS.get(delta.status_char(), "modified"), too_large=True))
            continue
        pt = diff[i]
        out.append(_file_diff(pt))
        if with_patch:
            text.append(pt.text or "")
    return out, "".join(text)


def _file_diff(patch: pygit2.Patch) -> FileDiff:
    """A libgit2 patch as the UI's FileDiff (the shape `diffs.parse_unified` returns)."""
    delta = patch.delta
    old, new = delta.old_file.path, delta.new_file.path
    fd = FileDiff(new, old if old != new else None,
                  _STATUS.get(delta.status_char(), "modified"))
    for h in patch.hunks:
        hunk = Hunk(h.header.rstrip("\n"), h.old_start, h.new_start)
        for ln in h.lines:
            if ln.origin in ("+", "-", " "):
                text = ln.raw_content.decode("utf-8", "replace")
                text = text[:-1] if text.endswith("\n") else text
                hunk.lines.append(DiffLine(ln.origin, text,
                                           ln.old_lineno if ln.old_lineno > 0 else None,
                                           ln.new_lineno if ln.new_lineno > 0 else None))
            elif ln.origin in ("=", ">", "<"):
                hunk.lines.append(DiffLine("\\", "No newline at end of file", None, None))
        fd.hunks.append(hunk)
    fd.binary = delta.is_binary
    return fd


# Up to this many commits are read through libgit2 when a handle is at hand: starting
# `git cat-file` costs 2-3 ms, about the whole `git blame` of a daily log; the pages a few
# commits map are not the scattered thousands `commit_summaries` keeps out of the worker.
FEW_COMMITS = 256


def actors_of(root: Path, shas: set[str] | list[str],
              repo: pygit2.Repository | None = None) -> dict[str, str]:
    """sha -> `Memoryui-Actor` (or `git:<author>`) for many commits in one git call (or,
    for a few with `repo`, read by libgit2).

    Blame names a commit per line; one `git show` per commit cost ~20 ms each on a long file.
    """
    wanted = {s for s in shas if _SHA.match(s)}
    if repo is not None and len(wanted) <= FEW_COMMITS:
        out = {}
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


def summary(author: str, message: str) -> dict:
    """Author, actor (`Memoryui-Actor` or `git:<author>`) and subject of a commit: the one
    reading of a commit object, whether libgit2 or `git cat-file` read it."""
    actors = parse_trailers(message).get("Memoryui-Actor") or [""]
    return {"author": author, "actor": actors[0].strip() or f"git:{author}",
            "subject": " ".join(message.split("\n\n", 1)[0].split("\n"))}


def commit_summaries(root: Path, shas: Iterable[str]) -> dict[str, dict]:
    """sha -> `summary` for many commits in one `git cat-file --batch` (missing ones left
    out). A libgit2 read of each maps pages of the pack into the worker: a few thousand
    scattered commits (the overview's rows) kept 160 MB of a 200k-file pack resident."""
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
    way, or a change `_blob_changes` declines (modes, a file becoming a folder).
    """
    out: list[tuple[str, dict]] = []
    oid = pygit2.Oid(hex=head)
    stop = pygit2.Oid(hex=since_rev)
    for _ in range(limit):
        if oid == stop:
            return out
        c = repo[oid]
        if len(c.parent_ids) != 1:
            return None
        parent = repo[c.parent_ids[0]]
        changes = _blob_changes(parent.tree, c.tree, "", [])
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

    Streamed: the whole history of a 200k-commit workspace is ~100 MB of `git log`
    output, which held at once doubled a worker's memory on its first start.
    """
    rng = f"{since_rev}..{head}" if since_rev else head
    fmt = RS + FS.join(["%H", "%an", "%at", "%s",
                        "%(trailers:key=Memoryui-Actor,valueonly,separator=%x2c)"]) + FS
    args = ["git", "-c", "core.quotepath=off", "log", "-z", f"--format={fmt}",
            "--name-status", "--no-renames", rng, "--"]
    with subprocess.Popen(args, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                          env={**os.environ, **GIT_ENV}) as proc:
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
