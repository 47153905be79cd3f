"""ASGI entry point. The MCP endpoint is mounted beside Django here (see memoryui.api.mcp)."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryui.settings")
django_app = get_asgi_application()
application = django_app
