"""Browse and edit URLs, and sign-in (Django's auth views under /accounts/)."""

from django.contrib.auth import views as auth_views
from django.urls import path

from . import editor, views

urlpatterns = [
    path("", views.overview, name="overview"),
    path("accounts/login/", auth_views.LoginView.as_view(
        template_name="registration/login.html", redirect_authenticated_user=True),
        name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),  # POST only
    path("s/<str:scope>/", views.scope, name="scope"),
    path("f/<path:path>", views.file_page, name="file"),
    path("raw/<path:path>", views.raw, name="raw"),
    path("edit/<path:path>", editor.edit, name="edit"),
    path("preview/", editor.preview, name="preview"),
    path("new/", editor.new_file, name="new_file"),
    path("delete/<path:path>", editor.delete_file, name="delete_file"),
    path("_browse/pending-count/", views.pending_count, name="pending_count"),
]
