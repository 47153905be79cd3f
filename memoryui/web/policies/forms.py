"""The Policies page's one form: set or clear the policy of a kind of file, for every
scope (`*`), one scope, or one token. Scope, kind and policy are checked by
`memoryui.policies.check`, so a bad value is the domain's own sentence."""

from __future__ import annotations

from django import forms

from memoryui.models import Token
from memoryui.policies import ALL, KINDS, POLICIES, PolicyError, check

KIND_LABELS = {"memory": "MEMORY.md", "note": "notes", "scratchpad": "scratchpad",
               "global": "global memory", "world": "world topics", "skill": "skills",
               "directive": "directives"}
POLICY_HELP = {"write": "agents write directly (their change lands at once)",
               "propose": "agents' writes wait in the inbox for a person",
               "read": "agents may only read (a write is refused with 403)"}


class TokenChoice(forms.ModelChoiceField):
    def label_from_instance(self, obj: Token) -> str:
        who = obj.scope or "admin"
        return f"{obj.prefix}… {obj.name or ''} ({who})".replace("  ", " ")


class PolicyForm(forms.Form):
    action = forms.ChoiceField(choices=[("set", "set"), ("clear", "clear")], initial="set",
                               error_messages={"invalid_choice": "choose set or clear"})
    scope = forms.CharField(required=False, max_length=64, strip=True,
                            help_text="A scope, or * (or nothing) for every scope.")
    kind = forms.ChoiceField(choices=[(k, f"{k} ({KIND_LABELS[k]})") for k in KINDS],
                             error_messages={"invalid_choice": "unknown kind %(value)s"})
    policy = forms.ChoiceField(required=False, choices=[(p, p) for p in POLICIES],
                               error_messages={"invalid_choice": "unknown policy %(value)s"})
    token = TokenChoice(required=False, queryset=Token.objects.filter(revoked_at=None),
                        empty_label="(every token)",
                        error_messages={"invalid_choice": "no active token with that id"})

    def clean(self) -> dict:
        data = super().clean()
        data["scope"] = data.get("scope") or ALL
        if data.get("action") == "set" and not data.get("policy"):
            self.add_error("policy", "choose the policy to set")
            return data
        if "kind" in data:
            try:
                check(data["scope"], data["kind"], data.get("policy") or None)
            except PolicyError as exc:
                self.add_error("scope", str(exc))
        return data
