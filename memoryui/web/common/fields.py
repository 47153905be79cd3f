"""Form fields checked by the store's own name rules, so a form's message is the store's."""

from __future__ import annotations

from collections.abc import Callable

from django import forms

from memoryui.store import InvalidName


class StoreRuleField(forms.CharField):
    """Text checked by a store rule, e.g. `StoreRuleField(names.validate_relpath)`: an
    `InvalidName` becomes this field's error (shown next to it). Empty values are allowed
    unless `required=True`."""

    def __init__(self, rule: Callable[[str], object], **kwargs: object) -> None:
        kwargs.setdefault("required", False)
        super().__init__(**kwargs)
        self.rule = rule

    def clean(self, value: object) -> str:
        value = super().clean(value)
        if value:
            try:
                self.rule(value)
            except InvalidName as exc:
                raise forms.ValidationError(str(exc)) from None
        return value
