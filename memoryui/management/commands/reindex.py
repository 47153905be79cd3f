"""Rebuild the search index from the workspace files (the files are the truth)."""

from __future__ import annotations

import sys
import time

from django.core.management.base import BaseCommand, CommandError, CommandParser

from memoryui.store import StoreError
from memoryui.workspace import get_search_index, get_store

BAR_WIDTH = 30


class Command(BaseCommand):
    help = ("Rebuild the full-text search index from every file in the workspace, with a "
            "progress bar. Searches keep working on the old index until the new one is ready.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--quiet", action="store_true", help="no progress bar")

    def handle(self, *args: object, **opts: object) -> None:
        store = get_store()
        try:
            index = get_search_index()
        except StoreError as exc:
            raise CommandError(str(exc)) from None
        out = sys.stderr
        show = not opts["quiet"]
        started = time.perf_counter()

        def progress(done: int, total: int) -> None:
            if not show:
                return
            frac = done / total if total else 1.0
            filled = int(frac * BAR_WIDTH)
            rate = done / max(time.perf_counter() - started, 1e-9)
            out.write(f"\rIndexing [{'#' * filled}{'-' * (BAR_WIDTH - filled)}] "
                      f"{done}/{total} files ({rate:,.0f}/s)")
            out.flush()

        stats = index.rebuild(store, progress=progress)
        if show:
            out.write("\n")
        self.stdout.write(f"Indexed {stats['files']} files of {store.root} in "
                          f"{stats['seconds']:.1f} s ({index.backend}: {index.location}).")
