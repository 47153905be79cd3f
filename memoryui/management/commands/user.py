"""Create or update a person with a role (password from MEMORYUI_PASSWORD or a prompt)."""

from __future__ import annotations

import getpass
import os

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

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
            password = getpass.getpass(f"Password for {name}: ")
        if len(password) < 8:
            raise CommandError("the password must have at least 8 characters")
        set_person(name, role, password, email=str(opts["email"]))
        self.stdout.write(f"{name} is now {role}")


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
