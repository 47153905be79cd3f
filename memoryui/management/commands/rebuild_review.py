"""Rebuild promotions and promoted entries from the `Promoted-From` trailers in git."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandParser

from memoryui.management.commands._db import ensure_migrated
from memoryui.review import rebuild
from memoryui.review.state import LEDGER
from memoryui.workspace import get_store


class Command(BaseCommand):
    help = ("Recreate review state (promotions and promoted entries) from the workspace's "
            "history. Undone promotions (a later commit with `Reverts: <sha>`) come back as "
            "undone. Dismissals come back from the commits that record them; older ones "
            "kept in the database stay.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--dry-run", action="store_true",
                            help="count what would be rebuilt without changing the database")

    def handle(self, *args: object, **opts: object) -> None:
        ensure_migrated()
        stats = rebuild(get_store(), LEDGER, dry_run=bool(opts["dry_run"]))
        verb = "would rebuild" if opts["dry_run"] else "rebuilt"
        self.stdout.write(
            f"{verb} {stats.promotions} promotion(s) ({stats.undone} undone), "
            f"{stats.entries} promoted entr{'y' if stats.entries == 1 else 'ies'}; "
            f"kept {stats.dismissals_kept} dismissal(s)"
            + (f", restored {stats.dismissals_restored} from history"
               if stats.dismissals_restored else ""))
        for line in stats.skipped:
            self.stderr.write(f"  skipped {line}")
