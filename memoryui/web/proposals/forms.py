"""The inbox's input: filters, an edited text, a reason, a selection. Every parameter a
person or a link sends is checked here, so a bad one is a 400 naming the field."""

from __future__ import annotations

import re

from django import forms

from memoryui.policies import KINDS
from memoryui.store import names
from memoryui.web.common import StoreRuleField

MAX_SELECTED = 1000  # proposals one bulk action decides
MAX_REASON = 2000
PAGE_SIZE = 25
ID_RE = re.compile(r"[0-9a-f]{12}")


class Filters(forms.Form):
    """`/review/proposals/?scope=&proposer=&kind=&page=`."""

    scope = StoreRuleField(names.validate_scope, max_length=64)
    proposer = forms.CharField(required=False, max_length=100, strip=True)
    kind = forms.ChoiceField(required=False, choices=[("", "Every kind"),
                                                      *[(k, k) for k in KINDS]])
    page = forms.IntegerField(required=False, min_value=1, max_value=100_000,
                              error_messages={"invalid": "the page is a number"})

    def query(self) -> dict[str, str]:
        """The filters that are set, for links that keep them."""
        data = self.cleaned_data if self.is_valid() else {}
        return {k: str(data[k]) for k in ("scope", "proposer", "kind") if data.get(k)}


class Next(forms.Form):
    next = forms.CharField(required=False, max_length=2000)


class Approve(Next):
    """Approve as proposed; `updated` is the proposal's version the curator saw, so an
    agent's later change to it is never approved unseen."""

    updated = forms.CharField(required=False, max_length=64)
    recreate = forms.BooleanField(required=False)  # the file was deleted since: bring it back


class Edited(Approve):
    """Edit then approve: the text that lands instead of the proposal's."""

    seen = forms.CharField(required=False, max_length=80)  # the file's version it was edited on
    text = forms.CharField(required=True, strip=False, max_length=2_000_000,
                           error_messages={"required": "the text to approve is missing"})


class Reject(Next):
    reason = forms.CharField(required=True, max_length=MAX_REASON, strip=True, error_messages={
        "required": "give a reason: the agent's author reads it"})


class Selected(forms.Field):
    """The `id` parameter, repeated: proposal ids (12 hex digits each)."""

    widget = forms.MultipleHiddenInput

    def to_python(self, value: object) -> list[str]:
        values = value if isinstance(value, list | tuple) else [value] if value else []
        out: list[str] = []
        for v in values:
            text = str(v).strip()
            if not ID_RE.fullmatch(text):
                raise forms.ValidationError(f"{text[:20]!r} is not a proposal id "
                                            "(12 hex digits)")
            out.append(text)
        out = list(dict.fromkeys(out))
        if not out:
            raise forms.ValidationError("select at least one proposal")
        if len(out) > MAX_SELECTED:
            raise forms.ValidationError(f"at most {MAX_SELECTED} proposals at once")
        return out


class Bulk(Next):
    """Approve or reject the selected proposals; a rejection needs its reason."""

    id = Selected()
    action = forms.ChoiceField(choices=[("approve", "approve"), ("reject", "reject")],
                               error_messages={"required": "choose approve or reject",
                                               "invalid_choice": "choose approve or reject"})
    reason = forms.CharField(required=False, max_length=MAX_REASON, strip=True)

    def clean(self) -> dict:
        data = super().clean()
        if data.get("action") == "reject" and not data.get("reason"):
            self.add_error("reason", "give a reason for rejecting: the agent's author reads it")
        return data


class Conflict(Next):
    """Keep both or dismiss a contradiction candidate on a proposal's card."""

    statement = forms.RegexField(regex=r"^proposed-[0-9a-f]{16}$", error_messages={
        "invalid": "not a proposed statement; reload the page"})
    path = forms.CharField(max_length=1024)
    digest = forms.RegexField(regex=r"^[0-9a-f]{16}$", error_messages={
        "invalid": "not a line reference; reload the page"})
    choice = forms.ChoiceField(choices=[("keep", "keep"), ("dismiss", "dismiss")],
                               error_messages={"invalid_choice": "choose keep or dismiss"})
