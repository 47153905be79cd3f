"""A refusal is an expected answer, logged as one line; an unhandled error keeps its
traceback (settings.LOGGING, memoryui/logfilters.py)."""

from __future__ import annotations

import pytest


def _request_records(caplog: pytest.LogCaptureFixture) -> list:
    return [r for r in caplog.records if r.name == "django.request"]


def test_a_role_denial_logs_one_line_without_a_traceback(client_as, workspace, caplog):
    resp = client_as("viewer").get("/settings/tokens/")
    assert resp.status_code == 403
    [record] = _request_records(caplog)
    assert record.levelname == "WARNING" and "/settings/tokens/" in record.getMessage()
    assert record.exc_info is None
    assert "Traceback" not in caplog.text


def test_an_unhandled_error_still_logs_its_traceback(client, db, settings, caplog):
    settings.ROOT_URLCONF = "tests.api.boom_urls"
    client.raise_request_exception = False
    assert client.get("/boom").status_code == 500
    errors = [r for r in _request_records(caplog) if r.levelname == "ERROR"]
    assert errors and errors[0].exc_info and errors[0].exc_info[0] is RuntimeError
    assert "Traceback" in caplog.text
