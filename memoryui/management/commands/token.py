"""Agent tokens from the shell: `token create SCOPE [--world] [--global] [--admin]
[--read-only] [--name N]`, `token list`, `token revoke PREFIX_OR_ID`.

`create` prints the raw token alone on the last line of stdout, so scripts can take it
with `| tail -n 1`; it is shown once and only its hash is stored.
"""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from memoryui.management.commands._db import ensure_migrated
from memoryui.models import TOKEN_PREFIX, Token, hash_token
from memoryui.store import StoreError, names

PREFIX_LEN = 12  # what Token.issue keeps of the raw value


def grants_of(tok: Token) -> str:
    if tok.read_only:
        return "read-only" + (" admin" if tok.is_admin else "")
    if tok.is_admin:
        return "admin"
    grants = [g for g, on in (("world", tok.can_write_world), ("global", tok.can_write_global))
              if on]
    return ", ".join(grants) or "-"


def policies_of(tok: Token) -> str:
    """The token's own write-policy overrides, `kind=policy` (`manage.py policy --token`)."""
    rows = sorted((p.kind, p.policy, p.scope) for p in tok.policies.all())
    return ", ".join(f"{k}={v}" + ("" if s == "*" else f"@{s}") for k, v, s in rows) or "-"


def find_token(ref: str) -> Token:
    """A token by id, by its listed prefix (or a start of it), or by the raw value."""
    ref = ref.strip().rstrip("…")
    if ref.isdigit():
        tok = Token.objects.filter(pk=int(ref)).first()
        if tok is not None:
            return tok
    if len(ref) > PREFIX_LEN:
        tok = Token.objects.filter(key_hash=hash_token(ref)).first()
        if tok is None:
            raise CommandError(f"no token matches {ref[:PREFIX_LEN]}… (see `token list`)")
        return tok
    if len(ref) < len(TOKEN_PREFIX) + 2:
        raise CommandError(f"give the token id or at least {len(TOKEN_PREFIX) + 2} characters "
                           "of its prefix")
    matches = list(Token.objects.filter(prefix__startswith=ref))
    if not matches:
        raise CommandError(f"no token matches {ref!r} (see `token list`)")
    if len(matches) > 1:
        raise CommandError(f"{ref!r} matches {len(matches)} tokens; give more characters or "
                           "the id")
    return matches[0]


class Command(BaseCommand):
    help = "Create, list or revoke agent tokens."

    def add_arguments(self, parser: CommandParser) -> None:
        sub = parser.add_subparsers(dest="action", required=True)
        create = sub.add_parser("create", help="issue a token (printed once, last line)")
        create.add_argument("scope", nargs="?", default="",
                            help="the scope the token acts for (optional with --admin)")
        create.add_argument("--world", action="store_true", help="may write world topics")
        create.add_argument("--global", dest="global_", action="store_true",
                            help="may write the global memory")
        create.add_argument("--admin", action="store_true",
                            help="admin token: any scope, Dagu, files and history API")
        create.add_argument("--read-only", dest="read_only", action="store_true",
                            help="may read only: every write answers 403")
        create.add_argument("--name", default="", help="a label to recognise it by")
        lst = sub.add_parser("list", help="list tokens (never their values)")
        lst.add_argument("--active", action="store_true", help="hide revoked tokens")
        revoke = sub.add_parser("revoke", help="revoke a token")
        revoke.add_argument("token", help="its id, prefix (as listed) or the raw token")

    def handle(self, *args: object, **opts: object) -> None:
        action = opts["action"]
        ensure_migrated()
        if action == "create":
            self.create(str(opts["scope"] or ""), world=bool(opts["world"]),
                        global_=bool(opts["global_"]), admin=bool(opts["admin"]),
                        name=str(opts["name"]), read_only=bool(opts["read_only"]))
        elif action == "list":
            self.list(active_only=bool(opts["active"]))
        else:
            self.revoke(str(opts["token"]))

    def create(self, scope: str, *, world: bool, global_: bool, admin: bool, name: str,
               read_only: bool = False) -> None:
        if not scope and not admin:
            raise CommandError("give the SCOPE the token acts for, or --admin")
        if scope:
            try:
                names.validate_scope(scope)
            except StoreError as exc:
                raise CommandError(str(exc)) from None
        if len(name) > 100:
            raise CommandError("--name is at most 100 characters")
        if read_only and (world or global_):
            raise CommandError("a --read-only token writes nothing: drop --world and --global")
        tok, raw = Token.issue(scope=scope, world=world, global_=global_, admin=admin,
                               name=name, read_only=read_only)
        who = f"scope {scope}" if scope else "any scope"
        self.stdout.write(f"Created token {tok.prefix}… (id {tok.pk}) for {who}; grants: "
                          f"{grants_of(tok)}.")
        self.stdout.write("Store it now: it is shown only once.")
        self.stdout.write(raw)

    def list(self, active_only: bool) -> None:
        qs = Token.objects.active() if active_only else Token.objects.all()
        rows = [("ID", "PREFIX", "NAME", "SCOPE", "GRANTS", "POLICIES", "CREATED", "LAST USED",
                 "REVOKED")]
        for t in qs.order_by("pk").prefetch_related("policies"):
            rows.append((str(t.pk), t.prefix, t.name or "-", t.scope or "*", grants_of(t),
                         policies_of(t), _when(t.created_at), _when(t.last_used_at),
                         _when(t.revoked_at)))
        if len(rows) == 1:
            self.stdout.write("no tokens yet: python manage.py token create SCOPE")
            return
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        for r in rows:
            self.stdout.write("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True))
                              .rstrip())

    def revoke(self, ref: str) -> None:
        tok = find_token(ref)
        if tok.revoked_at is not None:
            self.stdout.write(f"token {tok.prefix}… (id {tok.pk}) was already revoked on "
                              f"{_when(tok.revoked_at)}")
            return
        tok.revoked_at = timezone.now()
        tok.save(update_fields=["revoked_at"])
        self.stdout.write(f"revoked token {tok.prefix}… (id {tok.pk}, "
                          f"{tok.scope or 'admin'})")


def _when(value: object) -> str:
    if value is None:
        return "-"
    return timezone.localtime(value).strftime("%Y-%m-%d %H:%M")
