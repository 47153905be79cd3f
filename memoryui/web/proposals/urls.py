"""The inbox of proposed changes (mounted at /review/proposals/)."""

from django.urls import path

from . import views

urlpatterns = [
    path("", views.inbox, name="review_proposals"),
    path("bulk/", views.bulk, name="proposals_bulk"),
    path("<str:pk>/", views.detail, name="proposal"),
    path("<str:pk>/approve/", views.approve, name="proposal_approve"),
    path("<str:pk>/edit/", views.edit, name="proposal_edit"),
    path("<str:pk>/reject/", views.reject, name="proposal_reject"),
    path("<str:pk>/conflict/", views.conflict, name="proposal_conflict"),
]
