"""Form fields checked by the store's own name rules, so a form's message is the store's."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable

from django import forms

from memoryui.store import InvalidName
from memoryui.store.dates import DATE_MAX, DATE_MIN, parse_date


class StoreRuleField(forms.CharField):
    """Text checked by a store rule, e.g. `StoreRuleField(names.validate_relpath)`: an
    `InvalidName` becomes this field's error (shown next to it). Empty values are allowed
    unless `required=True`."""

    def __init__(self, rule: Callable[[str], object], **kwargs: object) -> None:
        kwargs.setdefault("required", False)
        super().__init__(**kwargs)
        self.rule = rule

    def clean(self, value: object) -> str:
        text: str = super().clean(value)
        if text:
            try:
                self.rule(text)
            except InvalidName as exc:
                raise forms.ValidationError(str(exc)) from None
        return text


class DateField(forms.CharField):
    """An optional `YYYY-MM-DD` (what `<input type=date>` sends) within the store's bounds
    (memoryui.store.dates; `earliest`/`latest` narrow them): every date a UI form reads
    goes through here, so a far date is this field's error, never an overflow."""

    def __init__(self, *, earliest: dt.date = DATE_MIN, latest: dt.date = DATE_MAX,
                 **kwargs: object) -> None:
        kwargs.setdefault("required", False)
        kwargs.setdefault("max_length", 40)
        super().__init__(**kwargs)
        self.earliest, self.latest = earliest, latest

    def clean(self, value: object) -> dt.date | None:
        text = super().clean(value)
        if not text:
            return None
        try:
            return parse_date(text, earliest=self.earliest, latest=self.latest)
        except InvalidName as exc:
            raise forms.ValidationError(str(exc)) from None
