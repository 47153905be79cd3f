"""Browser UI URLs; each area (one folder under web/) owns its own URLconf."""

from django.urls import include, path

urlpatterns = [
    path("review/proposals/", include("memoryui.web.proposals.urls")),
    path("review/", include("memoryui.web.review.urls")),
    path("search/", include("memoryui.web.search.urls")),
    path("settings/tokens/", include("memoryui.web.tokens.urls")),
    path("settings/policies/", include("memoryui.web.policies.urls")),
    path("sync/", include("memoryui.web.sync.urls")),
    path("secrets/", include("memoryui.web.secrets.urls")),
    path("", include("memoryui.web.history.urls")),
    path("", include("memoryui.web.browse.urls")),
]
