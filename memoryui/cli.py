"""`memoryui`: the console command (`memoryui serve`, `memoryui demo`, `memoryui token ...`).

It runs Django's management commands with memoryui's settings, so an installed memoryui
needs neither a checkout's manage.py nor DJANGO_SETTINGS_MODULE. A setting that cannot
be read (a bad environment variable) is one sentence on stderr and exit status 2, not
a traceback.
"""

from __future__ import annotations

import os
import sys


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv if argv is None else argv)
    args[0] = "memoryui"  # Django's help names the program after argv[0]
    os.environ["DJANGO_SETTINGS_MODULE"] = "memoryui.settings"
    from django.conf import settings
    from django.core.exceptions import ImproperlyConfigured
    from django.core.management import execute_from_command_line

    try:
        settings.INSTALLED_APPS  # noqa: B018 - loads the settings: their errors come here
        execute_from_command_line(args)
    except ImproperlyConfigured as exc:
        print(f"memoryui: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
