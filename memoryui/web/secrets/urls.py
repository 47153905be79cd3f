from django.urls import path

from . import views

urlpatterns = [
    path("remove/<path:path>", views.remove, name="secret_remove"),
    path("allow/<path:path>", views.allow, name="secret_allow"),
    path("allowed/", views.allowed, name="secret_allowed"),
]
