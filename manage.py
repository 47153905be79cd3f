#!/usr/bin/env python
"""Django's command-line utility for memoryui."""

import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryui.settings")
    from django.core.management import execute_from_command_line

    from memoryui.startup import configured

    configured(lambda: execute_from_command_line(sys.argv))


if __name__ == "__main__":
    main()
