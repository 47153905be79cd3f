"""The named caches: a Shelf keeps its cache's bound, forgets on time, and never raises."""

from __future__ import annotations

from cachetools import LRUCache, TTLCache

from memoryui import caches
from memoryui.caches import Shelf


def test_a_shelf_keeps_its_bound_least_recently_used_first_out() -> None:
    shelf: Shelf[int] = Shelf(LRUCache(maxsize=2))
    shelf.put("a", 1)
    shelf.put("b", 2)
    assert shelf.get("a") == 1  # "a" is now the most recent
    shelf.put("c", 3)
    assert shelf.get("b") is None and shelf.get("a") == 1 and shelf.get("c") == 3
    shelf.pop("a")
    shelf.pop("missing")
    assert shelf.get("a") is None and len(shelf) == 1
    shelf.clear()
    assert len(shelf) == 0


def test_a_value_larger_than_the_bound_is_not_kept() -> None:
    shelf: Shelf[tuple[str, str]] = Shelf(LRUCache(maxsize=10, getsizeof=caches._text_and_html))
    shelf.put("x" * 8, ("x" * 8, "<p>x</p>"))
    assert shelf.get("x" * 8) is None


def test_a_timed_shelf_forgets_after_its_ttl() -> None:
    now = [0.0]
    shelf: Shelf[str] = Shelf(TTLCache(maxsize=4, ttl=10.0, timer=lambda: now[0]))
    shelf.put("root", "head")
    now[0] = 9.9
    assert shelf.get("root") == "head"
    now[0] = 10.0
    assert shelf.get("root") is None


def test_every_cache_is_a_named_shelf() -> None:
    named = [v for k, v in vars(caches).items() if k.isupper() and isinstance(v, Shelf)]
    assert len(named) >= 10
