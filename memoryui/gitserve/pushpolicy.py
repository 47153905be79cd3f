"""Write policies on a push: what each pushed path's policy lets this host do with it.

The policy of a path for a host token comes from `policies.HostPolicies` (one query per
push). A push to the workspace branch: a commit changing a `read` file is refused; a push
that changes a `propose` file's content in the branch is refused with the command that
proposes it instead (`git push origin HEAD:refs/for/<branch>`), while commits that touched
such a file and leave it as the branch has it (the host's own change, approved and pulled)
pass. A push to `refs/for/<branch>` (`review`): every file whose content differs between
the pushed tip and its merge-base with the workspace's HEAD becomes a proposal, whatever
its policy but `read`; daily logs are never proposals (they go to the branch).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pygit2

from memoryui.gitserve.rules import Changes, Refused, changes
from memoryui.store.gitobjects import ZERO
from memoryui.store.kinds import Kind

if TYPE_CHECKING:
    from memoryui.policies import HostPolicies
    from memoryui.store.layout import Layout

FOR_PREFIX = "refs/for/"
WRITE, PROPOSE, READ = "write", "propose", "read"


def short_name(branch_ref: str) -> str:
    return branch_ref.removeprefix("refs/heads/")


def for_ref(branch_ref: str) -> str:
    """`refs/for/<branch>`: where a host pushes changes it proposes."""
    return FOR_PREFIX + short_name(branch_ref)


def is_review(ref: str, branch_ref: str) -> bool:
    """A push for review of the branch: `refs/for/<branch>`, or with a topic after it."""
    target = for_ref(branch_ref)
    return ref == target or ref.startswith(target + "/")


def host_policies(layout: Layout) -> HostPolicies:
    """The pushing token's policies (Django is set up here: only pushes that need it)."""
    import django
    django.setup(set_prefix=False)
    from memoryui.models import Token
    from memoryui.policies import HostPolicies
    token = Token.objects.get(pk=int(os.environ.get("MEMORYUI_PUSH_TOKEN_ID", "0")))
    return HostPolicies(token, layout)


def _entry(tree: pygit2.Tree | None, path: str) -> tuple[str, int] | None:
    if tree is None:
        return None
    try:
        obj = tree[path]
    except KeyError:
        return None
    return str(obj.id), int(obj.filemode)


def _tree(repo: pygit2.Repository, sha: str | None) -> pygit2.Tree | None:
    return repo[sha].peel(pygit2.Tree) if sha and sha != ZERO else None


def new_commits(repo: pygit2.Repository, new: str) -> list[str]:
    """The pushed commits no ref of the repository reaches, oldest first."""
    walker = repo.walk(new, pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.REVERSE)
    for name in repo.references:
        ref_obj = repo.references.get(name)
        try:
            target = ref_obj.resolve().target if ref_obj is not None else None
            if isinstance(target, pygit2.Oid) and repo.get(target) is not None:
                walker.hide(target)
        except (KeyError, pygit2.GitError, ValueError):
            continue
    return [str(c.id) for c in walker]


@dataclass
class Touched:
    """The paths the pushed commits change: the first and the last commit changing each."""

    first: dict[str, str] = field(default_factory=dict)
    last: dict[str, str] = field(default_factory=dict)


def touched(repo: pygit2.Repository, commits: Sequence[str], known: Changes | None = None
            ) -> Touched:
    found = Touched()
    known = known if known is not None else changes(repo, commits)
    for sha in commits:
        for change in known.get(sha, []):
            found.first.setdefault(change.path, sha)
            found.last[change.path] = sha
    return found


def read_refusal(policies: HostPolicies, seen: Touched) -> str | None:
    for path, sha in seen.first.items():
        if policies.of(path)[0] == READ:
            return Refused(path, sha, "the file is read-only for this host (policy read)").line()
    return None


def branch_refusal(repo: pygit2.Repository, policies: HostPolicies, seen: Touched,
                   old: str, new: str, branch_ref: str) -> str | None:
    """Why a push to the branch may not go in as it is under the host's policies."""
    refused = read_refusal(policies, seen)
    if refused is not None:
        return refused
    old_tree, new_tree = _tree(repo, old), _tree(repo, new)
    for path, sha in seen.first.items():
        if policies.of(path)[0] == PROPOSE and _entry(old_tree, path) != _entry(new_tree, path):
            return Refused(path, sha, "changes to this file are proposals for this host "
                           "(policy propose); propose them instead with: git push origin "
                           f"HEAD:{for_ref(branch_ref)}").line()
    return None


@dataclass
class Proposed:
    """One file a review push proposes: its pushed blob (None: deleted), the scope the
    proposal is for, and the newest pushed commit that changes it."""

    path: str
    oid: str | None
    scope: str | None
    commit: str


@dataclass
class Review:
    base: str | None  # the merge-base of the pushed tip and the workspace's HEAD
    files: list[Proposed]
    daily: list[str]  # daily logs the push changes: never proposals


def review(repo: pygit2.Repository, policies: HostPolicies, seen: Touched, head: str | None,
           new: str) -> Review:
    """What a push to `refs/for/<branch>` proposes."""
    base = None
    if head:
        found = repo.merge_base(head, new)
        base = str(found) if found is not None else None
    base_tree, new_tree = _tree(repo, base), _tree(repo, new)
    files, daily = [], []
    for path in sorted(seen.last):
        now = _entry(new_tree, path)
        if now == _entry(base_tree, path):
            continue  # changed and changed back: nothing to propose
        if policies.kind_of(path) == str(Kind.DAILY):
            daily.append(path)
            continue
        files.append(Proposed(path, now[0] if now else None, policies.of(path)[1],
                              seen.last[path]))
    return Review(base, files, daily)


def review_refusal(policies: HostPolicies, seen: Touched, found: Review,
                   branch_ref: str) -> str | None:
    """Why a push for review proposes nothing, or cannot be proposed."""
    refused = read_refusal(policies, seen)
    if refused is not None:
        return refused
    for f in found.files:
        if f.scope is None:
            return Refused(f.path, f.commit, "a shared file is proposed for one of the host "
                           "token's scopes, and this token has none").line()
    if found.files:
        return None
    branch = short_name(branch_ref)
    if found.daily:
        return ("nothing to propose: daily logs are never proposals; push them to the branch "
                f"with: git push origin HEAD:{branch}")
    return f"nothing to propose: the pushed commits change no file against {branch}"
