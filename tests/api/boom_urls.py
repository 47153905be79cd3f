"""The real URLconf (with its error handlers) plus views that fail, for the error tests."""

from __future__ import annotations

import errno

from django.http import HttpRequest, HttpResponse
from django.urls import path
from django.views.decorators.http import require_POST

from memoryui.urls import handler400, handler403, handler404, handler500  # noqa: F401
from memoryui.urls import urlpatterns as real_urlpatterns


def boom(request: HttpRequest) -> HttpResponse:
    raise RuntimeError("boom: an unexpected failure")


def disk_full(request: HttpRequest) -> HttpResponse:
    raise OSError(errno.ENOSPC, "No space left on device")


@require_POST
def post_only(request: HttpRequest) -> HttpResponse:
    return HttpResponse("posted")


urlpatterns = [
    path("api/v1/post-only", post_only),
    path("boom", boom),
    path("api/v1/boom", boom),
    path("api/v1/boom-disk", disk_full),
    *real_urlpatterns,
]
