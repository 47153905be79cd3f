"""The first overview after a start on a large workspace comes from the overview saved
before it, says so, and is replaced by the current one built in the background; the
saved rows are the rows the exact overview showed."""

from __future__ import annotations

import importlib
import json
import re

import pytest
from django.utils import timezone

from memoryui.store import Actor, Kind, Store, tree
from memoryui.web.hierarchy import snapshot
from tests.web.test_overview import scope_rows, world_rows

build_mod = importlib.import_module("memoryui.web.hierarchy.build")
BOT = Actor.agent("ops-bot")
SAVED = "saved it at"


@pytest.fixture
def large(tmp_path, settings, monkeypatch):
    """A workspace the tree model treats as large (listed from git's index in the
    background), served by this process; `restart()` forgets it as a new process would."""
    from memoryui.workspace import get_store, reset_store

    monkeypatch.setattr(tree, "SYNC_HISTORY_BELOW", 0)
    settings.MEMORYUI_WORKSPACE = tmp_path / "ws"
    settings.MEMORYUI_SEARCH_DB = tmp_path / "search.sqlite3"
    reset_store()
    s = get_store()
    for i in range(3):
        s.write(s.path_for(Kind.MEMORY, f"bot-{i}"), "# M\n" + "x" * (10 * i) + "\n",
                actor=Actor.agent(f"bot-{i}"), tool="reflect")
    s.write(s.path_for(Kind.WORLD, name="deploys"), "# Deploys\n", actor=Actor.user("alice"),
            tool="ui")
    today = timezone.localdate().isoformat()
    s.write(s.path_for(Kind.DAILY, "bot-1", today), f"# {today}\n\n## 09:00\n\nfound it\n",
            actor=Actor.agent("bot-1"), tool="remember")
    s.tree_model.wait_for_history()

    def restart() -> Store:
        build_mod.wait_for_build(get_store())
        snapshot.wait_for_save(get_store())
        reset_store()
        build_mod._built.pop(str(tmp_path / "ws"), None)
        return get_store()

    yield s, restart
    build_mod.wait_for_build(get_store())
    snapshot.wait_for_save(get_store())
    reset_store()


def row(html: str, scope: str) -> str:
    """One scope's row of the overview's scope table."""
    table = re.search(r'<table class="table ov-scopes">(.*?)</table>', html, re.S).group(1)
    return next(r for r in table.split("<tr>") if f'href="/s/{scope}/"' in r)


def files_shown(html: str) -> str:
    return html.split('class="muted overview-stats">', 1)[1].split("file", 1)[0].strip()


FIRST_LOOK = "reading this workspace for the first time"


def exact(c, store: Store) -> str:
    """The overview once built: at the first start on a large workspace the first request
    gets the first look, and the build runs behind it."""
    c.get("/")
    build_mod.wait_for_build(store)
    page = c.get("/").content.decode()
    assert FIRST_LOOK not in page and SAVED not in page
    return page


def test_after_a_restart_the_saved_overview_answers_and_says_so(large, client_as) -> None:
    store, restart = large
    c = client_as("viewer")
    exact_page = exact(c, store)
    assert files_shown(exact_page) == "5"
    store = restart()
    # changed while no memoryui ran: the saved overview cannot know yet, and says so
    (store.root / "memory/world/native.md").write_text("# Native\n")

    first = c.get("/").content.decode()
    assert SAVED in first and 'http-equiv="refresh"' in first
    assert files_shown(first) == "5"  # as saved, not made up
    assert scope_rows(first) == scope_rows(exact_page) == ["bot-0", "bot-1", "bot-2"]
    assert world_rows(first) == world_rows(exact_page) == ["deploys"]
    # the saved rows are the rows: memory sizes, daily counts, review counts
    assert row(first, "bot-1") == row(exact_page, "bot-1")
    assert 'href="/review/?scope=bot-1">1<' in row(first, "bot-1")

    build_mod.wait_for_build(store)
    current = c.get("/").content.decode()
    assert SAVED not in current and 'http-equiv="refresh"' not in current
    store.tree_model.wait_for(lambda: not store.tree_model.checking, 30)
    current = c.get("/").content.decode()
    assert files_shown(current) == "6" and "native" in current


