"""The hook's token rule: a push whose host token is revoked while its pack uploads is
refused (the hook re-reads the token once tokens changed since the request began)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memoryui.gitserve.hooks import _token_still_active
from memoryui.models import Token


@pytest.mark.django_db
def test_a_token_revoked_during_the_push_is_refused(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    tok, _raw = Token.issue(host_scopes=["alpha"], name="host")
    stamp = tmp_path / "tokens.generation"
    stamp.write_text("1\n")
    monkeypatch.setenv("MEMORYUI_TOKEN_GENERATION_FILE", str(stamp))
    monkeypatch.setenv("MEMORYUI_TOKEN_GENERATION", str(os.stat(stamp).st_mtime_ns))
    monkeypatch.setenv("MEMORYUI_PUSH_TOKEN_ID", str(tok.pk))
    assert _token_still_active()  # nothing changed: no database call
    os.utime(stamp, ns=(1, 1))  # tokens changed (revoking bumps this file)
    assert _token_still_active()  # still active in the database
    Token.objects.filter(pk=tok.pk).update(revoked_at="2026-11-29T00:00:00Z")
    assert not _token_still_active()
