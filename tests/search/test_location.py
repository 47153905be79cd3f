"""Where the SQLite index lives: a documented file, or the workspace's own .git/memoryui when
unset; never a file named after a missing setting (a stray `None` once landed in the repo)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memoryui.search import SearchIndex, index_path, open_index
from tests.search.helpers import note, paths


@pytest.mark.parametrize("bad", [None, "None", "", "  ", "null", "relative.sqlite3",
                                 Path("None"), 42])
def test_an_index_file_from_a_missing_setting_is_refused(tmp_path, monkeypatch, bad):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match="search index"):
        SearchIndex(bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="search index"):
        open_index(bad, database_url=None)  # type: ignore[arg-type]
    assert os.listdir(tmp_path) == []  # nothing was created where the process runs


def test_an_unset_setting_puts_the_index_inside_the_workspace_git_folder(store, tmp_path,
                                                                         monkeypatch):
    monkeypatch.chdir(tmp_path)
    for unset in (None, "", "   "):
        where = index_path(unset, store.root)
        assert where == store.root / ".git" / "memoryui" / "search.sqlite3"
    idx = open_index(index_path(None, store.root), catch_up_interval=0, background=False)
    idx.attach(store)
    p = note(store, "ops-bot", "here", "marmot sighting\n")
    assert paths(idx.search("marmot")) == [p]
    assert idx.location == str(store.root / ".git/memoryui/search.sqlite3")
    assert (store.root / ".git/memoryui/search.sqlite3").is_file()
    assert not (tmp_path / "None").exists()
    assert store.pending() == []  # the index is not a change in the workspace
    idx.close()


def test_a_set_path_is_used_as_given_and_a_relative_one_from_the_current_folder(
        store, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert index_path(tmp_path / "x" / "s.db", store.root) == tmp_path / "x" / "s.db"
    assert index_path("rel/s.db", store.root) == tmp_path / "rel" / "s.db"
    with pytest.raises(ValueError, match="missing setting"):
        index_path("None", store.root)
