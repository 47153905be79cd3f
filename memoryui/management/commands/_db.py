"""Commands that need the database make sure it exists first (a fresh install works)."""

from __future__ import annotations

import sys

from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.migrations.executor import MigrationExecutor
from django.db.utils import DatabaseError


def ensure_migrated() -> None:
    """Apply pending migrations (saying so on stderr); a database that cannot be reached
    is one line naming DATABASE_URL, not a traceback."""
    connection = connections[DEFAULT_DB_ALIAS]
    try:
        executor = MigrationExecutor(connection)
        plan = executor.migration_plan(executor.loader.graph.leaf_nodes())
    except DatabaseError as exc:
        raise CommandError(f"the database is not usable ({exc}); check DATABASE_URL") from None
    if not plan:
        return
    sys.stderr.write(f"applying {len(plan)} database migration(s) first "
                     "(python3 manage.py migrate)\n")
    call_command("migrate", interactive=False, verbosity=0)
