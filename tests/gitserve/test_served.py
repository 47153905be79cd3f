"""The hooks folder of served git: memoryui's hooks, and no hook an earlier version left."""

from __future__ import annotations

import os
from pathlib import Path

from memoryui.gitserve.served import HOOKS, hooks_dir


def test_the_hooks_folder_holds_memoryuis_hooks_and_drops_a_stale_one(tmp_path: Path) -> None:
    folder = tmp_path / "githooks"
    folder.mkdir()
    (folder / "reference-transaction").write_text("#!/bin/sh\nexit 1\n")  # would fail pushes
    assert hooks_dir(tmp_path) == folder
    assert sorted(p.name for p in folder.iterdir()) == sorted(HOOKS)
    for name in HOOKS:
        assert os.access(folder / name, os.X_OK)
        assert f"-m memoryui.gitserve.hooks {name}" in (folder / name).read_text()
