"""Secrets caught on every write: the detector, allow rules, the policy and the flagged record.

Plain Python (no Django): the store calls `Guard.check` inside its one write primitive, so
every path (agent tools, MCP, files API, Dagu REST, the UI editor, pending commits, sync)
goes through the same rules.
"""

from __future__ import annotations

from .allow import ALLOW_PRAGMAS, AllowList
from .detector import Finding, added_lines, redact, scan_lines, scan_text
from .guard import MODES, Guard
from .record import FlaggedRecord

__all__ = ["ALLOW_PRAGMAS", "MODES", "AllowList", "FlaggedRecord", "Finding", "Guard",
           "added_lines", "redact", "scan_lines", "scan_text"]
