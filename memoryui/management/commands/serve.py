"""The production server in one command: migrate, start the committer, run stock uvicorn.

Any ASGI server runs memoryui the same way beside `manage.py committer`
(docs/deployment.md); this command is the shortest path to that on one machine.
"""

from __future__ import annotations

import os
from typing import cast

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser


class Command(BaseCommand):
    help = ("Migrate the database, start the committer process, then serve memoryui "
            "(HTTP + MCP) with uvicorn workers.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--bind", default=settings.MEMORYUI_BIND,
                            help="HOST:PORT to listen on (default: MEMORYUI_BIND, "
                                 "127.0.0.1:8000)")
        parser.add_argument("--workers", type=int,
                            default=settings.MEMORYUI_WORKERS,
                            help="worker processes (default: MEMORYUI_WORKERS, 2)")
        parser.add_argument("--commit-delay", type=float, default=None,
                            help="seconds agent writes may wait to be grouped into commits "
                                 "(default: MEMORYUI_COMMIT_DELAY, 0.2)")
        parser.add_argument("--no-migrate", action="store_true", help="skip migrations")
        parser.add_argument("--no-committer", action="store_true",
                            help="start no committer (one runs on its own, e.g. a "
                                 "systemd unit; without any, workers commit themselves)")
        parser.add_argument("--log-level", default=None,
                            choices=["critical", "error", "warning", "info", "debug"],
                            help="uvicorn's log level (default: LOG_LEVEL, info)")

    def handle(self, *args: object, **opts: object) -> None:
        import uvicorn

        from memoryui import launch
        from memoryui.store.sync import SyncError
        from memoryui.workspace import get_store, reset_store

        host, sep, port = str(opts["bind"]).rpartition(":")
        if not sep or not port.isdigit():
            raise CommandError("--bind takes HOST:PORT, e.g. 127.0.0.1:8000")
        host = host.strip("[]") or "127.0.0.1"
        workers = int(cast("int | str", opts["workers"]))
        if workers < 1:
            raise CommandError("--workers must be at least 1")
        delay = cast("float | None", opts["commit_delay"])
        if delay is None:
            delay = settings.MEMORYUI_COMMIT_DELAY
        if float(delay) < 0:
            raise CommandError("--commit-delay must not be negative")
        log_level = str(opts["log_level"] or settings.LOG_LEVEL).lower()
        if not opts["no_migrate"]:
            call_command("migrate", interactive=False, verbosity=0)
        # Workers and the committer are new processes that read the settings again.
        os.environ["MEMORYUI_COMMIT_DELAY"] = str(delay)
        os.environ["MEMORYUI_WORKSPACE"] = str(settings.MEMORYUI_WORKSPACE)
        os.environ["LOG_LEVEL"] = log_level.upper()
        try:  # the workspace made (git init, or a clone with MEMORYUI_REMOTE) once, here
            get_store()
        except SyncError as exc:
            raise CommandError(str(exc)) from None
        reset_store()
        env = launch.child_env(settings.BASE_DIR)
        failed = launch.preflight(env)
        if failed is not None:
            raise CommandError(f"a worker cannot start: {failed}")
        committer = None if opts["no_committer"] else launch.CommitterChild(env)
        watch = launch.CrashWatch(workers)
        self.stdout.write(f"memoryui serving {settings.MEMORYUI_WORKSPACE} "
                          f"({settings.MEMORYUI_LAYOUT} layout) at http://{opts['bind']}/")
        self.stdout.flush()
        try:
            if committer is not None:
                committer.start()
            if workers > 1:
                watch.start()
            uvicorn.run("memoryui.asgi:application", host=host, port=int(port),
                        workers=workers, log_level=log_level, lifespan="on",
                        proxy_headers=False)  # the app reads them (FORWARDED_ALLOW_IPS)
        except SystemExit as exc:  # one worker in this process, which did not start
            if exc.code:
                raise CommandError("the server did not start; see the errors above") from None
        finally:
            watch.stop()
            if committer is not None:
                committer.stop()
        if watch.tripped:
            raise CommandError(watch.tripped)
        if watch.failed_start():
            raise CommandError("a worker did not start; see the errors above")
