"""Commit ids from people and clients: at least 7 hex digits, ambiguity is a clear 400."""

from __future__ import annotations

import hashlib

import pytest

from memoryui.store import Actor, Ambiguous, InvalidName, NotFound, Store

MEM = "agents/ops-bot/memory/MEMORY.md"


@pytest.fixture
def sha(store: Store) -> str:
    store.write(MEM, "# Memory\n", actor=Actor.agent("ops-bot"), tool="reflect")
    return store.head()


def colliding_blobs() -> tuple[bytes, bytes, str]:
    """Two blob contents whose object ids share their first 7 hex digits (birthday search)."""
    seen: dict[str, bytes] = {}
    i = 0
    while True:
        data = f"collision candidate {i}\n".encode()
        oid = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
        prefix = oid[:7]
        if prefix in seen:
            return seen[prefix], data, prefix
        seen[prefix] = data
        i += 1


def test_full_and_7_digit_ids_resolve(store: Store, sha: str) -> None:
    assert store.resolve_commit(sha) == sha
    assert store.resolve_commit(sha[:7]) == sha
    assert store.resolve_commit(sha[:7].upper()) == sha
    assert store.commit(sha[:7]).sha == sha
    assert store.resolve(sha[:7]) == sha and store.resolve("HEAD") == sha


@pytest.mark.parametrize("digits", [1, 4, 6])
def test_short_ids_never_resolve(store: Store, sha: str, digits: int) -> None:
    with pytest.raises(InvalidName, match="too short: use at least 7 hex digits"):
        store.resolve_commit(sha[:digits])
    assert store.commit(sha[:digits]) is None
    assert store.resolve(sha[:digits]) is None
    assert store.resolve(sha[:digits] + "^") is None


def test_token_clients_can_require_the_full_id(store: Store, sha: str) -> None:
    assert store.resolve_commit(sha, min_len=40) == sha
    with pytest.raises(InvalidName, match="full commit id"):
        store.resolve_commit(sha[:39], min_len=40)
    assert store.commit(sha[:12], min_len=40) is None


@pytest.mark.parametrize("rev", ["HEAD", "main", "HEAD~1", f"{'a' * 7}^", "xyz1234",
                                 "", "a" * 41, "../../etc", None])
def test_only_hex_is_looked_up(store: Store, sha: str, rev: object) -> None:
    with pytest.raises(InvalidName, match="invalid commit id"):
        store.resolve_commit(rev)


def test_unknown_ids_and_non_commits_are_not_found(store: Store, sha: str) -> None:
    with pytest.raises(NotFound):
        store.resolve_commit("0" * 40)
    tree = str(store.git.repo[sha].tree.id)
    with pytest.raises(NotFound, match="no commit"):
        store.resolve_commit(tree)
    assert store.commit(tree) is None


def test_an_ambiguous_prefix_is_a_clear_400(store: Store, sha: str) -> None:
    a, b, prefix = colliding_blobs()
    store.git.create_blob(a)
    store.git.create_blob(b)
    with pytest.raises(Ambiguous, match="ambiguous") as info:
        store.resolve_commit(prefix)
    assert info.value.status == 400 and isinstance(info.value, InvalidName)
    with pytest.raises(Ambiguous):
        store.commit(prefix)
