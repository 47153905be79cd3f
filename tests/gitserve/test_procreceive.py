"""A push for review's files as proposals, on a real workspace: the pushed text merged with
a newer workspace version, an overlap or a file that is not text refused, and git's
pkt-line framing of the proc-receive conversation."""

from __future__ import annotations

import io

import pygit2
import pytest

from memoryui.gitserve.procreceive import FLUSH, NotProposed, packet, planned, read_packets
from memoryui.gitserve.pushpolicy import Proposed, Review
from memoryui.store import Actor, Store

MEMORY = "agents/alpha/memory/MEMORY.md"
HOST = pygit2.Signature("host", "host@example")


def _pushed(store: Store, base: str, data: bytes) -> Proposed:
    """A host commit on `base` changing MEMORY.md to `data`."""
    repo = store.git.repo
    blob = repo.create_blob(data)
    index = pygit2.Index()
    index.read_tree(repo[base].peel(pygit2.Commit).tree)
    index.add(pygit2.IndexEntry(MEMORY, blob, pygit2.enums.FileMode.BLOB))
    sha = repo.create_commit(None, HOST, HOST, "host", index.write_tree(repo),
                             [pygit2.Oid(hex=base)])
    return Proposed(MEMORY, str(blob), "alpha", str(sha))


def _write(store: Store, text: str) -> str:
    store.write(MEMORY, text, actor=Actor.agent("alpha"), tool="test")
    store.flush()
    head = store.git.head()
    assert head is not None
    return head


def test_the_pushed_text_is_merged_with_a_newer_workspace_version(store: Store) -> None:
    base = _write(store, "# alpha\n\none\n\ntwo\n\nthree\n")
    pushed = _pushed(store, base, b"# alpha\n\none\n\ntwo\n\nthree, by the host\n")
    head = _write(store, "# alpha\n\none, by an agent\n\ntwo\n\nthree\n")
    texts = planned(store, store.git.repo, Review(base, [pushed], []), head)
    assert texts == {MEMORY: "# alpha\n\none, by an agent\n\ntwo\n\nthree, by the host\n"}
    overlapping = _pushed(store, base, b"# alpha\n\none, by the host\n\ntwo\n\nthree\n")
    with pytest.raises(NotProposed, match="changed in the workspace .* overlap"):
        planned(store, store.git.repo, Review(base, [overlapping], []), head)


def test_a_file_that_is_not_text_is_refused_with_its_commit(store: Store) -> None:
    base = _write(store, "# alpha\n")
    pushed = _pushed(store, base, b"\xff\xfe\x00 not text")
    with pytest.raises(NotProposed, match=f"{MEMORY}.*{pushed.commit[:12]}.*not UTF-8"):
        planned(store, store.git.repo, Review(base, [pushed], []), base)


def test_pkt_lines_are_framed_as_git_reads_them() -> None:
    assert packet("ok refs/for/main") == b"0015ok refs/for/main\n"
    stream = io.BytesIO(packet("version=1") + FLUSH + packet("a b refs/for/main") + FLUSH)
    assert read_packets(stream) == [b"version=1"]
    assert read_packets(stream) == [b"a b refs/for/main"]
    with pytest.raises(EOFError):
        read_packets(stream)
