"""Database state: people's roles, agent tokens, review state. No memory content here:
the files are the source of truth and everything below can be rebuilt from git."""

from __future__ import annotations

import hashlib
import secrets

from django.conf import settings
from django.db import models
from django.utils import timezone

from memoryui.roles import ROLES, VIEWER

TOKEN_PREFIX = "mui_"


class Profile(models.Model):
    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                                related_name="memoryui_profile")
    role = models.CharField(max_length=16, choices=[(r, r) for r in ROLES], default=VIEWER)

    def __str__(self) -> str:
        return f"{self.user} ({self.role})"


def hash_token(raw: str) -> str:
    """Tokens are 256-bit random strings, so one sha256 is enough to store them safely."""
    return hashlib.sha256(raw.encode()).hexdigest()


class TokenQuerySet(models.QuerySet):
    def active(self) -> TokenQuerySet:
        return self.filter(revoked_at__isnull=True)


class Token(models.Model):
    """An agent's bearer token: bound to one scope (plus optional grants) or admin."""

    name = models.CharField(max_length=100, blank=True)
    scope = models.CharField(max_length=64, blank=True, db_index=True,
                             help_text="The scope this token acts for; empty for admin tokens.")
    key_hash = models.CharField(max_length=64, unique=True, editable=False)
    prefix = models.CharField(max_length=16, editable=False,
                              help_text="First characters of the token, to recognise it.")
    can_write_world = models.BooleanField(default=False)
    can_write_global = models.BooleanField(default=False)
    is_admin = models.BooleanField(default=False)
    read_only = models.BooleanField(default=False,
                                    help_text="Every write with this token is refused (403).")
    # A host token (git access at /git/workspace.git): it reads the whole workspace and
    # pushes the scopes listed here (world and global by the two grants above, skills and
    # directives by the two below).
    is_host = models.BooleanField(default=False)
    host_scopes = models.JSONField(default=list, blank=True)
    can_push_skills = models.BooleanField(default=False)
    can_push_directives = models.BooleanField(default=False)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                   on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(default=timezone.now)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    objects = TokenQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        who = "admin" if self.is_admin else "git host" if self.is_host else self.scope
        return f"{self.prefix}… ({who})"

    @classmethod
    def issue(cls, *, scope: str = "", world: bool = False, global_: bool = False,
              admin: bool = False, name: str = "", created_by: object = None,
              read_only: bool = False, host_scopes: list[str] | None = None,
              skills: bool = False, directives: bool = False) -> tuple[Token, str]:
        """Create a token; the raw value is returned once and never stored.

        `host_scopes` (a list, possibly empty) makes a host token: git access, pushing those
        scopes (and the shared kinds granted)."""
        raw = TOKEN_PREFIX + secrets.token_urlsafe(32)
        tok = cls.objects.create(name=name, scope=scope, key_hash=hash_token(raw),
                                 prefix=raw[:12], can_write_world=world,
                                 can_write_global=global_, is_admin=admin,
                                 read_only=read_only, is_host=host_scopes is not None,
                                 host_scopes=sorted(set(host_scopes or [])),
                                 can_push_skills=skills, can_push_directives=directives,
                                 created_by=created_by)
        return tok, raw

    @classmethod
    def authenticate(cls, raw: str) -> Token | None:
        if not raw or not raw.startswith(TOKEN_PREFIX) or len(raw) > 200:
            return None
        return cls.objects.active().filter(key_hash=hash_token(raw)).first()

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None

    def host_summary(self) -> str:
        """What a host token may do, in one line (the Tokens page, `token list`)."""
        pushes = list(self.host_scopes or [])
        pushes += [grant for grant, on in (
            ("world topics", self.can_write_world), ("the global memory", self.can_write_global),
            ("skills", self.can_push_skills), ("directives", self.can_push_directives)) if on]
        return (f"git host: pushes {', '.join(pushes) or 'nothing'}; reads the whole "
                "workspace")

    def may_act_for(self, scope: str) -> bool:
        return self.is_admin or (bool(self.scope) and self.scope == scope)


