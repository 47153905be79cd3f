"""The Sync area's input: every POST is read by a form here.

Forms check shape (paths are workspace paths, lengths, required fields); whether a path
may be published, discarded or resolved stays the sync domain's rule (`Syncer`).
"""

from __future__ import annotations

from django import forms

from memoryui.store import InvalidName
from memoryui.store import names as store_names
from memoryui.web.common import first_error as common_first_error
from memoryui.web.common import normalize_text

MESSAGE_MAX = 500
MAX_PATHS = 5000


class PathsField(forms.MultipleChoiceField):
    """Workspace paths picked in the file table (any valid relative path; no choices)."""

    def valid_value(self, value: str) -> bool:
        try:
            store_names.validate_relpath(value)
        except InvalidName:
            return False
        return True

    def validate(self, value: list[str]) -> None:
        super().validate(value)
        if len(value) > MAX_PATHS:
            raise forms.ValidationError(f"At most {MAX_PATHS} files at once.")


class PublishForm(forms.Form):
    """Publish the chosen files (or every changed file with `all`) as one commit."""

    paths = PathsField(required=False)
    all = forms.BooleanField(required=False)
    message = forms.CharField(max_length=MESSAGE_MAX, label="Commit message",
                              error_messages={"required": "Say what you publish: a commit "
                                                          "message is required."})

    def clean(self) -> dict:
        data = super().clean()
        if not data.get("all") and not data.get("paths") and "paths" not in self.errors:
            raise forms.ValidationError("Choose the files to publish, or publish all.")
        return data

    def chosen(self) -> list[str] | None:
        """The paths to publish; None means every changed file."""
        return None if self.cleaned_data.get("all") else list(self.cleaned_data["paths"])


class DiscardForm(forms.Form):
    """Bring the chosen files back to the remote's version."""

    paths = PathsField(error_messages={"required": "Choose the files to discard."})


class ResolveForm(forms.Form):
    """The merge view's POST: the curator's text for a conflicted file."""

    text = forms.CharField(required=False, strip=False)
    delete = forms.BooleanField(required=False)
    message = forms.CharField(required=False, max_length=MESSAGE_MAX, label="Commit message")
    expect = forms.CharField(required=False, max_length=64)  # the local version loaded
    theirs = forms.CharField(required=False, max_length=64)  # the remote commit merged against
    allow_markers = forms.BooleanField(required=False)

    def clean_text(self) -> str:
        return normalize_text(self.cleaned_data["text"])


def first_error(form: forms.Form) -> str:
    """One sentence for a flash or an error page."""
    return common_first_error(form, "The form was not valid.")
