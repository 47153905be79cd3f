"""What several areas' forms share: a date range whose start must not be after its end."""

from __future__ import annotations

from typing import ClassVar

from django import forms


class DateRangeForm(forms.Form):
    """A form with a start and an end date. A start after the end is refused on one field,
    in the words of the page the form serves; either end may be left out."""

    # The start's and the end's field names.
    range_fields: ClassVar[tuple[str, str]] = ("since", "until")
    # The field that carries the refusal, and its message with {first} and {last}.
    range_error: ClassVar[tuple[str, str]]

    def clean(self) -> dict:
        data = super().clean()
        start, end = self.range_fields
        first, last = data.get(start), data.get(end)
        if first and last and first > last:
            field, message = self.range_error
            self.add_error(field, message.format(first=first, last=last))
        return data
