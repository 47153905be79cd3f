"""The tree model's maps: a change is a new map sharing the old one's entries, and every
map reads exactly like the dict it stands for, before and after its top is folded."""

from __future__ import annotations

import random

import pytest

from memoryui.store import layered
from memoryui.store.layered import Layered


def same(m: Layered, d: dict) -> None:
    assert len(m) == len(d)
    assert dict(m.items()) == d
    assert sorted(m) == sorted(d)
    assert sorted(m.values()) == sorted(d.values())
    for k in list(d)[:50]:
        assert m[k] == d[k] and m.get(k) == d[k] and k in m
    assert "never-there" not in m and m.get("never-there", 7) == 7
    with pytest.raises(KeyError):
        m["never-there"]


def test_changes_and_removals_read_like_a_dict_and_leave_earlier_maps_as_they_were(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(layered, "COMPACT_AT", 64)  # fold often: both layers get exercised
    rng = random.Random(15)
    model = {f"agents/a{i}/memory/MEMORY.md": i for i in range(500)}
    m = Layered.of(dict(model))
    history = [(m, dict(model))]
    for step in range(400):
        keys = list(model)
        put = {rng.choice(keys) if rng.random() < 0.5 else f"new/{step}/{j}.md": step
               for j in range(rng.randint(0, 3))}
        removed = {rng.choice(keys) for _ in range(rng.randint(0, 2))} - set(put)
        removed.add("not/there.md")  # removing what is absent is no change
        m = m.changed(put, removed)
        model.update(put)
        for k in removed:
            model.pop(k, None)
        history.append((m, dict(model)))
    for old, expected in history[::37] + history[-3:]:
        same(old, expected)


def test_a_removed_key_put_back_counts_once() -> None:
    m = Layered.of({"a": 1, "b": 2})
    m = m.changed({}, ["a"]).changed({"a": 3})
    assert len(m) == 2 and m["a"] == 3 and dict(m.items()) == {"a": 3, "b": 2}
    assert m.changed({"c": 4}, ["c"]).get("c") is None  # put and removed in one change


def test_a_copy_is_a_new_identity_with_the_same_content() -> None:
    m = Layered.of({"a": 1}).changed({"b": 2})
    c = m.copy()
    assert c is not m and dict(c.items()) == dict(m.items())
