"""The memory workspace domain: plain Python, no Django (see DESIGN.md section 6)."""

from .actors import Actor
from .budgets import Budget, Cut, count_lines, cut
from .entries import Entry, parse_daily
from .errors import (
    Ambiguous,
    CommitRaceError,
    Conflict,
    DiskFull,
    InvalidName,
    InvalidText,
    NotFound,
    StoreError,
    TooLarge,
)
from .layout import LAYOUTS, Address, Kind, Layout, get_layout
from .workspace import ABSENT, DELETE, Store, WriteResult, version_of

__all__ = [
    "ABSENT", "DELETE", "LAYOUTS", "Actor", "Address", "Ambiguous", "Budget", "CommitRaceError",
    "Conflict", "Cut", "DiskFull", "Entry", "InvalidName", "InvalidText", "Kind",
    "Layout", "NotFound", "Store", "StoreError", "TooLarge", "WriteResult", "count_lines", "cut",
    "get_layout", "parse_daily", "version_of",
]
