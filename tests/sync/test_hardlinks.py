"""A hard link in a clone (a second name of a file outside the workspace) is never merged
into, written through, committed or pushed when the remote brings a new version of it."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from memoryui.store import walk

SECRET = "SECRET_KEY = 'server-secret-never-leak-42'\n"


def test_a_remote_change_to_a_hard_linked_path_leaves_it_alone(instance, native, file_url,
                                                               bare: Path,
                                                               tmp_path: Path) -> None:
    host = native(file_url)
    mem = host.reflect("# Memory\n\n- a\n")
    host.commit()
    host.push()
    a = instance("a", file_url)
    assert a.round(blocking=True).error is None
    secret = tmp_path / "secret.key"
    secret.write_text(SECRET)
    (a.store.root / mem).unlink()
    os.link(secret, a.store.root / mem)  # planted natively in the clone

    host.reflect("# Memory\n\n- a\n- b (from the remote)\n")
    host.commit()
    host.push()
    assert a.round(blocking=True).error is None
    assert secret.read_text() == SECRET  # not written through
    assert os.stat(a.store.root / mem).st_nlink == 2  # left as it was, not merged into
    [entry] = a.store.pending()
    assert (entry.path, entry.refused) == (mem, walk.HARD_LINK_REASON)
    assert a.round(blocking=True).error is None
    pushed = subprocess.run(["git", "cat-file", "--batch-all-objects", "--batch"], cwd=bare,
                            capture_output=True, check=True).stdout
    assert SECRET.encode() not in pushed
