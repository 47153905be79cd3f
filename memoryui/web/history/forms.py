"""The history area's input: every POST and query string is read by a form here.

Messages name the field and say how to fix it; the activity filters keep the exact wording
people (and tests) know ("since: invalid date ...", "invalid agent ...").
"""

from __future__ import annotations

import re
from urllib.parse import urlencode

from django import forms

from memoryui.store import ABSENT, InvalidName, names
from memoryui.store.dates import GIT_MAX, GIT_MIN, parse_date
from memoryui.web.common import StoreRuleField, first_error  # noqa: F401 - the history views' import
from memoryui.web.forms import DateRangeForm

MAX_OFFSET = 10_000_000
SHA_RE = re.compile(r"^[0-9a-fA-F]{7,40}$")  # a commit id a person may type or a link carries
VERSION_RE = re.compile(r"^[0-9a-f]{64}$")
USER_RE = re.compile(r"^[\w.@+-]{1,150}$")
GIT_NAME_RE = re.compile(r"^[\w .@-]{1,100}$")
MESSAGE_MAX = 500
WHO_CHOICES = [("", "everyone"), ("agents", "only agents"), ("people", "only people")]
WHO_ACTOR = {"agents": "agent:", "people": "user:"}  # `who` as a log actor prefix


class PageQuery(forms.Form):
    """`?page=N` of a history list."""

    page = forms.CharField(required=False)

    def clean_page(self) -> int:
        raw = self.cleaned_data["page"] or "1"
        if not raw.isdigit() or not raw.isascii() or not 1 <= int(raw) <= MAX_OFFSET:
            raise forms.ValidationError(f"invalid page {raw!r}: use a whole number from 1")
        return int(raw)


class CommitQuery(forms.Form):
    """A commit page: `?view=split` and `?path=` (one file of the commit)."""

    view = forms.CharField(required=False)  # "split"; anything else is the unified view
    path = StoreRuleField(names.validate_relpath, strip=False)


class ViewQuery(forms.Form):
    """`?view=raw` on a file at a commit (anything else: rendered)."""

    view = forms.CharField(required=False)

    @property
    def raw(self) -> bool:
        return self.is_valid() and self.cleaned_data["view"] == "raw"


class RestoreForm(forms.Form):
    """Bring back a file as it was at `rev`, if it is still at `base` (the page's version)."""

    rev = forms.RegexField(regex=SHA_RE, error_messages={
        "required": "choose the version to restore (rev must be a commit sha)",
        "invalid": "choose the version to restore (rev must be a commit sha)"})
    base = forms.CharField(error_messages={
        "required": "the form lacks the version it was loaded from; reload the page"})
    message = forms.CharField(required=False, max_length=MESSAGE_MAX)

    def clean_base(self) -> str:
        base = self.cleaned_data["base"]
        if base != ABSENT and not VERSION_RE.fullmatch(base):
            raise forms.ValidationError("the form lacks the version it was loaded from; "
                                        "reload the page")
        return base


def pending_path(path: object) -> str:
    """A path a pending change may have: relative and inside the workspace, but with any
    characters (files made natively may hold names memoryui itself would never write).
    Only paths the store lists as pending are ever acted on."""
    if not isinstance(path, str) or not path or len(path) > names.MAX_PATH_CHARS:
        raise InvalidName("path must be 1 to 1024 characters")
    if "\x00" in path or path.startswith("/"):
        raise InvalidName(f"invalid path {path!r}: must be relative to the workspace")
    if any(part in ("", ".", "..") for part in path.split("/")):
        raise InvalidName(f"invalid path {path!r}: empty, '.' or '..' component")
    return path


class PathsField(forms.MultipleChoiceField):
    """Pending paths chosen with checkboxes (see `pending_path`); duplicates dropped."""

    def __init__(self, **kwargs: object) -> None:
        super().__init__(required=False, **kwargs)

    def valid_value(self, value: str) -> bool:
        try:
            pending_path(value)
        except InvalidName:
            return False
        return True

    def clean(self, value: object) -> list[str]:
        return list(dict.fromkeys(super().clean(value)))


