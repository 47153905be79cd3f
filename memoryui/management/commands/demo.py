"""Create the demo workspace (with history) and a demo admin login."""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import cast

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser

from memoryui.demo import build_demo
from memoryui.roles import ADMIN, CURATOR


class Command(BaseCommand):
    help = "Create a realistic demo workspace with weeks of history, and a demo admin login."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--dir", default=None,
                            help="where to create it (default: MEMORYUI_WORKSPACE)")
        parser.add_argument("--days", type=int, default=21)
        parser.add_argument("--force", action="store_true",
                            help="rebuild even if the folder already has files")

    def handle(self, *args: object, **opts: object) -> None:
        root = Path(cast("str | None", opts["dir"]) or settings.MEMORYUI_WORKSPACE)
        has_files = root.exists() and any(p.name != ".git" for p in root.iterdir())
        if has_files and not opts["force"]:
            self.stdout.write(f"workspace {root} already has files; keeping it")
        else:
            if has_files:
                raise CommandError("refusing to overwrite a workspace; remove it first")
            days = int(cast("int | str", opts["days"]))
            if days < 1:
                raise CommandError("--days must be 1 or more")
            build_demo(root, settings.MEMORYUI_LAYOUT, days=days)
            self.stdout.write(f"demo workspace created at {root}")
        call_command("migrate", interactive=False, verbosity=0)
        login = demo_login()
        self.stdout.write(f"sign in as: {login[0]} / {login[1]}")


def demo_login() -> tuple[str, str]:
    """The demo admin (and a curator, alice): passwords kept in var/ so reruns print them."""
    from memoryui.management.commands.user import set_person

    path = settings.VAR_DIR / "demo-login.txt"
    if path.exists():
        name, password = path.read_text().split("\n")[:2]
    else:
        name, password = "admin", secrets.token_urlsafe(9)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(f"{name}\n{password}\n")
    set_person(name, ADMIN, password)
    set_person("alice", CURATOR, password)
    return name, password
