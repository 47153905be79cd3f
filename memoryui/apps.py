from django.apps import AppConfig


class MemoryuiConfig(AppConfig):
    name = "memoryui"
    verbose_name = "memoryui"
    default_auto_field = "django.db.models.BigAutoField"
