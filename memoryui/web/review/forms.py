"""The review area's input: one Django form per request shape, so every parameter is
validated in one place and its error message names the field.

Names and targets are checked again by the domain (`memoryui.review`) and the store's
name rules; these forms catch what a person typed or a link carried (dates, numbers,
the list of entries) before anything is read.
"""

from __future__ import annotations

import datetime as dt

from django import forms
from django.utils import timezone

from memoryui import review
from memoryui.store import names
from memoryui.web.common import DateField, StoreRuleField
from memoryui.web.forms import DateRangeForm


class EntryKeys(forms.Field):
    """The `entry` parameter, repeated: keys `<daily log path>#<entry id>`."""

    widget = forms.MultipleHiddenInput

    def to_python(self, value: object) -> list[str]:
        if not value:
            return []
        values = value if isinstance(value, list | tuple) else [value]
        keys = list(dict.fromkeys(str(v).strip() for v in values if str(v).strip()))
        if len(keys) > review.MAX_ENTRIES:
            raise forms.ValidationError(f"at most {review.MAX_ENTRIES} entries at once")
        if any(len(k) > 1100 for k in keys):
            raise forms.ValidationError("an entry reference is too long")
        return keys


class QueueFilters(DateRangeForm):
    """The queue's filter query string (`/review/?from=&to=&scope=&q=&status=&page=`)."""

    scope = StoreRuleField(names.validate_scope, max_length=64)
    since = DateField()
    until = DateField()
    q = forms.CharField(required=False, max_length=200, strip=True)
    status = forms.ChoiceField(required=False, choices=list(review.STATUSES.items()))
    page = forms.IntegerField(required=False, min_value=1, error_messages={
        "invalid": "the page is a number"})

    # The query string says `from` and `to` (Python keywords): map them onto the fields.
    ALIASES = {"from": "since", "to": "until"}
    range_error = ("since", "'from' ({first}) must not be after 'to' ({last})")

    def __init__(self, query: object, today: dt.date | None = None) -> None:
        data = {self.ALIASES.get(k, k): v for k, v in query.items()}  # type: ignore[attr-defined]
        super().__init__(data)
        self.today = today or timezone.localdate()

    def filters(self) -> review.Filters:
        """The filters asked for; the default (last 7 days, to review) where invalid."""
        default = review.Filters.default(self.today)
        if not self.is_valid():
            return default
        d = self.cleaned_data
        until = d["until"] or default.until
        since = d["since"] or until - dt.timedelta(days=review.DEFAULT_DAYS - 1)
        return review.Filters(since, until, d["scope"], d["q"], d["status"] or "todo",
                              d["page"] or 1)

    def error_list(self) -> list[tuple[str, str]]:
        """(label, message) of every error, for the summary above the form."""
        labels = {"since": "From", "until": "To", "scope": "Scope", "q": "Text",
                  "status": "Show", "page": "Page"}
        return [(labels.get(f, f), str(m)) for f, errs in self.errors.items() for m in errs]


class Entries(forms.Form):
    """Dismiss, put back, the no-JavaScript dismiss confirmation, one entry's page."""

    entry = EntryKeys(required=False)
    next = forms.CharField(required=False, max_length=2000)


class Place(forms.CharField):
    """Where the entries go: `end` (or nothing) or the number of a heading."""

    def to_python(self, value: object) -> int | None:
        text: str = super().to_python(value)
        if not text or text == "end":
            return None
        try:
            return int(text)
        except ValueError:
            raise forms.ValidationError(
                f"must be 'end' or a heading number, not {text!r}") from None


class Slot(forms.CharField):
    """Where the editor opens: `page`, `bulk` (the multi-select bar) or `entry-<id>`."""

    def to_python(self, value: object) -> str:
        text: str = super().to_python(value)
        return text if text == "bulk" or text.startswith("entry-") else "page"


class Promote(forms.Form):
    """The promotion editor: GET opens or rebuilds the draft, POST saves it.

    `refit` (the chooser, with JavaScript) asks for the draft of the newly chosen target or
    place while keeping the lead's edits: it carries the editor's `text`, the draft it
    `started` as, and the `path` of the target that text was for.
    """

    entry = EntryKeys(required=False)
    kind = forms.CharField(required=False, max_length=16)
    scope = forms.CharField(required=False, max_length=64)
    name = forms.CharField(required=False, max_length=200)
    place = Place(required=False)
    description = forms.CharField(required=False, max_length=1024)
    slot = Slot(required=False, max_length=40)
    next = forms.CharField(required=False, max_length=2000)
    text = forms.CharField(required=False, strip=False)
    started = forms.CharField(required=False, strip=False)
    path = forms.CharField(required=False, max_length=1024)
    refit = forms.BooleanField(required=False)
    once = forms.BooleanField(required=False)  # a near-duplicate group: the newest text once


class Save(Promote):
    """POST of the promotion editor: the lead's text and the version it started from."""

    base = forms.CharField(required=False, max_length=80)
    message = forms.CharField(required=False, max_length=500)
    over_budget_ok = forms.BooleanField(required=False)
    allow_markers = forms.BooleanField(required=False)
    secret_ok = forms.BooleanField(required=False)  # promote text holding a secret anyway
