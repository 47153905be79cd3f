"""Write policies: for each scope and kind of file, may an agent write, only propose, or only
read? A token's own row wins over the scope's, which wins over the workspace default (`*`);
with no row the policy is `write`. Daily logs are append-only experience: always `write`.

Which kind a path is comes from the layout (`Layout.address`), the one place that knows.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import TYPE_CHECKING

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.db.models.signals import post_delete, post_save
from django.utils import timezone

from memoryui.api.auth import bump_generation, generation
from memoryui.caches import POLICY_LIMITS
from memoryui.models import Token, WritePolicy
from memoryui.store import Kind, names
from memoryui.store.errors import InvalidName

if TYPE_CHECKING:
    from memoryui.store import Store
    from memoryui.store.layout import Layout

KINDS = ("memory", "note", "scratchpad", "global", "world", "skill", "directive")
POLICIES = ("write", "propose", "read")
WRITE, PROPOSE, READ = POLICIES
ALL = WritePolicy.WORKSPACE


# A policy changed in this instance takes effect at once in every worker (the tokens'
# generation file), one changed by another instance sharing the database within
# MEMORYUI_TOKEN_CACHE seconds, as with tokens.
post_save.connect(bump_generation, sender=WritePolicy, dispatch_uid="memoryui-policy-gen-save")
post_delete.connect(bump_generation, sender=WritePolicy,
                    dispatch_uid="memoryui-policy-gen-delete")


def limited(token: Token | None) -> bool:
    """Whether any policy but `write` can apply to this token's agent: otherwise its tools
    use the store as it is. Asked at every tool call, so kept per token (one query, not
    one per call)."""
    key = token.pk if token is not None else None
    ttl, gen, now = settings.MEMORYUI_TOKEN_CACHE, generation(), time.monotonic()
    hit = POLICY_LIMITS.get(key)
    if hit is not None and hit[1] == gen and now - hit[2] < ttl:
        return hit[0]
    found = WritePolicy.objects.exclude(policy=WRITE).filter(
        Q(token=None) | Q(token=token)).exists()
    if ttl > 0:
        POLICY_LIMITS.put(key, (found, gen, now))
    return found


class PolicyError(InvalidName):
    """A policy, kind or scope that does not exist (a 400 with one sentence)."""


def check(scope: str, kind: str, policy: str | None = None) -> None:
    if kind not in KINDS:
        raise PolicyError(f"unknown kind {kind!r}; use one of: {', '.join(KINDS)} "
                          "(daily logs are always written directly)")
    if policy is not None and policy not in POLICIES:
        raise PolicyError(f"unknown policy {policy!r}; use one of: {', '.join(POLICIES)}")
    if scope != ALL:
        try:
            names.validate_scope(scope)
        except InvalidName as exc:
            raise PolicyError(f"{exc} (or * for every scope)") from None


def _best(rows: Iterable[WritePolicy], scope: str | None, kind: str,
          token_id: int | None) -> str:
    """The rule: the token's own row over the scope's over the workspace default (`*`)."""
    best: tuple[int, str] | None = None
    for row in rows:
        if row.kind != kind or row.scope not in (scope or ALL, ALL):
            continue
        if row.token_id is not None and (token_id is None or row.token_id != token_id):
            continue
        rank = (2 if row.token_id is not None else 0) + (1 if row.scope != ALL else 0)
        if best is None or rank > best[0]:
            best = (rank, row.policy)
    return best[1] if best else WRITE


def policy_for(scope: str | None, kind: Kind | str, token: Token | None = None) -> str:
    """The policy for an agent of `scope` writing a file of `kind` (with `token`)."""
    kind = str(kind)
    if kind not in KINDS:
        return WRITE  # daily logs, and files outside the layout's kinds
    rows = WritePolicy.objects.filter(kind=kind, scope__in=[scope or ALL, ALL])
    return _best(rows, scope, kind, token.pk if token is not None else None)


def policy_for_path(store: Store, path: str, scope: str | None,
                    token: Token | None = None) -> str:
    """The policy for a write of `path` by an agent of `scope`: the file's owning scope
    when it has one, else the writer's (shared files: world, global, skills, directives)."""
    addr = store.address_of(path)
    if addr is None:
        return WRITE
    return policy_for(addr.scope or scope, addr.kind, token)


STRICTNESS = {WRITE: 0, PROPOSE: 1, READ: 2}


class HostPolicies:
    """The policies a host token's push meets, read in one query for the whole push.

    A file in a scope takes that scope's policy; a shared file (world, global, skills,
    directives) the strictest among the token's scopes, and a proposal of it is filed under
    the scope that policy comes from (the first in name order among equals). A file inside
    a skill's folder is a skill."""

    def __init__(self, token: Token, layout: Layout) -> None:
        self.rows = list(WritePolicy.objects.filter(Q(token=None) | Q(token=token)))
        self.token_id = token.pk
        self.scopes = sorted(token.host_scopes or [])
        self.layout = layout

    def kind_of(self, path: str) -> str | None:
        addr = self.layout.address(path)
        if addr is not None:
            return str(addr.kind)
        return str(Kind.SKILL) if self.layout.is_shared(path) else None

    def of(self, path: str) -> tuple[str, str | None]:
        """(the policy for this host's change of `path`, the scope a proposal of it is for)."""
        kind, owner = self.kind_of(path), self.layout.scope_of(path)
        if kind not in KINDS:
            return WRITE, owner  # daily logs, and files outside the layout's kinds
        if owner is not None:
            return _best(self.rows, owner, kind, self.token_id), owner
        found = [(_best(self.rows, s, kind, self.token_id), s) for s in self.scopes]
        return max(found, key=lambda f: STRICTNESS[f[0]]) if found else \
            (_best(self.rows, None, kind, self.token_id), None)


def set_policy(scope: str, kind: str, policy: str, token: Token | None = None) -> None:
    """Set (or, with `write` at the workspace level, clear) one policy row."""
    check(scope, kind, policy)
    with transaction.atomic():
        rows = WritePolicy.objects.filter(scope=scope, kind=kind, token=token)
        if policy == WRITE and scope == ALL and token is None:
            rows.delete()  # the default needs no row
            return
        updated = rows.update(policy=policy, updated_at=timezone.now())
        if not updated:
            WritePolicy.objects.create(scope=scope, kind=kind, policy=policy, token=token)


def clear_policy(scope: str, kind: str, token: Token | None = None) -> bool:
    """Remove one override (the next level applies again); False when there was none."""
    check(scope, kind)
    deleted, _ = WritePolicy.objects.filter(scope=scope, kind=kind, token=token).delete()
    return bool(deleted)


def policy_rows() -> list[tuple[str, str, str, str, str]]:
    """(scope, kind, policy, token name or "", source) of every row, for display; source is
    "workspace", "scope" or "token"."""
    out = []
    for row in WritePolicy.objects.select_related("token").order_by("scope", "kind", "token_id"):
        tok = row.token
        name = (tok.name or tok.prefix) if tok is not None else ""
        source = "token" if tok is not None else "workspace" if row.scope == ALL else "scope"
        out.append((row.scope, row.kind, row.policy, name, source))
    return out


def policies_of(scope: str | None, token: Token | None = None) -> dict[str, str]:
    """Every kind's policy for an agent of `scope` (with `token`): for a token or scope page."""
    return {kind: policy_for(scope, kind, token) for kind in KINDS}
