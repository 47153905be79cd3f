"""What `python -m bench.run` was asked for, for the modules that adapt to it.

Modules keep their `run(corpus, report)` signature; the few that need more (the preset, to
size their samples; the idle window) read `OPTIONS`, which `bench.run` fills before running.
"""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass
class Options:
    preset: str = "small"
    imported: bool = False
    idle_seconds: float = 300.0  # CPU of an idle server over 5 minutes

    @property
    def big(self) -> bool:
        """Large and huge corpora: fewer samples of what costs seconds each."""
        return self.preset in ("large", "huge")


OPTIONS = Options()


def load_text() -> str:
    """The load average now, for the notes: figures on a busy machine say so."""
    try:
        one, five, fifteen = os.getloadavg()
    except OSError:
        return "load ?"
    return f"load {one:.1f}/{five:.1f}/{fifteen:.1f} on {os.cpu_count()} cores"
