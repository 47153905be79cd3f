"""A repository memoryui did not create is prepared on first open: git's untracked cache
and a commit-graph (with changed-path Bloom filters) for the history pages."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from memoryui.store import Store


def git(root: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "Hand", "GIT_AUTHOR_EMAIL": "hand@example.org",
           "GIT_COMMITTER_NAME": "Hand", "GIT_COMMITTER_EMAIL": "hand@example.org"}
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True,
                          text=True, env=env).stdout


def test_a_repository_memoryui_did_not_create_gets_a_commit_graph(tmp_path: Path) -> None:
    root = tmp_path / "imported"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "memory/world").mkdir(parents=True)
    for i in range(3):
        (root / "memory/world" / f"t{i}.md").write_text(f"# Topic {i}\n")
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", f"topic {i}")
    assert not (root / ".git/objects/info/commit-graph").exists()
    store = Store(root)
    assert git(root, "config", "core.untrackedCache").strip() == "true"
    graph = root / ".git/objects/info"
    assert store.git.maintenance is not None  # started in the background on first open
    assert store.git.maintenance.wait(120) == 0
    assert (graph / "commit-graph").exists() or \
        (graph / "commit-graphs/commit-graph-chain").exists()
    assert len(store.list_files()) == 3
    store.close()