class Promotion(models.Model):
    """A promotion of daily entries into a target file, with its commit (and its undo)."""

    target_path = models.CharField(max_length=1024)
    target_kind = models.CharField(max_length=16)
    commit_sha = models.CharField(max_length=40, db_index=True)
    created_by = models.CharField(max_length=150)
    created_at = models.DateTimeField(default=timezone.now)
    undo_commit_sha = models.CharField(max_length=40, blank=True)
    undone_by = models.CharField(max_length=150, blank=True)
    undone_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]


class ReviewState(models.Model):
    """What a lead decided about one daily entry: promoted or dismissed."""

    PROMOTED, DISMISSED = "promoted", "dismissed"

    path = models.CharField(max_length=1024)
    entry_id = models.CharField(max_length=64)
    scope = models.CharField(max_length=64, db_index=True)
    date = models.CharField(max_length=10, db_index=True)
    status = models.CharField(max_length=16, choices=[(PROMOTED, PROMOTED),
                                                      (DISMISSED, DISMISSED)])
    promotion = models.ForeignKey(Promotion, null=True, blank=True, on_delete=models.SET_NULL,
                                  related_name="entries")
    reviewed_by = models.CharField(max_length=150)
    reviewed_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["path", "entry_id"],
                                               name="one_review_per_entry")]


class WritePolicy(models.Model):
    """How agents may change one kind of file: write, propose (a person approves) or read.

    `scope` "*" is the workspace default; a row with a token overrides both for that token.
    No row means "write". Daily logs are always written directly (memoryui/policies.py)."""

    WORKSPACE = "*"

    scope = models.CharField(max_length=64, default=WORKSPACE)
    kind = models.CharField(max_length=16)
    policy = models.CharField(max_length=8)
    token = models.ForeignKey(Token, null=True, blank=True, on_delete=models.CASCADE,
                              related_name="policies")
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["scope", "kind", "token"],
                                    name="one_policy_per_scope_kind_token"),
            models.UniqueConstraint(fields=["scope", "kind"], condition=models.Q(token=None),
                                    name="one_policy_per_scope_kind"),
        ]


class ProposalDecision(models.Model):
    """The shared record of one proposal (its commits live in git, `store/proposals.py`):
    every instance reads the same inbox from here."""

    OPEN, APPROVED, REJECTED, WITHDRAWN = "open", "approved", "rejected", "withdrawn"
    STATUSES = (OPEN, APPROVED, REJECTED, WITHDRAWN)

    proposal_id = models.CharField(max_length=12, unique=True)
    path = models.CharField(max_length=1024)
    scope = models.CharField(max_length=64, db_index=True, help_text="The proposing agent's.")
    kind = models.CharField(max_length=16, blank=True)
    proposer = models.CharField(max_length=150)
    token = models.ForeignKey(Token, null=True, blank=True, on_delete=models.SET_NULL,
                              related_name="+")
    status = models.CharField(max_length=12, choices=[(s, s) for s in STATUSES],
                              default=OPEN, db_index=True)
    decided_by = models.CharField(max_length=150, blank=True)
    decided_at = models.DateTimeField(null=True, blank=True)
    reason = models.TextField(blank=True)
    merge_sha = models.CharField(max_length=40, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [models.Index(fields=["status", "scope"], name="proposal_status_scope")]


class ContradictionVerdict(models.Model):
    """What a lead chose about a daily entry that may contradict a curated passage: replace
    the passage, keep both, or dismiss. The passage is named by its file and a digest of its
    wording, so a reworded passage is a new pair (memoryui.review.contradictions)."""

    REPLACE, KEEP, DISMISS = "replace", "keep", "dismiss"

    entry_path = models.CharField(max_length=1024)
    entry_id = models.CharField(max_length=64)
    target_path = models.CharField(max_length=1024)
    digest = models.CharField(max_length=16)
    choice = models.CharField(max_length=16, choices=[(REPLACE, REPLACE), (KEEP, KEEP),
                                                      (DISMISS, DISMISS)])
    commit_sha = models.CharField(max_length=40, blank=True)
    decided_by = models.CharField(max_length=150)
    decided_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(
            fields=["entry_path", "entry_id", "target_path", "digest"],
            name="one_verdict_per_pair")]
