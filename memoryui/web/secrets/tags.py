"""`{% secret_warning path %}`: the warning box pages include (file page, review entry,
overview count with `{% secrets_count %}`), read from the flagged record, never a scan."""

from __future__ import annotations

from django import template

from memoryui.roles import ADMIN, CURATOR, has_role
from memoryui.workspace import get_store

register = template.Library()


def findings_for(path: str, first: int | None = None, last: int | None = None) -> list:
    """A file's recorded findings, optionally only those between two lines (an entry)."""
    found = get_store().secrets.findings(path)
    if first is not None and last is not None:
        found = [f for f in found if first <= f.line <= last]
    return found


@register.inclusion_tag("web/secrets/_warning.html", takes_context=True)
def secret_warning(context: template.Context, path: str, first: int | None = None,
                   last: int | None = None, compact: bool = False) -> dict:
    found = findings_for(path, first, last)
    user = getattr(context.get("request"), "user", None)
    version = None
    if found and not compact:
        version = get_store().read_versioned(path)[1]
    return {"path": path, "findings": found, "compact": compact, "version": version,
            "kinds": sorted({f.kind for f in found}),
            "can_remove": bool(found) and has_role(user, CURATOR),
            "can_allow": bool(found) and has_role(user, ADMIN),
            "csrf_token": context.get("csrf_token"), "request": context.get("request")}


@register.inclusion_tag("web/secrets/_count.html")
def secrets_count() -> dict:
    flagged = get_store().secrets.flagged()
    return {"flagged": sorted(flagged.items())[:20], "count": len(flagged)}
