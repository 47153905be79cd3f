"""The Policies page (mounted at /settings/policies/)."""

from django.urls import path

from . import views

urlpatterns = [path("", views.policies_page, name="policies")]
