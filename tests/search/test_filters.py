"""Filters narrow a search (scope, kind, dates) and a scope token sees exactly what the layout's
one read rule lets it read, on both backends."""

from __future__ import annotations

import pytest

from memoryui.search import QueryError
from memoryui.store import Store
from tests.search.helpers import ALICE, daily, note, paths


def test_filters_by_scope_kind_and_date(store, index):
    d1 = daily(store, "ops-bot", "2026-01-10", ("09:00", "Rotated the vault token."))
    d2 = daily(store, "ops-bot", "2026-02-20", ("09:00", "Rotated the vault token again."))
    d3 = daily(store, "billing-agent", "2026-02-21", ("10:00", "Vault token rotated for billing."))
    n1 = note(store, "ops-bot", "vault", "# Vault\n\nToken rotation runbook.\n")
    world = store.path_for("world", None, "vault")
    store.write(world, "# Vault\n\nShared token facts.\n", actor=ALICE, tool="test")

    assert set(paths(index.search("token", scope="ops-bot"))) == {d1, d2, n1}
    assert set(paths(index.search("token", kind="daily"))) == {d1, d2, d3}
    assert set(paths(index.search("token", kind=["note", "world"]))) == {n1, world}
    assert set(paths(index.search("token", kind="daily", date_from="2026-02-01"))) == {d2, d3}
    assert set(paths(index.search("token", kind="daily", date_to="2026-02-20"))) == {d1, d2}
    assert paths(index.search("token", kind="daily", date_from="2026-01-05",
                              date_to="2026-01-31")) == [d1]
    assert index.search("token", scope="nobody").hits == []


def test_a_date_range_across_months_and_years(store, index):
    got = {daily(store, "ops-bot", d, ("08:00", "heartbeat ok"))
           for d in ("2025-12-30", "2026-01-01", "2026-01-31", "2026-02-01", "2026-03-02")}
    res = index.search("heartbeat", date_from="2025-12-31", date_to="2026-02-01")
    assert {h.date for h in res.hits} == {"2026-01-01", "2026-01-31", "2026-02-01"}
    assert len(got) == 5


def test_a_bad_date_is_a_clear_error(store, index):
    with pytest.raises(QueryError, match="not a date"):
        index.search("x", date_from="last tuesday")


@pytest.mark.parametrize("field, value, needle", [
    ("date_to", "9999-12-31", "out of range"),
    ("date_from", "0001-01-01", "out of range"),
    ("date_from", "1899-12-31", "out of range"),
    ("date_to", "3000-01-01", "out of range"),
    ("date_to", "2026-02-30", "not a date"),
    ("date_from", "2026-1-5", "not a date"),
    ("date_to", "20260105", "not a date"),
])
def test_an_out_of_range_or_invalid_date_is_a_400_naming_the_filter(store, index, field, value,
                                                                       needle):
    daily(store, "ops-bot", "2026-01-10", ("09:00", "token"))
    with pytest.raises(QueryError, match=needle) as err:
        index.search("token", **{field: value})
    assert err.value.status == 400 and err.value.field == field


def test_the_widest_allowed_range_finds_everything_at_once(store, index):
    d = daily(store, "ops-bot", "2026-01-10", ("09:00", "token"))
    n = note(store, "ops-bot", "t", "token\n")
    res = index.search("token", date_from="1900-01-01", date_to="2999-12-31")
    assert set(paths(res)) == {d, n}
    assert paths(index.search("token", kind="daily", date_from="2027-01-01")) == []


def test_a_reversed_date_range_is_refused(store, index):
    with pytest.raises(QueryError, match="after the end date"):
        index.search("token", date_from="2026-03-01", date_to="2026-02-01")


def test_an_unknown_kind_is_refused(store, index):
    with pytest.raises(QueryError, match="unknown kind"):
        index.search("token", kind='note" OR "x')


def test_visible_to_shows_one_scope_plus_shared_files(store, index):
    mine = note(store, "ops-bot", "secret", "the launch codes are here\n")
    theirs = note(store, "billing-agent", "secret", "the launch codes are elsewhere\n")
    world = store.path_for("world", None, "launch")
    store.write(world, "launch codes policy\n", actor=ALICE, tool="test")
    glob = store.path_for("global")
    store.write(glob, "launch codes live in the vault\n", actor=ALICE, tool="test")
    skill = store.path_for("skill", None, "launching")
    store.write(skill, "---\nname: launching\ndescription: x\n---\nlaunch codes\n",
                actor=ALICE, tool="test")
    directive = store.path_for("directive", None, "launching")
    store.write(directive, "launch codes need two people\n", actor=ALICE, tool="test")
    seen = set(paths(index.search("launch codes", visible_to="ops-bot")))
    assert seen == {mine, world, glob, skill, directive}
    assert theirs in paths(index.search("launch codes"))


def _plant(store: Store) -> list[str]:
    """One file of every sort a workspace holds, all containing the word 'zebra'."""
    out = []
    for scope in ("ops-bot", "billing-agent"):
        out.append(note(store, scope, "z", "zebra\n"))
        out.append(daily(store, scope, "2026-01-02", ("09:00", "zebra")))
        for kind in ("memory", "scratchpad"):
            p = store.path_for(kind, scope)
            store.write(p, "zebra\n", actor=ALICE, tool="t")
            out.append(p)
        p = store.path_for("directive", scope, "zed")
        store.write(p, "zebra\n", actor=ALICE, tool="t")
        out.append(p)
    for kind, name in (("world", "zoo"), ("global", None), ("skill", "zoo"),
                       ("directive", "zoo")):
        p = store.path_for(kind, None, name)
        text = "---\nname: zoo\ndescription: z\n---\nzebra\n" if kind == "skill" else "zebra\n"
        store.write(p, text, actor=ALICE, tool="t")
        out.append(p)
    # Files the layout cannot place, and a file inside a skill's folder.
    for p in ("skills/zoo/notes.md", "misc/zebra.md", "README.md", "agents/zebra.md",
              "memory/world/odd/deep.md"):
        (store.root / p).parent.mkdir(parents=True, exist_ok=True)
        (store.root / p).write_text("zebra\n")
        out.append(p)
    return out


def test_search_visibility_is_exactly_the_layouts_read_rule(store, index):
    everything = set(_plant(store))
    index.catch_up()  # the files written natively
    assert index.paths_matching("zebra") == everything
    for scope in ("ops-bot", "billing-agent", "nobody", ""):
        seen = set(paths(index.search("zebra", visible_to=scope, limit=200)))
        assert seen == index.paths_matching("zebra", visible_to=scope), scope
        assert seen == {p for p in everything if store.layout.readable_by(p, scope)}, scope
    assert "agents/billing-agent/memory/notes/z.md" not in \
        paths(index.search("zebra", visible_to="ops-bot", limit=200))
    assert "misc/zebra.md" not in paths(index.search("zebra", visible_to="ops-bot", limit=200))
