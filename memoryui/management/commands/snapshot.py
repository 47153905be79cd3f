"""Commit changes made outside memoryui, each attributed to the scope that owns its path."""

from __future__ import annotations

from typing import cast

from django.core.management.base import BaseCommand, CommandParser

from memoryui.workspace import get_store


class Command(BaseCommand):
    help = ("Commit pending changes (files changed outside memoryui), attributed per scope. "
            "Symbolic links are never followed: they are reported and left for a curator "
            "to discard.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--message", default=None, help="commit message")

    def handle(self, *args: object, **opts: object) -> None:
        store = get_store()
        pending = store.pending()
        if not pending:
            self.stdout.write("nothing to commit: no pending changes")
            return
        commits = store.commit_pending(message=cast("str | None", opts["message"]))
        refused = {e.path: e.refused for e in commits.refused}
        done = [e for e in pending if e.path not in refused]
        self.stdout.write(f"committed {len(done)} file(s) in {len(commits)} commit(s)")
        for e in done:
            self.stdout.write(f"  {e.status:9} {e.path}  ({store.owner_of(e.path).trailer})")
        if refused:
            self.stderr.write(f"refused {len(refused)} item(s); discard them on the pending "
                              "page:")
            for path, reason in refused.items():
                self.stderr.write(f"  {path!r}: {reason}")
