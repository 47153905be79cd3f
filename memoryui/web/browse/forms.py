"""The browse area's input: every POST and every query string is read by a form here.

Forms validate shape (lengths, choices, required fields) and say what is wrong next to the
field; where a file goes and which names are valid stay the store's rules (`path_for`,
`names`), which `NewFileForm` asks and reports on the field they concern.
"""

from __future__ import annotations

import datetime as dt

from django import forms

from memoryui.store import InvalidName, Kind, Store, lookalike
from memoryui.store import names as store_names
from memoryui.store.layout import KIND_LABELS
from memoryui.web.common import normalize_text

MESSAGE_MAX = 500


class TextField(forms.CharField):
    """A textarea's text as the file will hold it: LF line ends, nothing stripped."""

    def __init__(self, **kwargs: object) -> None:
        super().__init__(required=False, strip=False, **kwargs)

    def to_python(self, value: object) -> str:
        return normalize_text(super().to_python(value))


class MessageField(forms.CharField):
    def __init__(self, **kwargs: object) -> None:
        super().__init__(required=False, max_length=MESSAGE_MAX, label="Commit message",
                         **kwargs)


class EditForm(forms.Form):
    """The editor's POST: save (or preview) the whole text against the version it started from."""

    text = TextField()
    base = forms.CharField(required=False)
    message = MessageField()
    allow_markers = forms.BooleanField(required=False)
    preview = forms.BooleanField(required=False)

    LOST_BASE = ("The form lost the version you started from; nothing was saved. "
                 "Copy your text and reload the editor.")

    def clean_base(self) -> str:
        base = self.cleaned_data["base"]
        if not base and not self.wants_preview:
            raise forms.ValidationError(self.LOST_BASE)
        return base

    @property
    def wants_preview(self) -> bool:
        """The no-JavaScript Preview button: show the text rendered, save nothing."""
        return bool(self["preview"].value())

    def text_value(self) -> str:
        """The submitted text (LF line ends), valid or not: it is never thrown away."""
        return normalize_text(self["text"].value() or "")

    def base_value(self) -> str:
        return (self["base"].value() or "").strip()

    @property
    def first_error(self) -> str:
        """One line for the banner above the editor."""
        for errs in self.errors.values():
            return str(errs[0])
        return ""


class PreviewForm(forms.Form):
    """The live preview: text, and where it would go (a path, or the new-file fields)."""

    text = TextField()
    path = forms.CharField(required=False, strip=True)
    kind = forms.CharField(required=False)
    scope = forms.CharField(required=False)
    name = forms.CharField(required=False)

    def target(self, store: Store) -> str | None:
        """The path the previewed text would have, when it can be told; else None."""
        d = self.cleaned_data
        if d["path"]:
            try:
                return store_names.validate_relpath(d["path"])
            except InvalidName:
                return None
        if d["kind"]:
            try:
                return store.path_for(d["kind"], d["scope"] or None, d["name"] or None)
            except (InvalidName, ValueError):
                return None
        return None


NAME_HELP = {
    Kind.WORLD: "topic: lowercase letters, digits, '-' and '_'",
    Kind.DAILY: "date: YYYY-MM-DD",
    Kind.NOTE: "note name: no slashes or dots",
    Kind.SKILL: "skill name: lowercase letters, digits and single hyphens",
    Kind.DIRECTIVE: "directive name: no slashes or dots",
}


class NewFileForm(forms.Form):
    """Create a file: kind, scope and name make the path (the layout's rule)."""

    kind = forms.ChoiceField(error_messages={
        "required": "Choose what kind of file to create.",
        "invalid_choice": "Choose what kind of file to create."})
    scope = forms.CharField(required=False, max_length=200)
    name = forms.CharField(required=False, max_length=200)
    text = TextField()
    message = MessageField()
    preview = forms.BooleanField(required=False)

    def __init__(self, *args: object, store: Store, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        self.store = store
        self.fields["kind"].choices = [(k.value, KIND_LABELS[k]) for k in Kind]
        self.path = ""

    def clean(self) -> dict:
        data = super().clean()
        if "kind" not in data:
            return data
        kind = Kind(data["kind"])
        store = self.store
        if not store.layout.supports(kind):
            self.add_error("kind", f"The {store.layout.key} layout has no {KIND_LABELS[kind]}.")
            return data
        name = data.get("name") or None
        if kind == Kind.DAILY and name is None:
            name = data["name"] = dt.date.today().isoformat()
        try:
            path = store.path_for(kind, data.get("scope") or None, name)
            store.abspath(path)
            lookalike.check_new(store.root, path)  # said next to the field, text kept
        except InvalidName as exc:
            msg = str(exc)
            field = "scope" if "scope" in msg else "name" if name or "name" in msg else "kind"
            if kind == Kind.WORLD and name:
                try:
                    msg += f" — for example {store_names.sanitize_world_topic(name)!r}"
                except InvalidName:
                    pass
            self.add_error(field, msg)
            return data
        self.path = path
        return data


class DeleteForm(forms.Form):
    """Delete a file: only the version the person confirmed."""

    base = forms.CharField(error_messages={
        "required": "The form lost the version you confirmed; nothing was deleted."})
    message = MessageField()


class FileQuery(forms.Form):
    """`?view=raw` shows the file's lines; anything else the rendered page."""

    view = forms.ChoiceField(required=False, choices=[("rendered", "rendered"), ("raw", "raw")])

    def value(self) -> str:
        return "raw" if self.is_valid() and self.cleaned_data.get("view") == "raw" else "rendered"


class ScopeQuery(forms.Form):
    """`?month=YYYY-MM` opens that month of the daily logs (an unknown one: the newest)."""

    month = forms.RegexField(required=False, regex=r"^\d{4}-\d{2}$")

    def value(self) -> str:
        return self.cleaned_data.get("month", "") if self.is_valid() else ""


class OverviewQuery(forms.Form):
    """The overview's tables: `q`/`sort`/`page` for scopes, `wq`/`wsort`/`wpage` for world
    topics. A bad value is ignored (that parameter's default), never an error page."""

    q = forms.CharField(required=False, max_length=200)
    sort = forms.ChoiceField(required=False, choices=[
        (p + k, p + k) for k in ("name", "last", "size", "review") for p in ("", "-")])
    page = forms.IntegerField(required=False, min_value=1, max_value=10**6)
    wq = forms.CharField(required=False, max_length=200)
    wsort = forms.ChoiceField(required=False, choices=[
        (p + k, p + k) for k in ("name", "last", "size") for p in ("", "-")])
    wpage = forms.IntegerField(required=False, min_value=1, max_value=10**6)

    DEFAULTS = {"q": "", "sort": "name", "page": 1, "wq": "", "wsort": "-last", "wpage": 1}

    def values(self) -> dict:
        """Every parameter: its valid value, else its default."""
        self.is_valid()
        data = getattr(self, "cleaned_data", {})
        return {k: data.get(k) or d for k, d in self.DEFAULTS.items()}

    def query(self) -> dict[str, str]:
        """The valid, non-default parameters as strings (links keep them)."""
        return {k: str(v) for k, v in self.values().items() if v != self.DEFAULTS[k]}
