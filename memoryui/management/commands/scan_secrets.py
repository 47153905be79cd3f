"""Rebuild the flagged-secrets record by scanning every file once (docs/security.md)."""

from __future__ import annotations

from django.core.management.base import BaseCommand

from memoryui.workspace import get_store


class Command(BaseCommand):
    help = ("Scan every file of the workspace for secrets and rewrite the flagged record "
            "(.git/memoryui/secrets.json). Writes keep it current; run this once on a "
            "workspace that predates it, or after changing MEMORYUI_SECRETS from off.")

    def handle(self, *args: object, **opts: object) -> None:
        store = get_store()
        if not store.secrets.enabled:
            self.stderr.write("MEMORYUI_SECRETS=off: nothing scanned")
            return
        with store.git.write_lock:
            files = ((p, store.read(p) or "") for p in store.list_files())
            count = store.secrets.rebuild(files)
        self.stdout.write(f"{count} file(s) contain secrets")
        for path, found in sorted(store.secrets.flagged().items()):
            kinds = ", ".join(f"{f.kind} (line {f.line})" for f in found)
            self.stdout.write(f"  {path}: {kinds}")
