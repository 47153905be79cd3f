"""Errors the store raises; the API and UI translate each to one HTTP status."""

from __future__ import annotations


class StoreError(Exception):
    """Base class: a problem the caller can explain to a user (never a 500)."""

    code = "invalid_arguments"
    status = 400


class Missing:
    """Mixin for a StoreError about something that is not there: the same 404 "not_found"
    whichever base class it extends."""

    code = "not_found"
    status = 404


class Conflicting:
    """Mixin for a StoreError that clashes with the workspace or the ledger as they are now:
    the same 409 "conflict" wherever it is raised, whichever base class it extends."""

    code = "conflict"
    status = 409


class InvalidName(StoreError):
    """A name or path that could reach outside the workspace or break a layout rule."""


class NotFound(Missing, StoreError):
    """What a request names is not there: a file, a commit, a scope, an entry."""


class TooLarge(StoreError):
    code = "payload_too_large"
    status = 413


class Conflict(Conflicting, StoreError):
    """A whole-file replace whose base version is stale.

    Carries the current text so a caller can show a diff and let the user merge.
    """

    def __init__(self, message: str, *, path: str, current: str | None, version: str | None):
        super().__init__(message)
        self.path = path
        self.current = current
        self.version = version


class CommitRaceError(Conflicting, StoreError):
    """HEAD moved under the committer: the batch is kept and retried, never dropped."""


class InvalidText(InvalidName):
    """Text memoryui will not store: NUL bytes (git would call the file binary) or lone
    surrogates (not encodable as UTF-8). A 400 like InvalidName, so callers keep working."""


class Ambiguous(InvalidName):
    """A short commit id that more than one commit starts with."""


class DiskFull(StoreError):
    """The workspace's disk is full (ENOSPC) or over quota (EDQUOT): nothing was written."""

    code = "insufficient_storage"
    status = 507

    def __init__(self, message: str = "the workspace disk is full"):
        super().__init__(message)


class SecretFound(InvalidText):
    """An agent's write adds a secret and the policy blocks it (memoryui/secrets): nothing
    was written. The message names each kind and line, never the value."""

    code = "secret_found"
    status = 422

    def __init__(self, message: str, findings: list | None = None):
        super().__init__(message)
        self.findings = list(findings or [])
