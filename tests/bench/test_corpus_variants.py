"""The benchmark's corpus variants must be what their names promise.

The huge preset needs 2,000 distinct world topics in Duragent's file-name form, without
changing the names of the smaller presets (figures compare across runs). The imported variant
is the same history without the commit-graph memoryui keeps, and the bench's runner reuses a
corpus only when it is that variant, untouched.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from bench import run
from bench.corpus import PRESETS, build_corpus, world_topic_names


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True,
                          text=True).stdout


def test_huge_preset_has_its_distinct_topics_and_keeps_smaller_names() -> None:
    huge = PRESETS["huge"]
    assert (huge.scopes, huge.days, huge.world_topics) == (500, 365, 2000)
    names = world_topic_names(huge.world_topics)
    assert len(names) == len(set(names)) == 2000
    assert all(re.fullmatch(r"[a-z0-9_-]+", n) for n in names)
    assert names[:PRESETS["large"].world_topics] == world_topic_names(200)
    assert world_topic_names(200)[-1] == "customer-duff-brewing"


def test_imported_variant_is_the_same_history_without_a_commit_graph(tmp_path: Path) -> None:
    written = build_corpus(tmp_path / "written", "small")
    imported = build_corpus(tmp_path / "imported", "small", imported=True)
    assert imported["head"] == written["head"] and imported["imported"] is True
    assert (tmp_path / "written/.git/objects/info/commit-graph").is_file()
    info = tmp_path / "imported/.git/objects/info"
    assert not (info / "commit-graph").exists() and not (info / "commit-graphs").exists()
    assert not (tmp_path / "imported/.git/memoryui").exists()
    assert git(tmp_path / "imported", "status", "--porcelain") == ""


def test_runner_reuses_only_the_variant_it_was_asked_for(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    monkeypatch.setattr(run.tempfile, "gettempdir", lambda: str(tmp_path))
    path, stats = run.corpus_for("small", None)
    assert path == tmp_path / "memoryui-bench-small" and not stats.get("imported")
    ipath, istats = run.corpus_for("small", None, imported=True)
    assert ipath == tmp_path / "memoryui-bench-small-imported" and istats["imported"]
    assert istats["head"] == stats["head"]
    assert not (ipath / ".git/objects/info/commit-graph").exists()
    assert (path / ".git/objects/info/commit-graph").is_file()  # the source is untouched
    again, _ = run.corpus_for("small", None, imported=True)
    assert again == ipath
    git(ipath, "commit-graph", "write", "--reachable")  # no longer what it claims to be
    assert run._reusable(ipath, "small", True) is None
