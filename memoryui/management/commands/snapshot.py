"""Commit changes made outside memoryui, each attributed to the scope that owns its path."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandParser

from memoryui.workspace import get_store


class Command(BaseCommand):
    help = "Commit pending changes (files changed outside memoryui), attributed per scope."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--message", default=None, help="commit message")

    def handle(self, *args: object, **opts: object) -> None:
        store = get_store()
        pending = store.pending()
        if not pending:
            self.stdout.write("nothing to commit: no pending changes")
            return
        commits = store.commit_pending(message=opts["message"])
        self.stdout.write(f"committed {len(pending)} file(s) in {len(commits)} commit(s)")
        for e in pending:
            self.stdout.write(f"  {e.status:9} {e.path}  ({store.owner_of(e.path).trailer})")
