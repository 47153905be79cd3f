"""The memory workspace domain: plain Python, no Django (see DESIGN.md section 6)."""

from .actors import Actor
from .entries import Entry, parse_daily
from .errors import CommitRaceError, Conflict, InvalidName, NotFound, StoreError, TooLarge
from .layout import LAYOUTS, Address, Budget, Kind, Layout, get_layout
from .workspace import ABSENT, DELETE, FileInfo, Store, WriteResult, version_of

__all__ = [
    "ABSENT", "DELETE", "LAYOUTS", "Actor", "Address", "Budget", "CommitRaceError", "Conflict",
    "Entry", "FileInfo", "InvalidName", "Kind", "Layout", "NotFound", "Store", "StoreError",
    "TooLarge", "WriteResult", "get_layout", "parse_daily", "version_of",
]
