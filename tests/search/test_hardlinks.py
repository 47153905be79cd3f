"""A hard link in the workspace (a second name of a file outside it, or of another scope's
memory) is never read into the search index, by catch-up, by an update or by a rebuild."""

from __future__ import annotations

import os
from pathlib import Path

from memoryui.search import SearchIndex
from memoryui.store import Store
from tests.search.helpers import note, paths


def test_a_hard_link_to_a_file_outside_the_workspace_is_never_indexed(
        store: Store, index: SearchIndex, tmp_path: Path) -> None:
    secret = tmp_path / "outside" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text("xylophonist-credentials-7731\n")
    note(store, "ops-bot", "plain", "an ordinary note\n")
    key = store.path_for("note", "ops-bot", "key")
    os.link(secret, store.root / key)
    index.catch_up()
    assert index.search("xylophonist").hits == []
    index.update([key])  # a listener told about the path must not read it either
    assert index.search("xylophonist").hits == []
    index.rebuild()
    assert index.search("xylophonist").hits == []
    assert index.count() == 1


def test_a_hard_link_to_another_scopes_memory_is_never_found_under_the_link(
        store: Store, index: SearchIndex) -> None:
    theirs = note(store, "billing-agent", "vendors", "the marmoset vendor invoices weekly\n")
    assert paths(index.search("marmoset")) == [theirs]
    alias = store.path_for("note", "ops-bot", "vendors")
    (store.root / alias).parent.mkdir(parents=True)
    os.link(store.root / theirs, store.root / alias)
    index.catch_up()
    index.update([alias, theirs])
    assert alias not in paths(index.search("marmoset"))
    index.rebuild()
    assert alias not in paths(index.search("marmoset"))
    os.unlink(store.root / alias)  # the curator discards the link: the note is found again
    store.notify([alias, theirs])
    assert paths(index.search("marmoset")) == [theirs]
