"""Proposals as branches: made and extended by an agent, read back by it alone, approved as a
merge commit (three-way when the file moved on), rejected with the commits kept."""

from __future__ import annotations

import subprocess

import pytest

from memoryui.store import Actor, Store
from memoryui.store.approving import FileDeleted, MergeConflict, merge
from memoryui.store.proposals import (
    ProposalClosed,
    get,
    list_proposals,
    own_text,
    propose,
    reject,
)

MEM = "agents/ops-bot/memory/MEMORY.md"
BOT, OTHER, ALICE = Actor.agent("ops-bot"), Actor.agent("qa-bot"), Actor.user("alice")


def git(store: Store, *args: str) -> str:
    return subprocess.run(["git", "-C", str(store.root), *args], check=True,
                          capture_output=True, text=True).stdout


def make(store: Store, text: str, actor: Actor = BOT, scope: str = "ops-bot"):
    p, _created = propose(store, scope=scope, path=MEM, text=text, actor=actor,
                          tool="reflect", trailers=[("Memoryui-Token", "mui_abc")])
    assert p is not None
    return p


def test_a_proposal_is_a_branch_the_agent_reads_back(store: Store) -> None:
    store.write(MEM, "# Memory\n\n- one\n", actor=BOT, tool="reflect")
    head = store.head()
    p, created = propose(store, scope="ops-bot", path=MEM, text="# Memory\n\n- one\n- two\n",
                         actor=BOT, tool="reflect")
    assert created and p is not None
    assert store.read(MEM) == "# Memory\n\n- one\n"  # the workspace is unchanged
    assert store.head() == head
    assert own_text(store, "ops-bot", MEM) == b"# Memory\n\n- one\n- two\n"
    assert own_text(store, "qa-bot", MEM) is None
    again, created = propose(store, scope="ops-bot", path=MEM,
                             text="# Memory\n\n- one\n- two\n- three\n", actor=BOT,
                             tool="reflect")
    assert not created and again is not None and again.id == p.id
    assert len(again.commits) == 2 and again.base == head
    refs = git(store, "for-each-ref", "--format=%(refname)", "refs/memoryui/")
    assert refs.split() == [f"refs/memoryui/proposals/ops-bot/{p.id}"]
    author = git(store, "log", "-1", "--format=%an|%B", again.tip)
    assert author.startswith("ops-bot|Propose reflect: " + MEM)
    assert "Memoryui-Actor: agent:ops-bot" in author and f"Memoryui-Proposal: {p.id}" in author


def test_approval_is_a_merge_commit_with_both_trailers(store: Store) -> None:
    store.write(MEM, "# Memory\n\n- one\n", actor=BOT, tool="reflect")
    p = make(store, "# Memory\n\n- one\n- two\n")
    sha = merge(store, p.id, approver=ALICE)
    assert store.read(MEM) == "# Memory\n\n- one\n- two\n"
    assert store.head() == sha
    parents = git(store, "log", "-1", "--format=%P", sha).split()
    assert parents[1] == p.tip
    body = git(store, "log", "-1", "--format=%an|%B", sha)
    assert body.startswith("alice|Approve proposal")
    assert "Proposed-by: ops-bot <ops-bot@agents.memoryui>" in body
    assert "Approved-by: alice <alice@users.memoryui>" in body
    assert p.tip in git(store, "log", "--format=%H", "--", MEM).split()
    assert get(store, p.id).state == "approved"
    assert git(store, "status", "--porcelain") == ""
    with pytest.raises(ProposalClosed) as err:
        merge(store, p.id, approver=ALICE)
    assert err.value.state == "approved"


def test_stale_proposal_merges_three_way_or_conflicts(store: Store) -> None:
    mid = "".join(f"- keep {i}\n" for i in range(6))
    store.write(MEM, f"# Memory\n\n- one\n{mid}\n## B\n\n- b\n", actor=BOT, tool="reflect")
    p = make(store, f"# Memory\n\n- one (agent)\n{mid}\n## B\n\n- b\n")
    store.write(MEM, f"# Memory\n\n- one\n{mid}\n## B\n\n- b (alice)\n", actor=ALICE,
                tool="edit")
    merge(store, p.id, approver=ALICE)
    assert store.read(MEM) == f"# Memory\n\n- one (agent)\n{mid}\n## B\n\n- b (alice)\n"
    store.write(MEM, "# Memory\n\n- one (agent)\n\n## B\n\n- b (alice)\n", actor=ALICE,
                tool="edit")
    q = make(store, "# Memory\n\n- one (agent again)\n\n## B\n\n- b (alice)\n")
    store.write(MEM, "# Memory\n\n- one (alice)\n\n## B\n\n- b (alice)\n", actor=ALICE,
                tool="edit")
    with pytest.raises(MergeConflict) as err:
        merge(store, q.id, approver=ALICE)
    assert err.value.theirs == "# Memory\n\n- one (agent again)\n\n## B\n\n- b (alice)\n"
    assert err.value.ours == "# Memory\n\n- one (alice)\n\n## B\n\n- b (alice)\n"
    assert "<<<<<<<" in err.value.merged
    assert store.read(MEM) == "# Memory\n\n- one (alice)\n\n## B\n\n- b (alice)\n"
    # resolved by the curator: an edited approval
    merge(store, q.id, approver=ALICE, edited_text="# Memory\n\n- one (both)\n", edited=True)
    assert store.read(MEM) == "# Memory\n\n- one (both)\n"


def test_rejection_keeps_the_commits(store: Store) -> None:
    store.write(MEM, "# Memory\n", actor=BOT, tool="reflect")
    p = make(store, "# Memory\n\n- junk\n")
    done = reject(store, p.id, actor=ALICE, reason="not a durable fact")
    assert done.state == "rejected"
    assert own_text(store, "ops-bot", MEM) is None
    assert list_proposals(store) == []
    body = git(store, "log", "-1", "--format=%B", done.tip)
    assert "not a durable fact" in body and "Rejected-by: alice" in body
    assert p.tip in git(store, "rev-list", done.tip).split()
    with pytest.raises(ProposalClosed):
        reject(store, p.id, actor=ALICE)
    # a new write starts a new proposal
    assert make(store, "# Memory\n\n- better\n").id != p.id


def test_deleted_file_comes_back_only_when_confirmed(store: Store) -> None:
    store.write(MEM, "# Memory\n", actor=BOT, tool="reflect")
    p = make(store, "# Memory\n\n- two\n")
    store.delete(MEM, actor=ALICE, tool="edit")
    with pytest.raises(FileDeleted):
        merge(store, p.id, approver=ALICE)
    assert not store.exists(MEM)
    merge(store, p.id, approver=ALICE, recreate=True)
    assert store.read(MEM) == "# Memory\n\n- two\n"


def test_agents_do_not_see_each_others_proposals(store: Store) -> None:
    store.write(MEM, "# Memory\n", actor=BOT, tool="reflect")
    make(store, "# Memory\n\n- ops\n")
    make(store, "# Memory\n\n- qa\n", actor=OTHER, scope="qa-bot")
    assert own_text(store, "ops-bot", MEM) == b"# Memory\n\n- ops\n"
    assert own_text(store, "qa-bot", MEM) == b"# Memory\n\n- qa\n"
    assert len(list_proposals(store)) == 2
