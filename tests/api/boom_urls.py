"""The real URLconf (with its handler500) plus views that fail, for the error tests."""

from __future__ import annotations

import errno

from django.http import HttpRequest, HttpResponse
from django.urls import path

from memoryui.urls import handler500  # noqa: F401
from memoryui.urls import urlpatterns as real_urlpatterns


def boom(request: HttpRequest) -> HttpResponse:
    raise RuntimeError("boom: an unexpected failure")


def disk_full(request: HttpRequest) -> HttpResponse:
    raise OSError(errno.ENOSPC, "No space left on device")


urlpatterns = [
    path("boom", boom),
    path("api/v1/boom", boom),
    path("api/v1/boom-disk", disk_full),
    *real_urlpatterns,
]