class PendingCommitForm(forms.Form):
    """Commit the selected pending files, attributed to their scopes or to "me"."""

    paths = PathsField(error_messages={"invalid_choice": "invalid path %(value)r"})
    attribute = forms.ChoiceField(required=False, choices=[("", "owners"), ("me", "me")])
    message = forms.CharField(required=False, max_length=MESSAGE_MAX)


class PendingDiscardForm(forms.Form):
    """Discard the selected pending files; `confirm=yes` once the person has seen them."""

    paths = PathsField(error_messages={"invalid_choice": "invalid path %(value)r"})
    confirm = forms.CharField(required=False)

    @property
    def confirmed(self) -> bool:
        return self.cleaned_data.get("confirm") == "yes"


class CommittedQuery(forms.Form):
    """`?committed=sha,sha` after a pending commit: which commits to link (bad ones dropped)."""

    committed = forms.CharField(required=False)

    @staticmethod
    def encode(shas: list[str]) -> str:
        return urlencode({"committed": ",".join(shas)})

    def shas(self) -> list[str]:
        if not self.is_valid():
            return []
        raw = self.cleaned_data["committed"].split(",")
        return [s for s in raw if SHA_RE.fullmatch(s)][:50]


class ActivityForm(DateRangeForm):
    """The activity feed's filters; every problem is a message next to its field."""

    actor = forms.CharField(required=False, max_length=200)
    scope = forms.CharField(required=False, max_length=200)
    kind = forms.CharField(required=False, max_length=50)
    since = forms.CharField(required=False, max_length=50)
    until = forms.CharField(required=False, max_length=50)
    offset = forms.CharField(required=False, max_length=50)
    who = forms.ChoiceField(required=False, choices=WHO_CHOICES, error_messages={
        "invalid_choice": "invalid who %(value)r: choose agents or people"})
    range_error = ("until", "since ({first}) is after until ({last})")

    def __init__(self, *args: object, kinds: list[str], **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        self.kinds = kinds

    def clean_actor(self) -> str:
        actor = self.cleaned_data["actor"]
        if not actor:
            return ""
        kind, sep, name = actor.partition(":")
        if sep and kind == "agent":
            if not names.SCOPE_RE.fullmatch(name):
                raise forms.ValidationError(f"invalid agent {name!r}: agents are scope names "
                                            "(letters, digits, '_' or '-')")
        elif sep and kind == "user":
            if not USER_RE.fullmatch(name):
                raise forms.ValidationError(f"invalid person {name!r}")
        elif sep and kind in ("git", "external"):
            if not GIT_NAME_RE.fullmatch(name):
                raise forms.ValidationError(f"invalid git author name {name!r}")
        elif not GIT_NAME_RE.fullmatch(actor):
            raise forms.ValidationError(f"invalid actor {actor!r}: use agent:<scope>, "
                                        "user:<name> or a git author name")
        return actor

    def clean_scope(self) -> str:
        scope = self.cleaned_data["scope"]
        if scope and not names.SCOPE_RE.fullmatch(scope):
            raise forms.ValidationError(f"invalid scope {scope!r}: use letters, digits, '_' "
                                        "or '-'")
        return scope

    def clean_kind(self) -> str:
        kind = self.cleaned_data["kind"]
        if kind and kind not in self.kinds:
            raise forms.ValidationError(f"invalid kind {kind!r}: choose one of "
                                        f"{', '.join(self.kinds)}")
        return kind

    def _date(self, key: str) -> str:
        value = self.cleaned_data[key]
        if value:
            try:
                parse_date(value, earliest=GIT_MIN, latest=GIT_MAX)  # git's years
            except InvalidName as exc:
                raise forms.ValidationError(f"{key}: {exc}") from None
        return value

    def clean_since(self) -> str:
        return self._date("since")

    def clean_until(self) -> str:
        return self._date("until")

    def clean_offset(self) -> int:
        raw = self.cleaned_data["offset"] or "0"
        if not raw.isdigit() or not raw.isascii() or int(raw) > MAX_OFFSET:
            raise forms.ValidationError(f"invalid offset {raw!r}")
        return int(raw)
