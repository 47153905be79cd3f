"""Write policies from the shell: `policy SCOPE KIND POLICY [--token T]`, `policy --list`,
`policy SCOPE KIND --clear [--token T]`.

SCOPE is a scope name or `*` (the workspace default); KIND one of the layout's kinds
(memory, note, scratchpad, global, world, skill, directive); POLICY write, propose or read.
"""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError, CommandParser

from memoryui.management.commands._db import ensure_migrated
from memoryui.management.commands.token import find_token
from memoryui.models import Token
from memoryui.policies import KINDS, POLICIES, PolicyError, clear_policy, policy_rows, set_policy


class Command(BaseCommand):
    help = "Set, clear or list who may write, only propose, or only read each kind of file."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("scope", nargs="?", help="a scope, or * for every scope")
        parser.add_argument("kind", nargs="?", help=f"one of: {', '.join(KINDS)}")
        parser.add_argument("policy", nargs="?", help=f"one of: {', '.join(POLICIES)}")
        parser.add_argument("--token", help="override for one token (its id or prefix)")
        parser.add_argument("--clear", action="store_true",
                            help="remove the override (the next level applies again)")
        parser.add_argument("--list", action="store_true", help="list every policy set")

    def handle(self, *args: object, **opts: object) -> None:
        ensure_migrated()
        if opts["list"]:
            self.list()
            return
        scope, kind, policy = opts["scope"], opts["kind"], opts["policy"]
        if not scope or not kind or (policy is None and not opts["clear"]):
            raise CommandError("usage: policy SCOPE KIND POLICY [--token T], "
                               "policy SCOPE KIND --clear, or policy --list")
        if policy is not None and opts["clear"]:
            raise CommandError("give either a POLICY or --clear, not both")
        token: Token | None = find_token(str(opts["token"])) if opts["token"] else None
        if token is not None and token.revoked_at is not None:
            raise CommandError(f"token {token.prefix}… is revoked")
        try:
            if opts["clear"]:
                gone = clear_policy(str(scope), str(kind), token)
                self.stdout.write(("cleared" if gone else "no override for") +
                                  f" {kind} in {self._where(str(scope), token)}")
                return
            set_policy(str(scope), str(kind), str(policy), token)
        except PolicyError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"{kind} in {self._where(str(scope), token)}: {policy}")

    @staticmethod
    def _where(scope: str, token: Token | None) -> str:
        where = "every scope" if scope == "*" else f"scope {scope}"
        return where + (f" for token {token.prefix}…" if token is not None else "")

    def list(self) -> None:
        rows = [("SCOPE", "KIND", "POLICY", "TOKEN", "SET AT")]
        rows += [(scope, kind, policy, token or "-", source)
                 for scope, kind, policy, token, source in policy_rows()]
        if len(rows) == 1:
            self.stdout.write("every kind: write (no policy set; daily logs are always "
                              "written directly)")
            return
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        for r in rows:
            self.stdout.write("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True))
                              .rstrip())
        self.stdout.write("anything else: write; daily logs are always written directly")
