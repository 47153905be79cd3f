"""How every entry point (manage.py, the ASGI and WSGI modules) stops on a settings typo:
one line, `memoryui: <sentence>`, on stderr and exit status 2, never a traceback."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import NoReturn, TypeVar

from django.core.exceptions import ImproperlyConfigured

T = TypeVar("T")


def refuse(exc: ImproperlyConfigured) -> NoReturn:
    sys.stderr.write(f"memoryui: {exc}\n")
    sys.stderr.flush()
    raise SystemExit(2)


def configured(start: Callable[[], T]) -> T:
    """`start()` (which loads the settings), or the one-line refusal of a bad setting."""
    try:
        return start()
    except ImproperlyConfigured as exc:
        refuse(exc)
