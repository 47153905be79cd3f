"""Search API URL (included from memoryui.api.urls at /api/v1/)."""

from django.urls import path

from memoryui.api import search

urlpatterns: list = [
    path("search", search.search, name="api_search"),
]
