"""History, diffs, blame, restore, activity and pending changes (names from the URL map)."""

from django.urls import path

from . import views

urlpatterns = [
    path("history/<path:path>", views.file_history, name="file_history"),
    path("s/<str:scope>/history/", views.scope_history, name="scope_history"),
    path("commit/<str:sha>/", views.commit, name="commit"),
    path("at/<str:sha>/<path:path>", views.file_at, name="file_at"),
    path("blame/<path:path>", views.blame, name="blame"),
    path("restore/<path:path>", views.restore, name="restore"),
    path("activity/", views.activity, name="activity"),
    path("activity.atom", views.activity_atom, name="activity_atom"),
    path("pending/", views.pending, name="pending"),
    path("pending/diff/<path:path>", views.pending_diff, name="pending_diff"),
    path("pending/commit", views.pending_commit, name="pending_commit"),
    path("pending/discard", views.pending_discard, name="pending_discard"),
]
