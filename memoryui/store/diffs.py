"""Diffs as structured hunks, so the UI can draw unified and side-by-side views."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field

HUNK_RE = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@(.*)$")


@dataclass
class DiffLine:
    op: str  # " " context, "+" added, "-" removed, "\\" no-newline marker
    text: str
    old_no: int | None
    new_no: int | None


@dataclass
class Hunk:
    header: str
    old_start: int
    new_start: int
    lines: list[DiffLine] = field(default_factory=list)


# A change whose two versions together are larger than `diff_limit()` bytes is not diffed
# line by line (libgit2's patch, then an object per line, cost seconds of a worker per
# megabyte): its FileDiff is marked too_large, with no hunks. memoryui/workspace.py puts the
# web's render limit (MEMORYUI_RENDER_LIMIT) in its place, so pages and the store agree.
def diff_limit() -> int:
    return 1 << 20


def over_diff_limit(old_size: int, new_size: int) -> bool:
    return old_size + new_size > diff_limit()


@dataclass
class FileDiff:
    path: str
    old_path: str | None = None
    status: str = "modified"  # added | deleted | modified | renamed
    binary: bool = False
    hunks: list[Hunk] = field(default_factory=list)
    too_large: bool = False  # not computed: over the web's render limit (no hunks)

    @property
    def additions(self) -> int:
        return sum(1 for h in self.hunks for ln in h.lines if ln.op == "+")

    @property
    def deletions(self) -> int:
        return sum(1 for h in self.hunks for ln in h.lines if ln.op == "-")

    def side_by_side(self) -> list[list[tuple]]:
        """Per hunk, rows of (old_no, old_text, old_op, new_no, new_text, new_op)."""
        return [_pair_rows(h) for h in self.hunks]


def _pair_rows(hunk: Hunk) -> list[tuple]:
    rows: list[tuple] = []
    dels: list[DiffLine] = []
    adds: list[DiffLine] = []

    def drain() -> None:
        for i in range(max(len(dels), len(adds))):
            d = dels[i] if i < len(dels) else None
            a = adds[i] if i < len(adds) else None
            rows.append((d.old_no if d else None, d.text if d else "", "-" if d else "",
                         a.new_no if a else None, a.text if a else "", "+" if a else ""))
        dels.clear()
        adds.clear()

    for ln in hunk.lines:
        if ln.op == "-":
            if adds:
                drain()
            dels.append(ln)
        elif ln.op == "+":
            adds.append(ln)
        elif ln.op == " ":
            drain()
            rows.append((ln.old_no, ln.text, " ", ln.new_no, ln.text, " "))
    drain()
    return rows


def parse_unified(text: str) -> list[FileDiff]:
    """Parse unified diff text with `diff --git` headers (in-memory diffs; git's own
    diffs come from libgit2 in `history`, since patch headers C-quote odd names)."""
    files: list[FileDiff] = []
    cur: FileDiff | None = None
    hunk: Hunk | None = None
    old_no = new_no = 0
    for line in text.split("\n"):
        if line.startswith("diff --git "):
            m = re.match(r"^diff --git a/(.*) b/(.*)$", line)
            a, b = (m.group(1), m.group(2)) if m else ("", "")
            cur = FileDiff(path=b, old_path=a if a != b else None)
            files.append(cur)
            hunk = None
            continue
        if cur is None:
            continue
        if hunk is None:
            if line.startswith("new file mode"):
                cur.status = "added"
            elif line.startswith("deleted file mode"):
                cur.status = "deleted"
            elif line.startswith("rename from "):
                cur.status = "renamed"
                cur.old_path = line[len("rename from "):]
            elif line.startswith("rename to "):
                cur.path = line[len("rename to "):]
            elif line.startswith("Binary files"):
                cur.binary = True
        m = HUNK_RE.match(line)
        if m:
            old_no, new_no = int(m.group(1)), int(m.group(3))
            hunk = Hunk(line, old_no, new_no)
            cur.hunks.append(hunk)
            continue
        if hunk is None or not line and not hunk.lines:
            continue
        op = line[:1]
        if op == "+":
            hunk.lines.append(DiffLine("+", line[1:], None, new_no))
            new_no += 1
        elif op == "-":
            hunk.lines.append(DiffLine("-", line[1:], old_no, None))
            old_no += 1
        elif op == " ":
            hunk.lines.append(DiffLine(" ", line[1:], old_no, new_no))
            old_no += 1
            new_no += 1
        elif op == "\\":
            hunk.lines.append(DiffLine("\\", line[1:].strip(), None, None))
    return files


def diff_texts(old: str | None, new: str | None, path: str, context: int = 3) -> FileDiff:
    """Diff two versions held in memory (conflict views, previews of a promotion)."""
    a = (old or "").splitlines(keepends=True)
    b = (new or "").splitlines(keepends=True)
    body = "".join(
        ln if ln.endswith("\n") else ln + "\n\\ No newline at end of file\n"
        for ln in difflib.unified_diff(a, b, "a/x", "b/x", n=context)
    )
    parsed = parse_unified(f"diff --git a/x b/x\n{body}")
    fd = parsed[0]
    fd.path, fd.old_path = path, None  # exact, whatever characters the name holds
    fd.status = "added" if old is None else "deleted" if new is None else "modified"
    return fd


def unified_text(fd: FileDiff) -> str:
    """Plain unified diff text (API responses, 409 bodies)."""
    out = [f"--- a/{fd.old_path or fd.path}", f"+++ b/{fd.path}"]
    for h in fd.hunks:
        out.append(h.header)
        out += [f"{ln.op}{ln.text}" for ln in h.lines]
    return "\n".join(out) + "\n"
