"""The one web toolkit: every UI area (browse, history, review, search, sync, tokens) uses
these instead of its own copy:

- errors:    BadInput, error_page, web_errors (one error template: web/error.html),
             first_error and cleaned (a form's first problem as a 400)
- responses: render_page, fragment_or_page, is_fragment, vary, vary_on_htmx
- editing:   actor_of, normalize_text, saved, preview_context, conflict_context
- conflicts: conflict_sides and Names (the one conflict component, web/_conflict_sides.html),
             preview_html (previews that draw conflict regions as such)
- timefmt:   ago, isotime, fulltime (the `ago` template filter prints the same)
- fields:    StoreRuleField (a form field checked by a store name rule), DateField (every
             date a form reads, bounded)
- diffs:     file_views, anchor_for, FileView (drawn diffs, from memoryui.web.diffview)
"""

from memoryui.web.diffview import FileView, anchor_for, file_views

from .editing import (
    ConflictView,
    actor_of,
    conflict_context,
    normalize_text,
    preview_context,
    saved,
)
from .errors import ERROR_TEMPLATE, BadInput, cleaned, error_page, first_error, web_errors
from .fields import DateField, StoreRuleField
from .responses import fragment_or_page, is_fragment, render_page, vary, vary_on_htmx
from .timefmt import ago, fulltime, isotime

__all__ = [
    "ERROR_TEMPLATE", "BadInput", "ConflictView", "DateField", "FileView", "StoreRuleField", "actor_of", "ago", "anchor_for",
    "cleaned", "conflict_context", "error_page", "file_views", "fragment_or_page",
    "first_error", "fulltime", "is_fragment", "isotime", "normalize_text", "preview_context", "render_page",
    "saved", "vary", "vary_on_htmx", "web_errors",
]
