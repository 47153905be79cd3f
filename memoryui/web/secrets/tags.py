"""`{% secret_warning path %}`: the warning box pages include (file page, review entry,
overview count with `{% secrets_count %}`), read from the flagged record, never a scan."""

from __future__ import annotations

from django import template
from django.template.loader import get_template

from memoryui.roles import ADMIN, CURATOR, has_role
from memoryui.workspace import get_store

register = template.Library()


def findings_for(path: str, first: int | None = None, last: int | None = None) -> list:
    """A file's recorded findings, optionally only those between two lines (an entry)."""
    found = get_store().secrets.findings(path)
    if first is not None and last is not None:
        found = [f for f in found if first <= f.line <= last]
    return found


@register.simple_tag(takes_context=True)
def secret_warning(context: template.Context, path: str, first: int | None = None,
                   last: int | None = None, compact: bool = False) -> str:
    """web/secrets/_warning.html for the findings, rendered only when there are some (a
    review page asks once per entry card)."""
    found = findings_for(path, first, last)
    if not found:
        return ""
    user = getattr(context.get("request"), "user", None)
    version = None if compact else get_store().read_versioned(path)[1]
    return get_template("web/secrets/_warning.html").render({
        "path": path, "findings": found, "compact": compact, "version": version,
        "kinds": sorted({f.kind for f in found}),
        "can_remove": has_role(user, CURATOR), "can_allow": has_role(user, ADMIN),
        "csrf_token": context.get("csrf_token"), "request": context.get("request")})


@register.inclusion_tag("web/secrets/_count.html")
def secrets_count() -> dict:
    flagged = get_store().secrets.flagged()
    return {"flagged": sorted(flagged.items())[:20], "count": len(flagged)}
