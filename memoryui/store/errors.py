"""Errors the store raises; the API and UI translate each to one HTTP status."""

from __future__ import annotations


class StoreError(Exception):
    """Base class: a problem the caller can explain to a user (never a 500)."""

    code = "invalid_arguments"
    status = 400


class InvalidName(StoreError):
    """A name or path that could reach outside the workspace or break a layout rule."""


class NotFound(StoreError):
    code = "not_found"
    status = 404


class TooLarge(StoreError):
    code = "payload_too_large"
    status = 413


class Conflict(StoreError):
    """A whole-file replace whose base version is stale.

    Carries the current text so a caller can show a diff and let the user merge.
    """

    code = "conflict"
    status = 409

    def __init__(self, message: str, *, path: str, current: str | None, version: str | None):
        super().__init__(message)
        self.path = path
        self.current = current
        self.version = version


class CommitRaceError(StoreError):
    """HEAD moved under the committer: the batch is kept and retried, never dropped."""

    code = "conflict"
    status = 409


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
