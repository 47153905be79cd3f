"""Every layout: each kind written through the store, read back, found in the log with the
right author; path -> address -> path is the identity."""

from __future__ import annotations

from pathlib import Path

import pytest

from memoryui.store import LAYOUTS, Actor, Address, InvalidName, Kind, Store
from memoryui.store.layout import jutul_workspace_hash, zerostack_project_slug

SAMPLE_NAMES = {
    Kind.WORLD: "people",
    Kind.DAILY: "2026-11-20",
    Kind.NOTE: "deploy notes",
    Kind.SKILL: "roll-back",
    Kind.DIRECTIVE: "memory",
}
SCOPES = {"duragent": "ops-bot", "dagu": "nightly_etl", "zerostack": "api-2a0e6f52",
          "jutul": "3f2a9c1b7d4e"}


def addresses(layout_key: str) -> list[Address]:
    lay = LAYOUTS[layout_key]
    out = []
    for pat in lay.patterns:
        scope = SCOPES[layout_key] if pat.scoped else None
        name = SAMPLE_NAMES.get(pat.kind) if pat.named else None
        out.append(Address(pat.kind, scope, name))
    return out


@pytest.mark.parametrize("layout_key", sorted(LAYOUTS))
def test_every_kind_round_trips_and_is_attributed(tmp_path: Path, layout_key: str) -> None:
    store = Store(tmp_path / "ws", layout_key)
    for addr in addresses(layout_key):
        path = store.layout.path(addr)
        assert store.layout.address(path) == addr, path
        actor = Actor.agent(addr.scope) if addr.scope else Actor.user("alice")
        text = f"# {addr.kind.value}\n\nwritten for {path}\n"
        result = store.write(path, text, actor=actor, tool="test-write")
        assert result.commit, f"{path} was not committed"
        assert store.read(path) == text
        [last] = store.log(path=path, limit=1)
        assert last.author == actor.name
        assert last.actor == actor.trailer
        assert last.tools == ["test-write"]
        assert [f.path for f in last.files] == [path]
    assert store.pending() == []


@pytest.mark.parametrize("layout_key", sorted(LAYOUTS))
def test_unknown_paths_have_no_address(layout_key: str) -> None:
    lay = LAYOUTS[layout_key]
    for path in ["README.md", "agents/x/other.txt", "memory/dags/a/b/MEMORY.md",
                 "skills/Bad_Name/SKILL.md", "projects/p/daily/2026-13-45.md"]:
        assert lay.address(path) is None, path


def test_kind_missing_from_layout_is_refused() -> None:
    with pytest.raises(InvalidName, match="no world"):
        LAYOUTS["dagu"].path(Address(Kind.WORLD, None, "people"))
    with pytest.raises(InvalidName, match="no daily"):
        LAYOUTS["jutul"].path(Address(Kind.DAILY, "abc", "2026-01-01"))


def test_jutul_index_is_not_a_note() -> None:
    lay = LAYOUTS["jutul"]
    assert lay.address("workspaces/abc/memory/MEMORY.md") == Address(Kind.MEMORY, "abc")
    with pytest.raises(InvalidName, match="reserved"):
        lay.path(Address(Kind.NOTE, "abc", "MEMORY"))


def test_scope_of_attributes_any_file_below_a_scope() -> None:
    lay = LAYOUTS["duragent"]
    assert lay.scope_of("agents/ops-bot/memory/daily/2026-01-01.md") == "ops-bot"
    assert lay.scope_of("agents/ops-bot/random/file.txt") == "ops-bot"
    assert lay.scope_of("memory/world/people.md") is None


@pytest.mark.parametrize("cwd,slug", [
    ("/home/alice/projects/api", "api-2a0e6f52"),
    ("/home/alice/My Project", "My-Project-0f0c3c84"),
    ("/srv/zerostack", "zerostack-86cf6c5e"),
    ("/", "root-860189fe"),
])
def test_zerostack_project_slug_vectors(cwd: str, slug: str) -> None:
    assert zerostack_project_slug(cwd) == slug


def test_zerostack_slug_without_cwd_is_default() -> None:
    assert zerostack_project_slug(None) == "default"


def test_jutul_workspace_hash_is_sha256_of_resolved_path(tmp_path: Path) -> None:
    import hashlib

    expected = hashlib.sha256(str(tmp_path.resolve()).encode()).hexdigest()[:12]
    assert jutul_workspace_hash(tmp_path) == expected
    assert jutul_workspace_hash(tmp_path / "x" / "..") == expected


def test_history_filters_by_kind_and_scope(tmp_path: Path) -> None:
    store = Store(tmp_path / "ws")
    a, b = Actor.agent("a1"), Actor.agent("b2")
    store.write(store.path_for("daily", "a1", "2026-01-01"), "x\n", actor=a, tool="remember")
    store.write(store.path_for("memory", "a1"), "m\n", actor=a, tool="reflect")
    store.write(store.path_for("daily", "b2", "2026-01-01"), "y\n", actor=b, tool="remember")
    store.write(store.path_for("world", name="people"), "p\n", actor=Actor.user("alice"),
                tool="edit")
    assert {c.author for c in store.log(kind="daily")} == {"a1", "b2"}
    assert [c.tools for c in store.log(scope="a1")] == [["reflect"], ["remember"]]
    assert [c.author for c in store.log(kind="daily", scope="b2")] == ["b2"]
    assert [c.author for c in store.log(actor="user:alice")] == ["alice"]
    assert [c.author for c in store.log(actor="b2")] == ["b2"]
    assert store.log(kind="world", scope=None)[0].files[0].path == "memory/world/people.md"
