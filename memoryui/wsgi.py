import os

from django.core.wsgi import get_wsgi_application

from memoryui.startup import configured

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryui.settings")
application = configured(get_wsgi_application)  # a settings typo: one line, exit 2
