"""The admins' Policies page (/settings/policies/): for each kind of file, may agents write,
only propose, or only read? Thin over `memoryui.policies` (the workspace default, per-scope
and per-token rows, and the rule that picks one). Viewers and curators get 403.
"""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse

from memoryui import policies, proposing
from memoryui.models import WritePolicy
from memoryui.roles import ADMIN
from memoryui.web.common import first_error, render_page
from memoryui.web.guards import role_view

from .forms import KIND_LABELS, POLICY_HELP, PolicyForm

T = "web/policies/"


def _said(data: dict) -> str:
    where = "every scope" if data["scope"] == policies.ALL else f"scope {data['scope']}"
    tok = data.get("token")
    who = f" with token {tok.prefix}…" if tok else ""
    kind = KIND_LABELS[data["kind"]]
    if data["action"] == "clear":
        return f"Cleared the policy for {kind} in {where}{who}: the next level applies."
    return f"Agents of {where}{who} now {data['policy']} {kind}."


@role_view(ADMIN, "GET", "POST")
def policies_page(request: HttpRequest) -> HttpResponse:
    form = PolicyForm(request.POST or None, initial={"action": "set"})
    status = 200
    if request.method == "POST":
        if form.is_valid():
            d = form.cleaned_data
            if d["action"] == "clear":
                policies.clear_policy(d["scope"], d["kind"], d.get("token"))
            else:
                policies.set_policy(d["scope"], d["kind"], d["policy"], d.get("token"))
            messages.success(request, _said(d))
            if proposing.open_count():
                messages.info(request, "Open proposals stay open under any policy; each "
                              "shows the policy now.")
            return HttpResponseRedirect(reverse("policies"))
        status = 400
    rows = WritePolicy.objects.select_related("token").order_by("token_id", "scope", "kind")
    default = policies.policies_of(None)
    ctx = {
        "form": form, "problem": first_error(form) if status == 400 else "",
        "policy_choices": [(p, POLICY_HELP[p]) for p in policies.POLICIES],
        "default": [(k, KIND_LABELS[k], default[k]) for k in policies.KINDS],
        "rows": [{"row": r, "level": "token" if r.token_id else
                  "workspace" if r.scope == policies.ALL else "scope",
                  "label": KIND_LABELS.get(r.kind, r.kind)} for r in rows],
        "all": policies.ALL, "open": proposing.open_count(),
    }
    return render_page(request, T + "policies.html", ctx, status=status)
