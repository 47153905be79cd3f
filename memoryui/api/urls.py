"""API URLs (/api/v1/...): the agent tools, Dagu REST, files and audit, search, OpenAPI."""

from django.urls import include, path

urlpatterns: list = [
    path("", include("memoryui.api.search_urls")),
]
