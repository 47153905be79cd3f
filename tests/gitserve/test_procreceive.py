"""The proc-receive hook on a real workspace: a push to the branch integrated, or refused
`fetch first` when an agent wrote since git's checks; a push for review's files as
proposals (the pushed text merged with a newer workspace version, an overlap or a file
that is not text refused); git's pkt-line framing of the conversation."""

from __future__ import annotations

import io
import json
import logging
from pathlib import Path

import pygit2
import pytest

from memoryui.gitserve.procreceive import (
    FLUSH,
    NotProposed,
    packet,
    planned,
    proc_receive,
    read_packets,
)
from memoryui.gitserve.pushpolicy import Proposed, Review
from memoryui.gitserve.served import mirror_ref, refresh_mirror
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


def _converse(store: Store, *commands: str) -> list[bytes]:
    """git's side of a proc-receive conversation; the hook's reports."""
    stdin = io.BytesIO(packet("version=1") + FLUSH + b"".join(packet(c) for c in commands)
                       + FLUSH)
    stdout = io.BytesIO()
    assert proc_receive(stdin, stdout, lambda: Store(store.root)) == 0
    stdout.seek(0)
    assert read_packets(stdout) == [b"version=1"]
    return read_packets(stdout)


def test_a_push_to_the_branch_is_refused_fetch_first_when_an_agent_wrote_meanwhile(
        store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    result = tmp_path / "result.json"
    monkeypatch.setenv("MEMORYUI_PUSH_RESULT", str(result))
    branch = store.git.branch_ref()
    base = _write(store, "# alpha\n")
    late = _pushed(store, base, b"# alpha\n\nby the host\n").commit
    head = _write(store, "# alpha\n\nby an agent, after git's checks\n")

    reports = _converse(store, f"{base} {late} {branch}")
    assert len(reports) == 1 and reports[0].startswith(f"ng {branch} fetch first:".encode())
    assert store.git.head() == head  # nothing moved, the agent's write kept
    assert (store.root / MEMORY).read_text() == "# alpha\n\nby an agent, after git's checks\n"
    assert not result.exists() or result.read_text() == ""

    refresh_mirror(store.root)  # (as the push's request does, before git starts)
    fresh = _pushed(store, head, b"# alpha\n\nby an agent, after git's checks\n\nhost\n")
    assert _converse(store, f"{head} {fresh.commit} {branch}") == [f"ok {branch}".encode()]
    assert store.git.head() == fresh.commit
    assert (store.root / MEMORY).read_text().endswith("\n\nhost\n")
    assert str(store.git.repo.references[mirror_ref(branch)].target) == fresh.commit
    assert json.loads(result.read_text())["commits"] == [fresh.commit]


def test_a_failure_in_the_hook_gives_the_host_one_line_and_the_server_its_traceback(
        store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    from memoryui.gitserve.app import _pushed as after_the_push
    result = tmp_path / "result.json"
    monkeypatch.setenv("MEMORYUI_PUSH_RESULT", str(result))
    monkeypatch.setenv("MEMORYUI_PUSH_TOKEN_NAME", "ci-host")
    branch = store.git.branch_ref()
    base = _write(store, "# alpha\n")
    pushed = _pushed(store, base, b"# alpha\n\nby the host\n").commit

    def broken(*_args: object) -> None:
        raise RuntimeError("the disk caught fire")
    monkeypatch.setattr("memoryui.gitserve.procreceive.integrate", broken)

    assert _converse(store, f"{base} {pushed} {branch}") == [
        f"ng {branch} memoryui could not integrate the push (RuntimeError)".encode()]
    assert store.git.head() == base
    with caplog.at_level(logging.ERROR, logger="memoryui.gitserve"):
        after_the_push(str(result))
    assert "git push by ci-host failed" in caplog.text
    assert "Traceback" in caplog.text and "the disk caught fire" in caplog.text
