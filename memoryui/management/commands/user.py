"""Create or update a person with a role (password from MEMORYUI_PASSWORD or a prompt)."""

from __future__ import annotations

import getpass
import os
import sys

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from memoryui.management.commands._db import ensure_migrated
from memoryui.models import Profile
from memoryui.roles import ADMIN, ROLES


class Command(BaseCommand):
    help = "Create or update a person: user NAME --role viewer|curator|admin."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name")
        parser.add_argument("--role", choices=ROLES, required=True)
        parser.add_argument("--email", default="")

    def handle(self, *args: object, **opts: object) -> None:
        name, role = str(opts["name"]), str(opts["role"])
        password = os.environ.get("MEMORYUI_PASSWORD")
        if password is None:
            password = ask_password(name)
        if len(password) < 8:
            raise CommandError("the password must have at least 8 characters")
        ensure_migrated()
        set_person(name, role, password, email=str(opts["email"]))
        self.stdout.write(f"{name} is now {role}")


NO_PASSWORD = ("no password given: set MEMORYUI_PASSWORD, pipe the password on stdin, or run "
               "this in a terminal to be asked for it")


def ask_password(name: str) -> str:
    """A prompt in a terminal; otherwise one line from stdin (scripts pipe it in)."""
    stdin = sys.stdin
    if stdin is None or stdin.closed:
        raise CommandError(NO_PASSWORD)
    try:
        if stdin.isatty():
            return getpass.getpass(f"Password for {name}: ")
        line = stdin.readline()
    except (EOFError, KeyboardInterrupt, OSError, ValueError):
        raise CommandError(NO_PASSWORD) from None
    if not line:
        raise CommandError(NO_PASSWORD)
    return line.rstrip("\r\n")


def set_person(name: str, role: str, password: str, email: str = "") -> object:
    User = get_user_model()
    user, _ = User.objects.get_or_create(username=name)
    user.set_password(password)
    if email:
        user.email = email
    user.is_staff = user.is_superuser = role == ADMIN
    user.save()
    Profile.objects.update_or_create(user=user, defaults={"role": role})
    return user
