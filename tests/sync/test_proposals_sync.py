"""Proposals on three instances with one bare remote: a proposal made on one reaches the
others at their next round, an approval on another reaches all (the merge commit on the
branch, the open ref gone everywhere, the agent's commits in history), never forced."""

from __future__ import annotations

from memoryui.store import Actor
from memoryui.store.approving import merge
from memoryui.store.proposals import list_proposals, own_text, propose, reject
from tests.sync_fixtures import git

MEM = "agents/ops-bot/memory/MEMORY.md"
BOT, ALICE, BOB = Actor.agent("ops-bot"), Actor.user("alice"), Actor.user("bob")


def refs(repo: object, prefix: str = "refs/memoryui/") -> list[str]:
    return git(repo, "for-each-ref", "--format=%(refname)", prefix).split()


def test_three_instances_share_proposals_and_decisions(instance, file_url, bare) -> None:
    a = instance("a", file_url)
    a.store.write(MEM, "# Me\n\n- likes tea\n", actor=BOT, tool="reflect")
    assert a.round(blocking=True).pushed
    b, c = instance("b", file_url), instance("c", file_url)
    p, _ = propose(a.store, scope="ops-bot", path=MEM, text="# Me\n\n- likes coffee\n",
                   actor=BOT, tool="reflect")
    assert p is not None
    a.round(blocking=True)
    assert refs(bare) == [f"refs/memoryui/proposals/ops-bot/{p.id}"]
    for other in (b, c):
        assert other.round(blocking=True).error is None
        [seen] = list_proposals(other.store)
        assert (seen.id, seen.tip) == (p.id, p.tip)
        assert own_text(other.store, "ops-bot", MEM) == b"# Me\n\n- likes coffee\n"
        assert other.store.read(MEM) == "# Me\n\n- likes tea\n"
    # the agent extends it on a; b approves what reached it after the next rounds
    q, created = propose(a.store, scope="ops-bot", path=MEM,
                         text="# Me\n\n- likes coffee\n- uses vim\n", actor=BOT, tool="reflect")
    assert not created and q is not None
    a.round(blocking=True)
    b.round(blocking=True)
    sha = merge(b.store, p.id, approver=ALICE)
    assert b.round(blocking=True).pushed
    assert refs(bare, "refs/memoryui/proposals/") == []
    assert refs(bare, "refs/memoryui/approved/") == [f"refs/memoryui/approved/ops-bot/{p.id}"]
    for other in (a, c):
        assert other.round(blocking=True).error is None
        assert other.store.read(MEM) == "# Me\n\n- likes coffee\n- uses vim\n"
        assert list_proposals(other.store) == []
        assert git(other.store.root, "merge-base", "--is-ancestor", q.tip, sha) == ""
        assert "Approved-by: alice" in git(other.store.root, "log", "-1", "--format=%B", sha)
    # a rejection on c travels the same way; nothing was ever forced
    r, _ = propose(c.store, scope="ops-bot", path=MEM, text="junk\n", actor=BOT, tool="reflect")
    assert r is not None
    c.round(blocking=True)
    a.round(blocking=True)
    reject(a.store, r.id, actor=BOB, reason="junk")
    a.round(blocking=True)
    c.round(blocking=True)
    assert list_proposals(c.store) == []
    assert [x.id for x in list_proposals(c.store, "rejected")] == [r.id]
    assert c.store.read(MEM) == "# Me\n\n- likes coffee\n- uses vim\n"
