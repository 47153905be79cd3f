"""Appends to a daily log go in place (appends.append_in_place): a reader following the log
sees each entry whole, a second name of the file is never written through, a killed
writer or a full disk leaves the last good log, and every entry is committed."""

from __future__ import annotations

import logging
import os
import re
import signal
import subprocess
from pathlib import Path

import pytest

from memoryui.store import Actor, DiskFull, InvalidName, Store, appends, gitrepo, journaled, lognote
from memoryui.store.appends import PAGE
from tests import fulldisk
from tests.fulldisk import Disk
from tests.secrets.samples import GITHUB
from tests.store.test_durability import started

LOG = "agents/a/memory/daily/2026-11-24.md"
HEADER = "# 2026-11-24\n"
BOT = Actor.agent("a")
small_disk = fulldisk.small_disk  # the fixture


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True,
                          check=True).stdout


def test_a_reader_following_the_log_sees_each_entry_appended_in_place(tmp_path: Path) -> None:
    store = Store(tmp_path / "ws")
    store.append(LOG, "\n## 09:00\n\nfirst\n", header=HEADER, actor=BOT, tool="remember")
    path = store.root / LOG
    inode = path.stat().st_ino
    with open(path, "rb") as follower:  # as `tail -f` holds it
        follower.seek(0, os.SEEK_END)
        store.append(LOG, "\n## 09:05\n\nsecond\n", actor=BOT, tool="remember")
        assert follower.read() == b"\n## 09:05\n\nsecond\n"
    assert path.stat().st_ino == inode
    store.flush()
    assert git(store.root, "show", f"HEAD:{LOG}") == path.read_text()
    assert git(store.root, "status", "--porcelain") == ""
    store.close()


