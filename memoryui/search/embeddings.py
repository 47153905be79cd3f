"""Text to vectors with a model that ships inside an installed wheel: nothing downloads.

One small interface (`Embedder`) so the model can change; `embedder()` gives the process's
one instance, loaded on first use. When the model cannot load (package missing, weights
missing or corrupt), or the operator turned it off (`MEMORYUI_EMBEDDINGS=off`), `embedder()`
returns None, logs why once, and callers fall back to keyword search and say so.

The model is WordLlama's 256-dimension static model (`l2_supercat_256`), inside the
`wordllama` wheel. Its `load(disable_download=True)` looks for a `tokenizer/` folder while the
wheel ships `tokenizers/`, so the package folder is passed as `cache_dir`, where both the
weights and the tokenizer configuration are found. Vectors are L2-normalised float32, so a dot
product is the cosine similarity.
"""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path
from typing import Any, Protocol

import numpy as np

log = logging.getLogger(__name__)

DIM = 256
MODEL_NAME = "wordllama-l2_supercat_256"
# Texts longer than this are cut before embedding: a static model averages token vectors,
# so the head of a long passage carries its meaning and the cost stays bounded.
MAX_CHARS = 8_000
SWITCH = "MEMORYUI_EMBEDDINGS"  # "off": no model, keyword search only
OFF = f"it is turned off ({SWITCH}=off)"


class Embedder(Protocol):
    name: str
    dim: int

    def embed(self, texts: list[str]) -> np.ndarray:
        """One L2-normalised float32 row per text (a zero row for a text with no tokens)."""
        ...


class WordLlamaEmbedder:
    name = MODEL_NAME
    dim = DIM

    def __init__(self) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        import wordllama
        from wordllama import WordLlama

        folder = Path(wordllama.__file__).parent
        self._model: Any = WordLlama.load(dim=DIM, cache_dir=folder, disable_download=True)
        self._lock = threading.Lock()

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
        cut = [t[:MAX_CHARS] if t.strip() else " " for t in texts]
        with self._lock:  # the tokenizer is not documented as thread-safe
            rows = np.asarray(self._model.embed(cut, norm=True), dtype=np.float32)
        rows = np.nan_to_num(rows, copy=False)
        norms = np.linalg.norm(rows, axis=1, keepdims=True)
        np.divide(rows, norms, out=rows, where=norms > 0)
        return rows


_lock = threading.Lock()
_state: dict[str, Any] = {}


def embedder() -> Embedder | None:
    """The process's embedder, or None when the model cannot load (logged once) or is
    turned off."""
    if os.environ.get(SWITCH, "").strip().lower() == "off":
        return None
    with _lock:
        if "model" not in _state:
            try:
                _state["model"] = WordLlamaEmbedder()
                _state["error"] = ""
            except Exception as exc:  # any failure to load means keyword search only
                _state["model"] = None
                _state["error"] = f"{type(exc).__name__}: {exc}"
                log.warning("the embedding model could not load; search uses keywords only (%s)",
                            _state["error"])
        return _state["model"]


def unavailable_reason() -> str:
    """Why there is no model ("" when it loaded or was not tried yet)."""
    if os.environ.get(SWITCH, "").strip().lower() == "off":
        return OFF
    return str(_state.get("error", ""))
