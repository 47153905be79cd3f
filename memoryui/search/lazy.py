"""numpy, imported on first use.

Search by meaning (the model, vectors, duplicates and contradictions) does its math with
numpy, about 14 MB of a process. A web worker that only takes writes and shows pages never
embeds or searches by meaning, so the modules that do hold this stand-in, which imports
numpy the first time one of its names is read and from then on holds numpy's names itself.
Types come from the real module (`if TYPE_CHECKING: import numpy as np`).
"""

from __future__ import annotations

import importlib
from typing import Any


class LazyModule:
    """A module imported when the first of its attributes is read."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> Any:  # only for names not copied in yet
        module = importlib.import_module(self._name)  # the import lock makes it once
        self.__dict__.update(vars(module))
        return getattr(module, attr)


numpy = LazyModule("numpy")
