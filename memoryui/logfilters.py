"""Logging filters named in settings.LOGGING."""

from __future__ import annotations

import logging


class ExpectedRefusals(logging.Filter):
    """A 4xx is an expected answer (a role denial, a bad Host): its record keeps its one
    line and loses the traceback Django attaches to it (PermissionDenied and
    SuspiciousOperation are logged with `exc_info`). Unhandled errors (5xx) keep theirs."""

    def filter(self, record: logging.LogRecord) -> bool:
        status = getattr(record, "status_code", None)
        if isinstance(status, int) and status < 500 and record.exc_info:
            record.exc_info = None
            record.exc_text = None
        return True
