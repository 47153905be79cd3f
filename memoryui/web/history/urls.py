"""History, diffs, blame, restore, activity and pending changes (one module per feature)."""

from django.urls import path

from . import (
    activity,
    blame,
    commit,
    compare,
    context,
    feed,
    file_history,
    pending,
    restore,
    revert,
)
from .written import write_commit

urlpatterns = [
    path("history/<path:path>", file_history.file_history, name="file_history"),
    path("s/<str:scope>/history/", file_history.scope_history, name="scope_history"),
    path("commit/<str:sha>/", commit.commit, name="commit"),
    path("at/<str:sha>/<path:path>", commit.file_at, name="file_at"),
    path("compare/", compare.compare_all, name="compare_all"),
    path("compare/<path:path>", compare.compare_file, name="compare_file"),
    path("blame/<path:path>", blame.blame, name="blame"),
    path("diff/context/<path:path>", context.context, name="diff_context"),
    path("diff/view", context.view_mode, name="diff_view_mode"),
    path("restore/<path:path>", restore.restore, name="restore"),
    path("write/<str:record>/", write_commit, name="write_commit"),
    path("commit/<str:sha>/revert", revert.revert_commit, name="revert_commit"),
    path("activity/", activity.activity, name="activity"),
    path("activity.atom", feed.activity_atom, name="activity_atom"),
    path("pending/", pending.pending, name="pending"),
    path("pending/diff/<path:path>", pending.pending_diff, name="pending_diff"),
    path("pending/commit", pending.pending_commit, name="pending_commit"),
    path("pending/discard", pending.pending_discard, name="pending_discard"),
]
