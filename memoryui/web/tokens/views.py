"""The admins' tokens page: list agent tokens, issue one (shown once), revoke.

Raw tokens are never stored; a new one is rendered in the response to the POST that
created it (with `Cache-Control: no-store`) and cannot be shown again.
"""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.http import require_http_methods, require_POST

from memoryui.models import Token
from memoryui.roles import ADMIN, require_role
from memoryui.store import StoreError, names
from memoryui.web.common import StoreRuleField
from memoryui.web.policies.marks import token_rows


class TokenForm(forms.Form):
    scope = StoreRuleField(names.validate_scope, max_length=64,
                           help_text="The agent, DAG, project or workspace the token acts for. "
                                     "Leave empty for an admin token.")
    name = forms.CharField(required=False, max_length=100,
                           help_text="A label to recognise it by, e.g. the host it runs on.")
    world = forms.BooleanField(required=False, label="May write world knowledge")
    global_ = forms.BooleanField(required=False, label="May write the global memory")
    admin = forms.BooleanField(required=False, label="Admin token (any scope, Dagu, files "
                                                     "and history API)")
    read_only = forms.BooleanField(required=False, label="Read-only (every write answers 403)")
    host = forms.BooleanField(required=False, label="Git host token: clones and pushes "
                                                    "/git/workspace.git (it reads the whole "
                                                    "workspace)")
    host_scopes = forms.CharField(required=False, max_length=2000, label="Scopes it may push",
                                  help_text="Comma-separated, e.g. alpha, bravo (host tokens "
                                            "only; leave Scope empty).")
    skills = forms.BooleanField(required=False, label="May push skills (host tokens)")
    directives = forms.BooleanField(required=False, label="May push directives (host tokens)")

    def clean_host_scopes(self) -> list[str]:
        listed = [s.strip() for s in self.cleaned_data.get("host_scopes", "").split(",")
                  if s.strip()]
        try:
            return [names.validate_scope(s) for s in listed]
        except StoreError as exc:
            raise forms.ValidationError(str(exc)) from None

    def clean(self) -> dict:
        data = super().clean()
        if data.get("host"):
            if data.get("scope") or data.get("admin"):
                self.add_error("host", "A git host token names its scopes under \"Scopes it "
                                       "may push\": leave Scope empty and Admin unticked.")
        elif data.get("host_scopes") or data.get("skills") or data.get("directives"):
            self.add_error("host", "Scopes to push, skills and directives are for git host "
                                   "tokens: tick \"Git host token\".")
        elif not data.get("scope") and not data.get("admin"):
            self.add_error("scope", "Give the scope the token acts for, or make it an admin "
                                    "token.")
        return data


@require_role(ADMIN)
@require_http_methods(["GET", "HEAD", "POST"])
def tokens(request: HttpRequest) -> HttpResponse:
    form = TokenForm(request.POST or None)
    new = None
    status = 200
    if request.method == "POST":
        if form.is_valid():
            d = form.cleaned_data
            tok, raw = Token.issue(scope=d["scope"], world=d["world"], global_=d["global_"],
                                   admin=d["admin"], name=d["name"], created_by=request.user,
                                   read_only=d["read_only"],
                                   host_scopes=d["host_scopes"] if d["host"] else None,
                                   skills=d["skills"], directives=d["directives"])
            new = {"token": tok, "raw": raw}
            form = TokenForm()
        else:
            status = 400
    tokens = list(Token.objects.select_related("created_by").order_by("revoked_at", "-pk"))
    resp = render(request, "web/tokens/tokens.html", {
        "form": form, "new": new, "status": status, "tokens": token_rows(tokens),
        "git_url": request.build_absolute_uri("/git/workspace.git"),
    }, status=status)
    resp["Cache-Control"] = "no-store"
    return resp


@require_role(ADMIN)
@require_POST
def revoke(request: HttpRequest, pk: int) -> HttpResponse:
    tok = get_object_or_404(Token, pk=pk)
    if tok.revoked_at is None:
        tok.revoked_at = timezone.now()
        tok.save(update_fields=["revoked_at"])
        messages.success(request, f"Token {tok.prefix}… revoked: agents using it now get 401.")
    else:
        messages.info(request, f"Token {tok.prefix}… was already revoked.")
    return redirect("tokens")
