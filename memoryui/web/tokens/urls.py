from django.urls import path

from memoryui.web.tokens import views

urlpatterns: list = [
    path("", views.tokens, name="tokens"),
    path("<int:pk>/revoke", views.revoke, name="token_revoke"),
]
