"""One sync round with the git remote (for cron), or its status; passwords never printed."""

from __future__ import annotations

import datetime as dt

from django.core.management.base import BaseCommand, CommandError, CommandParser

from memoryui.store.sync import SyncError, SyncStatus, mask_secrets
from memoryui.workspace import get_syncer, sync_config


def _when(ts: float | None) -> str:
    if ts is None:
        return "never"
    return dt.datetime.fromtimestamp(ts, tz=dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


class Command(BaseCommand):
    help = ("Run one sync round with MEMORYUI_REMOTE (commit, fetch, integrate, push) and "
            "print a one-line summary; exits non-zero when the round fails.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--status", action="store_true",
                            help="print the sync status instead of running a round")
        parser.add_argument("--wait", action="store_true",
                            help="wait for a round in progress instead of skipping")

    def handle(self, *args: object, **opts: object) -> None:
        config = sync_config()
        if config is None:
            if opts["status"]:  # a status question with a plain answer, not a failure
                self.stdout.write("sync is off: MEMORYUI_REMOTE is not set")
                return
            raise CommandError("sync is off: set MEMORYUI_REMOTE to a git URL")
        try:
            syncer = get_syncer()
            assert syncer is not None
            if opts["status"]:
                self._status(syncer.status())
                return
            result = syncer.round(blocking=bool(opts["wait"]))
        except SyncError as exc:
            raise CommandError(config.mask(str(exc))) from None
        except Exception as exc:  # noqa: BLE001 - git may echo the URL in any error
            raise CommandError(mask_secrets(f"sync failed: {exc}", config.url)) from None
        if result.error:
            raise CommandError(result.summary())
        self.stdout.write(result.summary())

    def _status(self, st: SyncStatus) -> None:
        w = self.stdout.write
        w(f"remote:     {st.url} (branch {st.branch}, push {st.push_mode})")
        w(f"state:      {st.state} — {st.label}")
        w(f"ahead:      {st.ahead} commit(s); behind: {st.behind}")
        w(f"last fetch: {_when(st.last_fetch)}; last push: {_when(st.last_push)}; "
          f"last round: {_when(st.last_round)}")
        if st.last_error:
            w(f"last error: {st.last_error} ({_when(st.last_error_at)})")
        for c in st.conflicts:
            w(f"conflict:   {c.path} (remote {c.theirs_commit[:8]}, since {_when(c.since)})")