def test_an_entry_over_a_page_boundary_is_written_whole_by_a_new_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Within one page the kernel appends all or nothing; past it the log is replaced
    atomically instead (a new file, the log copied in the kernel, so a follower keeps the
    old one), and the next entry still goes in on the note, without reading the log."""
    store = Store(tmp_path / "ws", commit_delay=60)
    store.append(LOG, "\n## 09:00\n\nfirst\n", header=HEADER, actor=BOT, tool="remember")
    path = store.root / LOG
    inode = path.stat().st_ino
    long = "\n## 09:05\n\n" + "x" * PAGE + "\n"
    with open(path, "rb") as follower:
        store.append(LOG, long, actor=BOT, tool="remember")
        assert follower.read() == (HEADER + "\n## 09:00\n\nfirst\n").encode()
    assert path.stat().st_ino != inode
    assert path.read_text() == HEADER + "\n## 09:00\n\nfirst\n" + long
    assert not [p.name for p in path.parent.iterdir() if p.name != path.name]  # no temp left

    def no_read(*_args: object) -> None:
        raise AssertionError("the log was read again")
    monkeypatch.setattr(lognote, "crc_of_log", no_read)
    store.append(LOG, "\n## 09:06\n\nnext\n", actor=BOT, tool="remember")
    store.flush()
    expected = HEADER + "\n## 09:00\n\nfirst\n" + long + "\n## 09:06\n\nnext\n"
    assert path.read_text() == expected
    assert git(store.root, "show", f"HEAD:{LOG}") == expected
    assert git(store.root, "status", "--porcelain") == ""
    store.close()


@pytest.mark.parametrize("kernel", ["refuses", "absent"])
def test_an_entry_over_a_page_is_copied_where_the_kernel_cannot_copy(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kernel: str) -> None:
    """A file system that refuses `copy_file_range` (or a Python without it): the log is
    copied through user space, with the same result."""
    if kernel == "absent":
        monkeypatch.delattr(os, "copy_file_range", raising=False)
    else:
        def refuse(*_args: object) -> int:
            raise OSError(18, "Invalid cross-device link")  # EXDEV
        monkeypatch.setattr(os, "copy_file_range", refuse)
    store = Store(tmp_path / "ws")
    store.append(LOG, "y" * (PAGE - len(HEADER) - 4) + "\n", header=HEADER, actor=BOT,
                 tool="remember")
    before = (store.root / LOG).read_text()

    def no_update(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("the entry took the whole-file path")
    monkeypatch.setattr(journaled, "write", no_update)
    store.append(LOG, "\n## 09:05\n\nover the page\n", actor=BOT, tool="remember")
    assert (store.root / LOG).read_text() == before + "\n## 09:05\n\nover the page\n"
    assert git(store.root, "status", "--porcelain") == ""
    store.close()


def test_a_log_renamed_away_while_an_entry_crosses_a_page_is_left_alone(
        tmp_path: Path) -> None:
    """The copy is made only while the log's name is still the file the entry was checked
    against; otherwise nothing is written and the whole-file path decides."""
    folder = tmp_path / "daily"
    folder.mkdir()
    log = folder / "2026-11-24.md"
    log.write_bytes(b"x" * (PAGE - 4) + b"\n")
    src = os.open(log, os.O_RDONLY)
    try:
        st = os.fstat(src)
        (folder / "other.md").write_text("someone else's\n")
        os.replace(folder / "other.md", log)
        dfd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        try:
            assert appends.append_by_copy(dfd, log.name, src, st, b"entry over the page\n") \
                is None
        finally:
            os.close(dfd)
    finally:
        os.close(src)
    assert log.read_text() == "someone else's\n"
    assert sorted(p.name for p in folder.iterdir()) == [log.name]


def test_a_second_name_of_the_log_is_never_written_through(tmp_path: Path) -> None:
    store = Store(tmp_path / "ws")
    store.append(LOG, "\n## 09:00\n\nfirst\n", header=HEADER, actor=BOT, tool="remember")
    store.flush()
    outside = tmp_path / "outside.md"
    outside.write_text("not memoryui's\n")
    (store.root / LOG).unlink()
    os.link(outside, store.root / LOG)  # the log is now a second name of a file outside
    with pytest.raises(InvalidName, match="hard link"):
        store.append(LOG, "\n## 09:05\n\nsecond\n", actor=BOT, tool="remember")
    # neither written through nor read into the log (and so never into a commit)
    assert outside.read_text() == "not memoryui's\n"
    assert os.stat(store.root / LOG).st_nlink == 2
    store.flush()
    assert b"not memoryui's" not in subprocess.run(
        ["git", "cat-file", "--batch-all-objects", "--batch"], cwd=store.root,
        capture_output=True, check=True).stdout
    store.close()


@pytest.mark.parametrize("case", ["in place", "by a new file"])
def test_a_full_disk_leaves_the_last_good_log_and_appends_resume(
        small_disk: Disk, case: str) -> None:
    """An entry in place that needs a new block (the log ends on a page boundary), or one
    that crosses a page (the log copied into a new file, renamed over it), meets a full
    disk: DiskFull, the log as it was, no temporary file left; the next entry goes in."""
    length = PAGE if case == "in place" else 3 * PAGE - 5
    store = Store(small_disk.path / "ws")
    try:
        store.append(LOG, "x" * (length - len(HEADER) - 1) + "\n", header=HEADER, actor=BOT,
                     tool="remember")
        good = (store.root / LOG).read_bytes()
        assert len(good) == length
        store.flush()
        small_disk.fill()
        with pytest.raises(DiskFull):
            store.append(LOG, "\n## 09:05\n\nlost\n", actor=BOT, tool="remember")
        assert (store.root / LOG).read_bytes() == good
        assert [p.name for p in (store.root / LOG).parent.iterdir()] == [Path(LOG).name]
        small_disk.free()
        store.append(LOG, "\n## 09:06\n\nkept\n", actor=BOT, tool="remember")
        assert store.read(LOG) == good.decode() + "\n## 09:06\n\nkept\n"
        store.flush()
        assert store.pending() == []
    finally:
        store.close()


APPENDER = """
import sys
from memoryui.store import Actor, Store
store = Store(sys.argv[1], commit_delay=0.05)
print("ready", flush=True)
i = 0
while True:
    body = ("y" * 3000) if i % 3 == 0 else "z" * (i % 200)
    store.append("agents/a/memory/daily/2026-11-24.md", f"\\n## 10:00\\n\\n<{i}:{body}>\\n",
                 header="# 2026-11-24\\n", actor=Actor.agent("a"), tool="remember")
    print(i, flush=True)
    i += 1
