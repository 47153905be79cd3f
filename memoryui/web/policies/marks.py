"""The policies shown beside a token or a scope (Tokens page, scope page): the kinds whose
effective policy is not `write`, in the order of `policies.KINDS`."""

from __future__ import annotations

from memoryui import policies
from memoryui.models import Token

from .forms import KIND_LABELS

Marks = list[tuple[str, str, str]]  # kind, its label, policy


def marks(scope: str | None, token: Token | None = None) -> Marks:
    """What an agent of `scope` (with `token`) may not simply write."""
    have = policies.policies_of(scope, token)
    return [(k, KIND_LABELS[k], have[k]) for k in policies.KINDS if have[k] != policies.WRITE]


def token_rows(tokens: list[Token]) -> list[tuple[Token, Marks]]:
    """Each token with its marks (a read-only token writes nothing: no marks needed)."""
    return [(t, [] if t.read_only or t.revoked_at else marks(t.scope or None, t))
            for t in tokens]
