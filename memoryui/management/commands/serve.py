"""The production server: migrate, then uvicorn with several worker processes."""

from __future__ import annotations

import os

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser


class Command(BaseCommand):
    help = "Migrate the database, then serve memoryui (HTTP + MCP) with uvicorn workers."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--bind", default=os.environ.get("MEMORYUI_BIND", "127.0.0.1:8000"),
                            help="HOST:PORT to listen on (default: MEMORYUI_BIND, "
                                 "127.0.0.1:8000)")
        parser.add_argument("--workers", type=int,
                            default=os.environ.get("MEMORYUI_WORKERS", "2"),
                            help="worker processes (default: MEMORYUI_WORKERS, 2)")
        parser.add_argument("--commit-delay", type=float, default=None,
                            help="seconds agent writes may wait to be grouped into commits "
                                 "(default: MEMORYUI_COMMIT_DELAY, 0.2)")
        parser.add_argument("--no-migrate", action="store_true", help="skip migrations")
        parser.add_argument("--log-level", default=None,
                            choices=["critical", "error", "warning", "info", "debug"],
                            help="uvicorn's log level (default: LOG_LEVEL, info)")

    def handle(self, *args: object, **opts: object) -> None:
        from memoryui import serving

        host, sep, port = str(opts["bind"]).rpartition(":")
        if not sep or not port.isdigit():
            raise CommandError("--bind takes HOST:PORT, e.g. 127.0.0.1:8000")
        host = host.strip("[]") or "127.0.0.1"
        if not opts["no_migrate"]:
            call_command("migrate", interactive=False, verbosity=0)
        delay = opts["commit_delay"]
        if delay is None:
            delay = settings.MEMORYUI_COMMIT_DELAY
        if delay < 0:
            raise CommandError("--commit-delay must not be negative")
        # Workers are new processes that read the settings again: pass the choice on.
        os.environ["MEMORYUI_COMMIT_DELAY"] = str(delay)
        log_level = str(opts["log_level"] or settings.LOG_LEVEL).lower()
        os.environ["MEMORYUI_WORKSPACE"] = str(settings.MEMORYUI_WORKSPACE)
        # Create the workspace (git init) before workers start racing to do it.
        from memoryui.store.sync import SyncError
        from memoryui.workspace import get_store

        try:
            store = get_store()  # with MEMORYUI_REMOTE: clones an empty workspace, or checks
        except SyncError as exc:  # it relates
            raise CommandError(str(exc)) from None
        if int(opts["workers"]) > 1 and delay > 0:
            # This process only supervises the workers: its thread makes the grouped commits
            # and indexes them, so neither holds a worker's GIL while it answers requests.
            os.environ["MEMORYUI_COMMIT_HOST"] = str(os.getpid())
            store.host_commits()
        self.stdout.write(f"memoryui serving {settings.MEMORYUI_WORKSPACE} "
                          f"({settings.MEMORYUI_LAYOUT} layout) at http://{opts['bind']}/")
        self.stdout.flush()
        serving.run("memoryui.asgi:application", host=host, port=int(port),
                    workers=int(opts["workers"]), log_level=log_level)