"""
ENTRY = re.compile(r"\n## 10:00\n\n<(\d+):(y{3000}|z*)>\n")


def test_a_writer_killed_mid_append_leaves_whole_entries_only(tmp_path: Path) -> None:
    """Killed at 30 points of its appends (in place, or whole files past a page), the log
    is always the header and whole entries; the next writer goes on from it."""
    root = tmp_path / "ws"
    Store(root).close()
    script = tmp_path / "appender.py"
    script.write_text(APPENDER)
    for n in range(30):
        proc = started(script, root)
        for _ in range(1 + n % 5):  # kill it some appends in, while it makes the next
            proc.stdout.readline()
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        proc.stdout.close()
        text = (root / LOG).read_text()
        assert text.startswith(HEADER)
        rest = text[len(HEADER):]
        whole = "".join(m.group(0) for m in ENTRY.finditer(rest))
        assert whole == rest, f"a torn entry after kill {n}: {rest[len(whole):][:80]!r}"
    store = Store(root)
    store.flush()
    # Every acknowledged entry is committed; one written but killed before its journal
    # line shows as a pending change of the log (nothing is lost either way).
    assert (root / LOG).read_text().startswith(git(root, "show", f"HEAD:{LOG}"))
    assert {e.path for e in store.pending()} <= {LOG}
    store.close()


SECRET = f"token {GITHUB}"

# (what the log holds before, what is appended): cases the entry path takes and cases it
# leaves to `update`; either way the result must be the one `update` gives.
CASES = {
    "an entry to a log": (b"# d\n\n## 09:00\n\nfirst\n", "\n## 09:05\n\nsecond\n"),
    "no newline at the end": (b"# d\n\nhalf a line", " goes on\n"),
    "a NUL written natively": (b"# d\n\x00\n", "\n## 09:05\n\nplain\n"),
    "not UTF-8": (b"# d\n\xff\xfe\n", "\nnext\n"),
    "non-ASCII UTF-8": ("# d\n\nh\u00e9las \u2014 \U0001f600\n".encode(), "\nencore \u00e9\n"),
    "across a page": (b"x" * (PAGE - 10) + b"\n", "\n## 09:05\n\nlonger than ten bytes\n"),
    "a secret": (b"# d\n", f"\n{SECRET}\n"),
    "a NUL appended": (b"# d\n", "bad\x00\n"),
    "a lone surrogate": (b"# d\n", "bad \ud800\n"),
    "an empty file": (b"", "\nfirst\n"),
}


@pytest.mark.parametrize("case", CASES)
def test_an_append_gives_what_a_whole_file_update_gives(tmp_path: Path, case: str) -> None:
    """`append` takes a path of its own for an entry (no decoding or re-encoding of the
    log); whatever it takes, file, commit and refusal are those of `update`."""
    before, text = CASES[case]
    outcomes = []
    for name, write in (("append", lambda s: s.append(LOG, text, header=HEADER, actor=BOT,
                                                         tool="remember")),
                        ("update", lambda s: s.update(LOG, lambda old: (old or HEADER) + text
                                                      if old else HEADER + text,
                                                      actor=BOT, tool="remember"))):
        store = Store(tmp_path / name)
        (store.root / LOG).parent.mkdir(parents=True)
        (store.root / LOG).write_bytes(before)
        try:
            result = write(store)
            outcome = (result.changed, result.data, result.text)
        except Exception as exc:  # noqa: BLE001 - the refusal is what is compared
            outcome = (type(exc).__name__, str(exc))
        store.flush()
        committed = git(store.root, "show", f"HEAD:{LOG}") if outcome[0] is True else None
        outcomes.append((outcome, (store.root / LOG).read_bytes(), committed,
                         git(store.root, "status", "--porcelain")))
        store.close()
    assert outcomes[0] == outcomes[1]


def test_an_entry_appended_to_a_flagged_log_keeps_its_findings(tmp_path: Path) -> None:
    store = Store(tmp_path / "ws", secrets="flag")
    store.append(LOG, f"\n{SECRET}\n", header=HEADER, actor=BOT, tool="remember")
    found = store.secrets.record.get(LOG)
    assert [f.line for f in found] == [3]
    store.append(LOG, "\n## 09:05\n\nclean\n", actor=BOT, tool="remember")
    assert store.secrets.record.get(LOG) == found
    store.append(LOG, f"\nagain {SECRET}\n", actor=BOT, tool="remember")
    assert [f.line for f in store.secrets.record.get(LOG)] == [3, 9]


# -- the note on the path lock (lognote): entries without reading the log ----------------

def _entries(store: Store, *texts: str, actors: tuple[Actor, ...] = (BOT,)) -> None:
    for i, text in enumerate(texts):
        store.append(LOG, text, header=HEADER, actor=actors[i % len(actors)], tool="remember")


def test_entries_after_entries_are_committed_version_by_version(tmp_path: Path) -> None:
    """The second and later entries go in on the first one's note (no read of the log);
    each is still its own commit holding exactly the log as that entry left it."""
    store = Store(tmp_path / "ws", commit_delay=60)
    texts = [f"\n## 09:0{i}\n\nentry {i}\n" for i in range(4)]
    _entries(store, *texts, actors=(BOT, Actor.agent("b")))  # a commit per author per tick
    store.flush()
    shas = git(store.root, "log", "--format=%H", "--", LOG).split()
    versions = [git(store.root, "show", f"{sha}:{LOG}") for sha in reversed(shas)]
    assert versions == [HEADER + "".join(texts[:n]) for n in range(1, 5)]
    assert git(store.root, "status", "--porcelain") == ""
    store.close()


@pytest.mark.parametrize("kept", ["kept", "read back"])
def test_ticks_build_on_the_log_they_committed_or_on_one_committed_by_hand(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kept: str) -> None:
    """A tick keeps the bytes it committed and the next one appends to them (or, past
    gitrepo.COMMITTED_BYTES, reads the blob back); they are found by the blob id HEAD has,
    so a version a person committed in between is the one the entries go on."""
    if kept == "read back":
        monkeypatch.setattr(gitrepo, "COMMITTED_BYTES", 0)
    store = Store(tmp_path / "ws", commit_delay=60)
    texts = [f"\n## 09:0{i}\n\nentry {i}\n" for i in range(5)]
    _entries(store, texts[0])
    store.flush()
    _entries(store, texts[1])
    store.flush()
    path = store.root / LOG
    path.write_bytes(path.read_bytes() + b"by hand\n")
    git(store.root, "add", LOG)
    git(store.root, "-c", "user.name=Hand", "-c", "user.email=hand@example.org",
        "commit", "-qm", "by hand")
    _entries(store, *texts[2:], actors=(BOT, Actor.agent("b")))  # a commit each
    store.flush()
    shas = git(store.root, "log", "--format=%H", "--", LOG).split()
    versions = [git(store.root, "show", f"{sha}:{LOG}") for sha in reversed(shas)]
    by_hand = HEADER + "".join(texts[:2]) + "by hand\n"
    assert versions == [HEADER + texts[0], HEADER + "".join(texts[:2]), by_hand,
                        by_hand + texts[2], by_hand + "".join(texts[2:4]),
                        by_hand + "".join(texts[2:])]
    assert git(store.root, "status", "--porcelain") == ""
    store.close()


def test_a_log_changed_from_outside_is_read_again_before_the_next_entry(tmp_path: Path) -> None:
    """An outside edit changes the file's stat, so the note no longer holds: the next entry
    reads the log, and a log left without a final newline goes the whole-file way."""
    store = Store(tmp_path / "ws", commit_delay=60)
    _entries(store, "\n## 09:00\n\nfirst\n")
    path = store.root / LOG
    path.write_bytes(path.read_bytes() + b"typed by hand, no newline")
    _entries(store, "\n## 09:01\n\nsecond\n")
    store.flush()
    expected = HEADER + "\n## 09:00\n\nfirst\ntyped by hand, no newline\n## 09:01\n\nsecond\n"
    assert path.read_text() == expected  # what `update` gives (it adds nothing of its own)
    assert git(store.root, "show", f"HEAD:{LOG}") == expected
    assert git(store.root, "status", "--porcelain") == ""
    store.close()


def test_a_note_that_does_not_match_the_log_is_caught_when_committed(
        tmp_path: Path) -> None:
    """A note that holds the file's stat but not its content (a same-size edit within one
    tick of the clock): the commit checks the version against the CRC, finds it is not
    the log's, and leaves the log as a pending change; nothing is committed wrong or lost."""
    store = Store(tmp_path / "ws", commit_delay=60)
    _entries(store, "\n## 09:00\n\nfirst\n")
    store.flush()
    head = store.head()
    path = store.root / LOG
    lock = store.git.path_lock(LOG)
    with lock:
        lognote.write(lock, LOG, os.stat(path), 12345)  # a CRC that is not the log's
    _entries(store, "\n## 09:01\n\nsecond\n")
    store.flush()
    assert store.head() == head
    assert path.read_text().endswith("second\n")
    assert [e.path for e in store.pending()] == [LOG]
    store.close()


