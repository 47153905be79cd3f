"""URLs: each area owns its own URLconf module."""

from django.contrib import admin
from django.templatetags.static import static
from django.urls import include, path
from django.views.generic import RedirectView

from memoryui import health

urlpatterns = [
    path("healthz", health.healthz, name="healthz"),
    # Browsers ask for /favicon.ico whatever the page's <link rel="icon"> says.
    path("favicon.ico", RedirectView.as_view(url=static("memoryui/favicon.svg"), permanent=True)),
    path("admin/", admin.site.urls),
    path("api/v1/", include("memoryui.api.urls")),
    path("", include("memoryui.web.urls")),
]

# Django's own error answers: JSON for API clients, the styled pages for people.
handler400 = "memoryui.errorpages.bad_request"
handler403 = "memoryui.errorpages.permission_denied"
handler404 = "memoryui.errorpages.page_not_found"
handler500 = "memoryui.errorpages.server_error"
