"""Remote commits git's porcelain refuses to make: trees written entry by entry.

`with_entries(repo, rev, {path: (mode, sha)})` returns a tree id: `rev`'s tree with each
path set (nested folders made as needed), names taken literally (`..`, `.git`, links).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.sync_fixtures import git

# A submodule whose `update` runs a command: git refuses to read this configuration at all.
GITMODULES = '[submodule "sub"]\n\tpath = sub\n\turl = ./sub\n\tupdate = !touch pwned\n'


def blob(repo: Path, data: str) -> str:
    return git(repo, "hash-object", "-w", "--stdin", input=data).strip()


def raw_tree(repo: Path, entries: dict[str, tuple[str, str]]) -> str:
    """A tree object written byte for byte (name -> (mode, sha)), bypassing git's checks."""
    def key(name: str) -> bytes:  # git's order: a folder sorts as if its name ended in '/'
        return name.encode() + (b"/" if entries[name][0] == "40000" else b"")
    data = b"".join(f"{entries[n][0]} {n}".encode() + b"\0" + bytes.fromhex(entries[n][1])
                    for n in sorted(entries, key=key))
    proc = subprocess.run(["git", "hash-object", "-t", "tree", "-w", "--literally", "--stdin"],
                          cwd=repo, input=data, capture_output=True, check=True)
    return proc.stdout.decode().strip()


def _entries(repo: Path, tree: str | None) -> dict[str, tuple[str, str]]:
    out: dict[str, tuple[str, str]] = {}
    if tree is None:
        return out
    for line in git(repo, "ls-tree", "-z", tree).split("\0"):
        if line:
            meta, name = line.split("\t", 1)
            mode, _kind, sha = meta.split()
            out[name] = (mode.lstrip("0"), sha)
    return out


def with_entries(repo: Path, tree: str | None, changes: dict[str, tuple[str, str]]) -> str:
    entries = _entries(repo, tree)
    nested: dict[str, dict[str, tuple[str, str]]] = {}
    for path, item in changes.items():
        head, sep, rest = path.partition("/")
        if sep:
            nested.setdefault(head, {})[rest] = item
        else:
            entries[head] = item
    for name, sub in nested.items():
        inner = entries[name][1] if name in entries and entries[name][0] == "40000" else None
        entries[name] = ("40000", with_entries(repo, inner, sub))
    return raw_tree(repo, entries)


def push_commit(repo: Path, changes: dict[str, tuple[str, str]], message: str) -> str:
    """A commit on the remote's main with `changes` set literally, pushed there."""
    git(repo, "fetch", "--quiet", "--no-recurse-submodules", "origin", "main")
    base = git(repo, "rev-parse", "FETCH_HEAD").strip()
    tree = with_entries(repo, git(repo, "rev-parse", f"{base}^{{tree}}").strip(), changes)
    sha = git(repo, "commit-tree", tree, "-p", base, "-m", message).strip()
    git(repo, "update-ref", "HEAD", sha)
    git(repo, "push", "--quiet", "origin", f"{sha}:refs/heads/main")
    return sha
