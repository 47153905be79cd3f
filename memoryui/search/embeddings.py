"""Text to vectors with a model that ships inside an installed wheel: nothing downloads.

One small interface (`Embedder`) so the model can change; `embedder()` gives the process's
one instance, loaded on first use. When the model cannot load (package missing, weights
missing or corrupt), or the operator turned it off (`MEMORYUI_EMBEDDINGS=off`), `embedder()`
returns None, logs why once, and callers fall back to keyword search and say so.

The model is WordLlama's 256-dimension static model (`l2_supercat_256`), whose weights and
tokenizer ship inside the `wordllama` wheel (pinned). A static model is a table of token
vectors averaged over a text, so it is used here straight from those two files (the
`tokenizers` and `safetensors` libraries wordllama itself uses) rather than through the
`wordllama` package, whose import brings Hugging Face's hub client and a float32 copy of the
table: about 30 MB a process instead of 90. The vectors are the same as WordLlama's
`embed(norm=True)` (a test compares them). They are L2-normalised float32, so a dot product
is the cosine similarity.
"""

from __future__ import annotations

import importlib.util
import itertools
import logging
import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import numpy as np
else:
    from .lazy import numpy as np  # imported when the model loads

log = logging.getLogger(__name__)

DIM = 256
MODEL_NAME = "wordllama-l2_supercat_256"
# Texts longer than this are cut before embedding: a static model averages token vectors,
# so the head of a long passage carries its meaning and the cost stays bounded.
MAX_CHARS = 8_000
WEIGHTS = "weights/l2_supercat_256.safetensors"  # inside the wordllama package
TOKENIZER = "tokenizers/l2_supercat_tokenizer_config.json"
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
        from safetensors import safe_open
        from tokenizers import Tokenizer

        spec = importlib.util.find_spec("wordllama")  # its folder, without importing it
        if spec is None or not spec.submodule_search_locations:
            raise ModuleNotFoundError("the wordllama package is not installed")
        folder = Path(list(spec.submodule_search_locations)[0])
        self._tokenizer = Tokenizer.from_file(str(folder / TOKENIZER))
        self._tokenizer.no_padding()
        self._tokenizer.no_truncation()
        with safe_open(str(folder / WEIGHTS), framework="np") as f:
            table = f.get_tensor("embedding.weight")  # float16, rows converted when used
        if table.ndim != 2 or table.shape[1] != DIM:
            raise ValueError(f"the model's table has shape {table.shape}, not (n, {DIM})")
        self._table = table
        self._lock = threading.Lock()

    def embed(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        if not texts:
            return out
        with self._lock:  # one tokenizer per process; calls take turns
            encoded = self._tokenizer.encode_batch_fast([t[:MAX_CHARS] for t in texts],
                                                        add_special_tokens=False)
        lengths = np.fromiter((len(e.ids) for e in encoded), dtype=np.int64,
                              count=len(encoded))
        if not lengths.any():
            return out
        ids = np.fromiter(itertools.chain.from_iterable(e.ids for e in encoded),
                          dtype=np.int64, count=int(lengths.sum()))
        np.clip(ids, 0, self._table.shape[0] - 1, out=ids)
        _token_sums(self._table, ids, lengths, out)
        some = lengths > 0
        out[some] /= lengths[some, None]
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, norms, out=out, where=norms > 0)
        return out


COUNTS_CELLS = 1 << 21  # count cells (texts x distinct tokens) per product: ~24 MB at most


def _token_sums(table: np.ndarray, ids: np.ndarray, lengths: np.ndarray,
                out: np.ndarray) -> None:
    """Each text's sum of its tokens' rows, into `out`: a matrix of token counts (texts x
    the batch's distinct tokens) times those tokens' rows, one BLAS product. Gathering a row
    per token and summing runs of rows (`np.add.reduceat`) costs ten times as much."""
    distinct, column = np.unique(ids, return_inverse=True)
    width = len(distinct)
    rows = table[distinct].astype(np.float32)
    text_of = np.repeat(np.arange(len(lengths)), lengths)
    bounds = np.concatenate(([0], np.cumsum(lengths)))
    step = max(1, COUNTS_CELLS // width)
    for first in range(0, len(lengths), step):
        last = min(len(lengths), first + step)
        a, b = bounds[first], bounds[last]
        counts = np.bincount((text_of[a:b] - first) * width + column[a:b],
                             minlength=(last - first) * width)
        out[first:last] = counts.reshape(last - first, width).astype(np.float32) @ rows


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
