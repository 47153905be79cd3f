"""Sync URLs (mounted at /sync/)."""

from django.urls import path

from . import conflict, views

urlpatterns = [
    path("", views.sync_page, name="sync"),
    path("now", views.sync_now, name="sync_now"),
    path("publish", views.publish, name="sync_publish"),
    path("discard", views.discard, name="sync_discard"),
    path("diff/<path:path>", views.file_diff, name="sync_diff"),
    path("conflict/<path:path>", conflict.conflict, name="sync_conflict"),
    path("badge", views.badge, name="sync_badge"),
]