def test_writes_after_the_restart_show_once_the_build_is_done(large, client_as) -> None:
    store, restart = large
    c = client_as("curator")
    exact(c, store)
    store = restart()
    assert SAVED in c.get("/").content.decode()
    store.write(store.path_for(Kind.MEMORY, "bot-9"), "# new\n", actor=Actor.agent("bot-9"),
                tool="reflect")
    build_mod.wait_for_build(store)
    page = c.get("/").content.decode()
    assert SAVED not in page and "bot-9" in scope_rows(page) and files_shown(page) == "6"


def test_the_first_start_lists_the_scopes_at_once_and_counts_them_behind(large, client_as
                                                                          ) -> None:
    """Nothing saved yet (a large repository seen for the first time): the scopes by name
    and the shared folders at once, saying what is not counted yet, then the exact
    overview."""
    store, restart = large
    (store.git.state_dir / "overview.json").unlink(missing_ok=True)
    c = client_as("viewer")
    page = c.get("/").content.decode()
    assert FIRST_LOOK in page and 'http-equiv="refresh"' in page
    assert "files not counted yet" in page and SAVED not in page
    assert scope_rows(page) == ["bot-0", "bot-1", "bot-2"] and world_rows(page) == ["deploys"]
    assert row(page, "bot-1").count('title="not counted yet">…<') == 8  # no made-up zero
    # sorting or filtering the first look (htmx, as the lead types) works on the names
    part = c.get("/?q=bot-1&sort=-size", HTTP_HX_REQUEST="true",
                 HTTP_HX_TARGET="ov-scopes-table").content.decode()
    assert scope_rows(part) == ["bot-1"]

    build_mod.wait_for_build(store)
    page = c.get("/").content.decode()
    assert FIRST_LOOK not in page and 'http-equiv="refresh"' not in page
    assert files_shown(page) == "5" and 'href="/review/?scope=bot-1">1<' in row(page, "bot-1")


def test_a_small_workspace_is_never_served_from_the_saved_overview(workspace: Store,
                                                                     client_as) -> None:
    from memoryui.workspace import get_store, reset_store

    workspace.write("agents/ops-bot/memory/MEMORY.md", "# M\n", actor=BOT, tool="reflect")
    c = client_as("viewer")
    c.get("/")
    snapshot.wait_for_save(get_store())
    assert (get_store().git.state_dir / "overview.json").exists()
    reset_store()
    build_mod._built.pop(str(workspace.root), None)
    page = c.get("/").content.decode()
    assert SAVED not in page and "ops-bot" in scope_rows(page)


@pytest.mark.parametrize("content", [
    "not json", "[]", '{"format": 1}', '{"format": 99, "layout": "duragent"}',
    '{"format": 1, "layout": "duragent", "files": 1, "size": 1, "last": null, '
    '"saved_at": 0, "review": {}, "world": [["a"]], "skills": [], "directives": [], '
    '"other": [], "global": null, "scopes": []}',
])
def test_an_unreadable_or_foreign_saved_overview_is_ignored(large, client_as, content) -> None:
    store, restart = large
    c = client_as("viewer")
    exact(c, store)
    store = restart()
    (store.git.state_dir / "overview.json").write_text(content)
    page = c.get("/").content.decode()
    assert SAVED not in page and FIRST_LOOK in page
    assert files_shown(exact(c, store)) == "5"


def test_a_saved_overview_of_another_layout_is_not_shown(large, client_as, settings) -> None:
    store, restart = large
    c = client_as("viewer")
    exact(c, store)
    store = restart()
    saved = json.loads((store.git.state_dir / "overview.json").read_text())
    assert saved["layout"] == store.layout.key
    saved["layout"] = "dagu"
    (store.git.state_dir / "overview.json").write_text(json.dumps(saved))
    assert SAVED not in c.get("/").content.decode()


def test_budgets_come_from_the_saved_line_counts(large, client_as, monkeypatch) -> None:
    """The saved overview shows budget meters without reading a file."""
    store, restart = large
    c = client_as("viewer")
    exact_page = exact(c, store)
    restart()
    monkeypatch.setattr(Store, "read", lambda *a, **k: pytest.fail("read a file"))
    first = c.get("/").content.decode()
    assert SAVED in first
    meters = lambda html: [m for m in html.split("<meter")[1:]]  # noqa: E731
    assert [m.split(">")[0] for m in meters(first)] == \
        [m.split(">")[0] for m in meters(exact_page)]
