"""The committer process of one workspace clone (docs/architecture.md).

It makes the grouped commits of every server worker's journaled writes, feeds the search
index with what it commits, runs the background sync rounds and git's housekeeping, so
that none of it holds up a worker's requests. One runs per workspace clone: a second one
started beside it waits on the committer lock and takes over when the first ends.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
from types import FrameType
from typing import cast

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

log = logging.getLogger("memoryui.committer")


class Command(BaseCommand):
    help = ("Make the grouped commits, feed the search index, run sync rounds and git's "
            "housekeeping for the workspace, beside any server's workers.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--commit-delay", type=float, default=None,
                            help="seconds between commits of waiting writes "
                                 "(default: MEMORYUI_COMMIT_DELAY, 0.2)")

    def handle(self, *args: object, **opts: object) -> None:
        from memoryui.store.committer import yield_session
        from memoryui.store.sync import SyncError
        from memoryui.workspace import get_store, start_sync_thread

        delay = cast("float | None", opts["commit_delay"])
        if delay is not None:
            if float(delay) < 0:
                raise CommandError("--commit-delay must not be negative")
            settings.MEMORYUI_COMMIT_DELAY = float(delay)
        try:
            store = get_store()  # with MEMORYUI_REMOTE: clones an empty workspace first
        except SyncError as exc:
            raise CommandError(str(exc)) from None
        try:
            if not store.host_commits(wait=False):
                log.info("another committer runs on %s: this one takes over when it ends",
                         store.root)
                store.host_commits(wait=True)
        except KeyboardInterrupt:
            return
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, _stop)
        try:  # (a stop signal may come at any moment from here)
            yield_session()  # within a session its threads' niceness lets requests go first
            log.info("committer %s running on %s", os.getpid(), store.root)
            _fill_catalogue(store)
            _follow_parent()
            start_sync_thread()
            # the threads work; a stop signal ends the wait, as does a workspace removed
            # under this process (a restart by the process manager then starts afresh)
            store.committer.gone.wait()
            raise CommandError(f"the workspace {store.root} is gone")
        except _Stopped:
            pass
        finally:
            store.close()  # commits what is still journaled, then lets go of the lock
            log.info("committer %s stopped", os.getpid())


def _fill_catalogue(store: object) -> None:
    """A workspace seen for the first time is catalogued here, in the background: the
    workers leave the first fill to this process (search/catalogue.py)."""
    from memoryui.search.catalogue import Catalogue

    if isinstance(catalogue := getattr(store, "catalogue", None), Catalogue):
        catalogue.ensure()


def _follow_parent() -> None:
    """Started by `serve`: stop (as on SIGTERM) once serve is gone, however it ended."""
    from memoryui.launch import PARENT_FD

    fd = os.environ.pop(PARENT_FD, "")
    if not fd.isdigit():
        return

    def wait() -> None:
        try:
            while os.read(int(fd), 1):
                pass
        except OSError:
            pass
        log.warning("the serve process that started this committer is gone: stopping")
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=wait, name="memoryui-parent", daemon=True).start()


class _Stopped(Exception):
    """A stop signal arrived."""


def _stop(sig: int, frame: FrameType | None) -> None:
    # Raised in the main thread, as SIGINT's KeyboardInterrupt is: a handler that took a
    # lock could find it held by the very code it interrupted.
    raise _Stopped