def test_a_torn_note_is_no_note(tmp_path: Path) -> None:
    store = Store(tmp_path / "ws", commit_delay=60)
    _entries(store, "\n## 09:00\n\nfirst\n")
    lock = store.git.path_lock(LOG)
    with lock:
        lock.set_note(b"\xff" * lognote.SIZE)
    _entries(store, "\n## 09:01\n\nsecond\n")
    store.flush()
    assert git(store.root, "show", f"HEAD:{LOG}") == \
        HEADER + "\n## 09:00\n\nfirst\n\n## 09:01\n\nsecond\n"
    store.close()


def test_entries_replayed_after_a_crash_do_not_revert_the_log(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A committer that died after moving the branch and before removing its batch: the
    entries in it are found committed (or superseded), never committed again or older."""
    store = Store(tmp_path / "ws", commit_delay=60)
    _entries(store, "\n## 09:00\n\nfirst\n", "\n## 09:01\n\nsecond\n")
    batch = store.git.journal.read_bytes()
    store.flush()
    _entries(store, "\n## 09:02\n\nthird\n")
    (store.git.state_dir / "batch-00000000000000000001-1.jsonl").write_bytes(batch)
    with caplog.at_level(logging.ERROR, logger="memoryui.store"):
        store.flush()
    assert "does not match" not in caplog.text
    assert git(store.root, "show", f"HEAD:{LOG}") == (store.root / LOG).read_text()
    assert (store.root / LOG).read_text().endswith("second\n\n## 09:02\n\nthird\n")
    assert len(git(store.root, "log", "--format=%H", "--", LOG).split()) == 2  # a tick each
    assert git(store.root, "status", "--porcelain") == ""
    store.close()
