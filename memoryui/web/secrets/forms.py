"""Input of the secrets actions: the version the person saw, and a value's digest to allow."""

from __future__ import annotations

from django import forms


class RemoveForm(forms.Form):
    """Remove the secrets from the text the person saw (a stale version is a 409)."""

    version = forms.RegexField(regex=r"^[0-9a-f]{64}$", error_messages={
        "invalid": "the file version is not valid; reload the page"})


class AllowForm(RemoveForm):
    digest = forms.RegexField(regex=r"^[0-9a-f]{64}$", error_messages={
        "invalid": "not a secret of this file; reload the page"})


class DigestForm(forms.Form):
    """Take one value back off the allow list."""

    digest = forms.RegexField(regex=r"^[0-9a-f]{64}$", error_messages={
        "invalid": "not a value on the allow list; reload the page"})
