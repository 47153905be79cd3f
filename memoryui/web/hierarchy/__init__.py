"""The workspace as one hierarchy (world, global, scopes, skills, directives) for the UI.

- model:   the value types (Item, ScopeNode, Hierarchy, Change, BudgetView) and budget labels
- build:   the overview's hierarchy, queries over the file catalogue (`search/catalogue.py`)
- folders: one scope, the shared files and the sidebar, asked of the catalogue too

Where an agent's view of a file is cut, and line counts, are store rules
(`memoryui.store.budgets`); they are re-exported here for the pages that show them.
"""

from memoryui.store.budgets import Cut, count_lines
from memoryui.store.budgets import cut as agent_cut

from .build import build, catalogue, item_of, last_change
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
    "budget_view", "build", "catalogue", "count_lines", "fmt_bytes", "item_for", "item_of", "last_change",
    "per_scope",
    "scope_node", "scope_options", "shared", "sidebar", "sidebar_html",
]
