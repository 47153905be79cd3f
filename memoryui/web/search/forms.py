"""The search page's query string, read by one form: each filter's mistake is said next to it.

Dates use the search package's own rule (`parse_date`: YYYY-MM-DD from 1900 to 2999), so the
page and the API refuse the same dates with the same words.
"""

from __future__ import annotations

import datetime as dt

from django import forms

from memoryui.search import QueryError, parse_date
from memoryui.store.names import SCOPE_RE
from memoryui.web.forms import DateRangeForm

MAX_PAGE = 50


class FilterDateField(forms.CharField):
    """An optional `YYYY-MM-DD` (what `<input type=date>` sends), in the search's range."""

    def __init__(self, **kwargs: object) -> None:
        super().__init__(required=False, max_length=40, **kwargs)

    def clean(self, value: object) -> dt.date | None:
        text = super().clean(value)
        if not text:
            return None
        try:
            return parse_date(text)
        except QueryError as exc:
            raise forms.ValidationError(exc.message) from None


MODE_CHOICES = [("hybrid", "Words and meaning"), ("keyword", "Exact words only")]


class SearchForm(DateRangeForm):
    """`?q=&scope=&kind=&from=&to=&mode=&page=` (`from`/`to` are added in __init__:
    keywords)."""

    q = forms.CharField(required=False, max_length=4000)
    scope = forms.CharField(required=False, max_length=200)
    kind = forms.ChoiceField(required=False, error_messages={
        "invalid_choice": "Unknown kind %(value)s."})
    page = forms.CharField(required=False, max_length=20)
    mode = forms.ChoiceField(required=False, label="Match", choices=MODE_CHOICES,
                             error_messages={"invalid_choice": "Unknown match %(value)s: use "
                                             "hybrid or keyword."})
    range_fields = ("from", "to")
    range_error = ("from", "{first} is after the end date {last}.")

    def __init__(self, data: object, *, kinds: list[tuple[str, str]]) -> None:
        super().__init__(data)
        self.fields["kind"].choices = [("", "Any"), *kinds]
        self.fields["from"] = FilterDateField(label="From")
        self.fields["to"] = FilterDateField(label="To")

    def clean_scope(self) -> str:
        scope = self.cleaned_data["scope"]
        if scope and not SCOPE_RE.match(scope):
            raise forms.ValidationError(f"Invalid name {scope!r}.")
        return scope

    def clean_mode(self) -> str:
        return self.cleaned_data["mode"] or "hybrid"

    def clean_page(self) -> int:
        """Lenient on purpose: a hand-edited page number shows page 1 (or the last allowed)."""
        try:
            return min(max(int(self.cleaned_data["page"] or 1), 1), MAX_PAGE)
        except ValueError:
            return 1

    def value(self, name: str) -> object:
        """The cleaned value, or None when the field was refused."""
        return self.cleaned_data.get(name) if hasattr(self, "cleaned_data") else None

    def text(self, name: str) -> str:
        """A text or choice field's cleaned value ("" when empty or refused)."""
        value = self.value(name)
        return value if isinstance(value, str) else ""

    def date(self, name: str) -> dt.date | None:
        """A date field's cleaned value (None when empty or refused)."""
        value = self.value(name)
        return value if isinstance(value, dt.date) else None

    def page_number(self) -> int:
        """The page asked for (1 when refused: `clean_page` makes every other value valid)."""
        value = self.value("page")
        return value if isinstance(value, int) else 1

    def messages(self) -> list[str]:
        """Every refusal as "Field: message", for the results area."""
        out = []
        for name, errs in self.errors.items():
            label = self.fields[name].label or name.capitalize() if name in self.fields else ""
            out += [f"{label}: {e}" if label else str(e) for e in errs]
        return out
