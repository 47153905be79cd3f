"""Review and promote URLs (mounted at /review/; the queue is "review")."""

from django.urls import path

from . import context, meaning, views

urlpatterns = [
    path("", views.queue, name="review"),
    path("entry/", views.entry, name="review_entry"),
    path("promote/", views.promote, name="review_promote"),
    path("dismiss/", views.dismiss, name="review_dismiss"),
    path("dismiss/confirm/", views.dismiss_confirm, name="review_dismiss_confirm"),
    path("reopen/", views.reopen, name="review_reopen"),
    path("undo/<int:pk>/", views.undo, name="review_undo"),
    path("related/", meaning.related, name="review_related"),
    path("contradiction/", meaning.conflict, name="review_contradiction"),
    path("file-meaning/", meaning.file_meaning, name="review_file_meaning"),
    path("sees/<str:scope>/", context.context_page, name="review_context"),
]
