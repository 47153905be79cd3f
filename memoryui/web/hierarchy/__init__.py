"""The workspace as one hierarchy (world, global, scopes, skills, directives) for the UI.

- model:   the value types (Item, ScopeNode, Hierarchy, Change, BudgetView) and budget labels
- build:   the whole hierarchy for the overview, cached, rebuilt in the background when large
- folders: one scope, the shared folders and the sidebar, listed from their own folders
- snapshot: the overview saved for the first request after a start

Where an agent's view of a file is cut, and line counts, are store rules
(`memoryui.store.budgets`); they are re-exported here for the pages that show them.
"""

from memoryui.store.budgets import Cut, count_lines
from memoryui.store.budgets import cut as agent_cut

from .build import _rebuild as _rebuild  # timed by bench/bench_pages.py
from .build import build, keep
from .folders import per_scope, scope_node, scope_options, shared, sidebar, sidebar_html
from .model import (
    BudgetView,
    Change,
    Hierarchy,
    Item,
    Month,
    ScopeNode,
    budget_view,
    fmt_bytes,
    item_for,
)

__all__ = [
    "BudgetView", "Change", "Cut", "Hierarchy", "Item", "Month", "ScopeNode", "agent_cut",
    "budget_view", "build", "count_lines", "fmt_bytes", "item_for", "keep", "per_scope",
    "scope_node", "scope_options", "shared", "sidebar", "sidebar_html",
]
