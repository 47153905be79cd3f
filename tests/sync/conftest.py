"""Fixtures for sync tests: a bare remote (file:// and git://), stores and their syncers."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from memoryui.store import Actor, Store
from memoryui.store.sync import RemoteConfig, Syncer, bootstrap
from tests.sync_fixtures import GitDaemon, NativeHost, make_bare

ALICE = Actor.user("alice")


@pytest.fixture
def bare(tmp_path: Path) -> Path:
    return make_bare(tmp_path / "remotes" / "memory.git")


@pytest.fixture
def file_url(bare: Path) -> str:
    return f"file://{bare}"


@pytest.fixture
def daemon(tmp_path: Path, bare: Path) -> Iterator[GitDaemon]:
    with GitDaemon(bare.parent) as d:
        yield d


@pytest.fixture
def instance(tmp_path: Path) -> Iterator[Callable[..., Syncer]]:
    """instance("a", url) -> a Syncer over a fresh bootstrapped workspace tmp/<name>."""
    made: list[Store] = []

    def make(name: str, url: str, **kw: object) -> Syncer:
        config = RemoteConfig(url, **kw)  # type: ignore[arg-type]
        root = tmp_path / name
        bootstrap(root, config)
        store = Store(root)
        made.append(store)
        return Syncer(store, config)

    yield make
    for s in made:
        s.close()


@pytest.fixture
def native(tmp_path: Path) -> Callable[[str], NativeHost]:
    def make(url: str, scope: str = "native-bot") -> NativeHost:
        return NativeHost(url, tmp_path / f"native-{scope}", scope)
    return make
