"""What changed between two trees, as the UI's FileDiffs and patch text.

A commit usually changes a few files of a large tree, so the changed blobs are found by
walking only the subtrees whose ids differ (`blob_changes`) and each is diffed alone;
libgit2's own tree diff, with rename detection, answers whenever a rename is possible or a
change is more than plain files changing (modes, a file becoming a folder).
"""

from __future__ import annotations

from typing import cast

import pygit2

from .diffs import DiffLine, FileDiff, Hunk, over_diff_limit

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"  # git's well-known empty tree
_STATUS = {"A": "added", "D": "deleted", "R": "renamed"}
# (path, old blob, new blob): a changed file, None on the side where it does not exist
BlobChange = tuple[str, pygit2.Blob | None, pygit2.Blob | None]


def tree_of(repo: pygit2.Repository, rev: str) -> pygit2.Tree | None:
    if rev == EMPTY_TREE:
        return None
    return repo.revparse_single(rev).peel(pygit2.Tree)


FAST_DIFF_FILES = 500  # more changed files than this: libgit2's own diff is as quick
_PLAIN = int(pygit2.enums.FileMode.BLOB)


def blob_changes(a: pygit2.Tree | None, b: pygit2.Tree | None, prefix: str,
                 out: list[BlobChange]) -> list[BlobChange] | None:
    """(path, old blob, new blob) of every file that differs, skipping subtrees whose ids
    are equal: libgit2's tree-to-tree diff visits every entry of both trees, which on a
    large workspace costs far more than a small commit's change. None when only libgit2's
    diff can say it right (a file becoming a folder, a mode other than a plain file, too
    many files)."""
    ea = {e.name: e for e in a} if a is not None else {}
    eb = {e.name: e for e in b} if b is not None else {}
    for name in ea.keys() | eb.keys():
        x, y = ea.get(name), eb.get(name)
        if x is not None and y is not None and x.id == y.id and x.filemode == y.filemode:
            continue
        kinds = {e.type_str for e in (x, y) if e is not None}
        if kinds == {"tree"}:
            if blob_changes(cast(pygit2.Tree | None, x), cast(pygit2.Tree | None, y),
                            f"{prefix}{name}/", out) is None:
                return None
        elif kinds == {"blob"} and all(e.filemode == _PLAIN for e in (x, y) if e is not None):
            out.append((f"{prefix}{name}", cast(pygit2.Blob | None, x),
                        cast(pygit2.Blob | None, y)))
        else:
            return None
        if len(out) > FAST_DIFF_FILES:
            return None
    return out


def _same_file(a: pygit2.Tree | None, b: pygit2.Tree | None, path: str
               ) -> list[BlobChange] | None:
    """A path that is a plain file on both sides: its own change alone (no rename can
    involve it, so nothing else in the trees needs looking at); None otherwise."""
    try:
        x, y = a[path], b[path]  # type: ignore[index]
    except (KeyError, TypeError):
        return None
    if not (x.type_str == y.type_str == "blob" and x.filemode == y.filemode == _PLAIN):
        return None
    return [] if x.id == y.id else [(path, cast(pygit2.Blob, x), cast(pygit2.Blob, y))]


def _fast_diff(a: pygit2.Tree | None, b: pygit2.Tree | None, path: str | None,
               with_patch: bool) -> tuple[list[FileDiff], str] | None:
    """The same FileDiffs and patch text as libgit2's diff with rename detection, from the
    changed blobs alone; None when a rename is possible (a file added and another deleted)
    or `blob_changes` declines."""
    one = _same_file(a, b, path) if path else None
    changes = one if one is not None else blob_changes(a, b, "", [])
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


def tree_diff(a: pygit2.Tree | None, b: pygit2.Tree | None, path: str | None = None,
               with_patch: bool = True) -> tuple[list[FileDiff], str]:
    if a is None and b is None:
        return [], ""
    fast = _fast_diff(a, b, path, with_patch)
    return fast if fast is not None else _libgit2_diff(a, b, path, with_patch)


def _libgit2_diff(a: pygit2.Tree | None, b: pygit2.Tree | None, path: str | None,
                  with_patch: bool) -> tuple[list[FileDiff], str]:
    if a is not None and b is not None:
        diff = a.diff_to_tree(b)
    elif a is not None:
        diff = a.diff_to_tree()  # from a to the empty tree
    elif b is not None:
        diff = b.diff_to_tree(swap=True)  # from the empty tree to b
    else:
        return [], ""
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
        assert pt is not None  # (libgit2 makes a patch of every delta)
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
    fd.binary = bool(delta.is_binary)  # (known once the patch is made)
    return fd
