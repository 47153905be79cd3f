"""API URLs (/api/v1/...): the agent tools, Dagu REST, files and audit, proposals, search,
OpenAPI."""

from django.http import HttpRequest, HttpResponse
from django.urls import include, path, re_path

from memoryui.api import dagu, files, openapi, proposals, tools
from memoryui.api.common import ApiError, api_view


@api_view("GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS")
def not_found(request: HttpRequest) -> HttpResponse:
    """Unknown API paths answer in JSON too (Django's 404 page is HTML)."""
    raise ApiError("not_found", f"no API endpoint at {request.path}", 404)


urlpatterns: list = [
    path("tools", tools.list_tools, name="api_tools"),
    path("agents/<str:scope>/tools/<str:tool>", tools.run_tool, name="api_run_tool"),
    path("settings/agent/memory", dagu.global_memory, name="api_dagu_memory"),
    path("settings/agent/memory/dags/<str:dag>", dagu.dag_memory, name="api_dagu_dag_memory"),
    path("files", files.list_files, name="api_files"),
    # Any character (a newline too, which `<path:>` would not match): the view's path
    # rule answers a bad name with a 400 that says what is wrong.
    re_path(r"^files/(?P<path>[\s\S]+)\Z", files.file_detail, name="api_file"),
    path("history", files.history, name="api_history"),
    path("commits/<str:sha>", files.commit_detail, name="api_commit"),
    path("writes/<str:record>", files.write_commit, name="api_write_commit"),
    path("proposals", proposals.list_proposals, name="api_proposals"),
    path("proposals/<str:pid>", proposals.proposal_detail, name="api_proposal"),
    path("proposals/<str:pid>/approve", proposals.approve, name="api_proposal_approve"),
    path("proposals/<str:pid>/reject", proposals.reject, name="api_proposal_reject"),
    path("openapi.json", openapi.openapi_json, name="api_openapi"),
    path("", include("memoryui.api.search_urls")),
    re_path(r"^[\s\S]*\Z", not_found),
]
