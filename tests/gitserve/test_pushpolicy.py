"""Write policies on a push, on real repositories: which policy a host token meets for each
path (a shared file: the strictest among its scopes), a push to the branch that would
change a `propose` file, and what a push for review proposes."""

from __future__ import annotations

from pathlib import Path

import pygit2
import pytest

from memoryui.gitserve.pushpolicy import branch_refusal, review, review_refusal, touched
from memoryui.models import Token
from memoryui.policies import HostPolicies, set_policy
from memoryui.store.layout import get_layout

SIG = pygit2.Signature("host", "host@example")
LAYOUT = get_layout("duragent")
MEMORY = "agents/alpha/memory/MEMORY.md"
DAILY = "agents/alpha/memory/daily/2026-11-29.md"
WORLD = "memory/world/networking.md"


def _commit(repo: pygit2.Repository, files: dict[str, str | None], parents: list[str]) -> str:
    index = pygit2.Index()
    if parents:
        index.read_tree(repo[parents[0]].peel(pygit2.Tree))
    for path, text in files.items():
        if text is None:
            index.remove(path)
        else:
            index.add(pygit2.IndexEntry(path, repo.create_blob(text.encode()),
                                        pygit2.enums.FileMode.BLOB))
    return str(repo.create_commit(None, SIG, SIG, "c", index.write_tree(repo), parents))


@pytest.fixture
def host() -> HostPolicies:
    tok, _raw = Token.issue(host_scopes=["bravo", "alpha"], name="dagu-1")
    set_policy("alpha", "memory", "propose")
    set_policy("alpha", "world", "propose")
    set_policy("bravo", "world", "read")
    set_policy("bravo", "note", "propose", tok)
    return HostPolicies(tok, LAYOUT)


@pytest.mark.django_db
def test_a_hosts_policy_per_path(host: HostPolicies) -> None:
    assert host.of(MEMORY) == ("propose", "alpha")
    assert host.of("agents/bravo/memory/MEMORY.md") == ("write", "bravo")
    assert host.of("agents/bravo/memory/notes/n.md") == ("propose", "bravo")  # the token's row
    assert host.of(DAILY) == ("write", "alpha")  # daily logs are always written
    assert host.of(WORLD) == ("read", "bravo")  # a shared file: the strictest of its scopes
    set_policy("bravo", "world", "write")
    assert HostPolicies(Token.objects.get(name="dagu-1"), LAYOUT).of(WORLD) == \
        ("propose", "alpha")


@pytest.mark.django_db
def test_the_branch_takes_a_propose_file_only_as_it_has_it(host: HostPolicies,
                                                          tmp_path: Path) -> None:
    repo = pygit2.init_repository(str(tmp_path), bare=True)
    head = _commit(repo, {MEMORY: "# alpha\n", DAILY: "# day\n"}, [])
    there_and_back = [_commit(repo, {MEMORY: "# changed\n"}, [head])]
    there_and_back.append(_commit(repo, {MEMORY: "# alpha\n", DAILY: "# day\n\nx\n"},
                                  [there_and_back[0]]))
    assert branch_refusal(repo, host, touched(repo, there_and_back), head,
                          there_and_back[-1], "refs/heads/main") is None
    changed = _commit(repo, {MEMORY: "# mine\n"}, [head])
    why = branch_refusal(repo, host, touched(repo, [changed]), head, changed,
                         "refs/heads/main")
    assert why is not None and MEMORY in why and changed[:12] in why
    assert why.endswith("propose them instead with: git push origin HEAD:refs/for/main")


@pytest.mark.django_db
def test_a_push_for_review_proposes_what_differs_from_the_merge_base(
        host: HostPolicies, tmp_path: Path) -> None:
    repo = pygit2.init_repository(str(tmp_path), bare=True)
    base = _commit(repo, {MEMORY: "# alpha\n", DAILY: "# day\n"}, [])
    head = _commit(repo, {"agents/bravo/memory/MEMORY.md": "# bravo by an agent\n"}, [base])
    pushed = [_commit(repo, {MEMORY: "# mine\n", DAILY: "# day\n\nx\n",
                             "agents/alpha/memory/notes/n.md": "# n\n"}, [base])]
    pushed.append(_commit(repo, {"agents/alpha/memory/notes/n.md": None}, [pushed[0]]))
    seen = touched(repo, pushed)
    found = review(repo, host, seen, head, pushed[-1])
    assert found.base == base
    assert [(f.path, f.scope, f.commit) for f in found.files] == [(MEMORY, "alpha", pushed[0])]
    assert found.daily == [DAILY]
    assert review_refusal(host, seen, found, "refs/heads/main") is None
    only_daily = [_commit(repo, {DAILY: "# day\n\ny\n"}, [base])]
    seen = touched(repo, only_daily)
    why = review_refusal(host, seen, review(repo, host, seen, head, only_daily[0]),
                         "refs/heads/main")
    assert why is not None and why.startswith("nothing to propose: daily logs")
