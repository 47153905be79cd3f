"""What a search looks at before it answers: the journaled writes and the files of the
latest commits, newest first and bounded, and of those the ones the index is behind on."""

from __future__ import annotations

import json
import urllib.parse
import uuid
from pathlib import Path

from memoryui.search import recent
from memoryui.search.documents import stamp
from memoryui.store import Store
from tests.api.realserver import RealServer
from tests.search.helpers import BOT, git_as, note

SEARCHES = 20


def test_the_journal_and_the_latest_commits_are_looked_at_not_older_ones(tmp_path: Path
                                                                         ) -> None:
    store = Store(tmp_path / "ws", commit_delay=30)
    try:
        old = note(store, "ops-bot", "old", "from last week\n")
        store.flush()
        git_as(store.root, "commit", "--allow-empty", "-qm", "a week ago",
               when=1_700_000_000)  # HEAD is old: the walk stops there
        fresh = note(store, "ops-bot", "fresh", "just now\n")
        assert recent.RecentWrites().written(store, 30.0) == {fresh}  # journaled
        store.flush()
        assert recent.RecentWrites().written(store, 30.0) == {fresh}  # committed a moment ago
        assert recent.RecentWrites().written(store, -1.0) == set()  # the window has passed
        assert old not in recent.RecentWrites().written(store, 30.0)
    finally:
        store.close()


def test_a_commit_of_many_files_is_left_to_the_catch_up(store: Store, monkeypatch) -> None:
    monkeypatch.setattr(recent, "MAX_FILES", 5)
    for i in range(8):
        (store.root / "world").mkdir(exist_ok=True)
        (store.root / "world" / f"topic-{i}.md").write_text(f"topic {i}\n")
    git_as(store.root, "add", "-A")
    git_as(store.root, "commit", "-qm", "a sync brought eight topics")
    assert len(recent.RecentWrites().written(store, 30.0)) == 5


def test_only_files_whose_index_row_is_not_the_disk_are_behind(store: Store) -> None:
    same = note(store, "ops-bot", "same", "indexed as it is\n")
    changed = note(store, "ops-bot", "changed", "indexed, then appended to\n")
    gone = "agents/ops-bot/memory/notes/gone.md"
    st = (store.root / same).stat()
    held = {same: (st.st_size, stamp(st.st_mtime)), changed: (1, 1), gone: (5, 5)}
    store.write(changed, "indexed, then appended to\nmore\n", actor=BOT, tool="test")
    never = "agents/ops-bot/memory/notes/never.md"
    assert recent.behind(store.root, [same, changed, gone, never], held) == [changed, gone]


def test_an_agent_finds_what_it_just_remembered_whichever_worker_answers(tmp_path: Path
                                                                          ) -> None:
    """Through the real server, two workers beside the committer, each call on a fresh
    connection (so either worker may answer): the search right after each `remember`, and a
    busy log's too, finds the entry, whether or not the committer has indexed it yet."""
    server = RealServer(tmp_path, workers=2)
    server.migrate()
    token = server.token("alpha")
    with server:
        server.start()
        for i in range(SEARCHES):
            word = f"zq{uuid.uuid4().hex[:12]}"
            status, body = server.call_tool(token, "alpha", "remember",
                                            {"content": f"{'background ' * 40}{i} {word}"})
            assert status == 200, body
            found = server.request("GET", f"/api/v1/search?{urllib.parse.urlencode({'q': word})}",
                                   headers={"Authorization": f"Bearer {token}"})
            assert found[0] == 200, found
            assert [r["kind"] for r in json.loads(found[1])["results"]] == ["daily"], (i, word)
