"""The embedding model inside the installed wheel: loads offline, and when its file is
missing or corrupt, search answers by keywords and says why."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import wordllama

from memoryui.search.embeddings import DIM, embedder

ROOT = Path(__file__).resolve().parents[2]
PROBE = """
import logging, sys
logging.basicConfig(level=logging.INFO, stream=sys.stderr)
from pathlib import Path
from memoryui.search import SearchIndex
from memoryui.store import Actor, Store
root = Path(sys.argv[1])
store = Store(root / "ws")
index = SearchIndex(root / "search.sqlite3", catch_up_interval=0, background=False)
index.attach(store)
store.write(store.path_for("note", "ops-bot", "storage"), "Postgres dumps run nightly.\\n",
            actor=Actor.agent("ops-bot"), tool="t")
got = index.search("postgres", mode="hybrid")
print(got.mode, [h.path for h in got.hits], got.notice, sep="\\n")
"""


def test_the_model_embeds_offline_and_puts_paraphrases_close() -> None:
    model = embedder()
    assert model is not None
    rows = model.embed(["when do the database backups run?",
                        "Postgres dumps happen nightly at 02:00.",
                        "Green tea is best brewed at 80 degrees."])
    assert rows.shape == (3, DIM) and rows.dtype == np.float32
    assert np.allclose(np.linalg.norm(rows, axis=1), 1.0, atol=1e-4)
    assert rows[0] @ rows[1] > rows[0] @ rows[2] + 0.15
    assert model.embed([]).shape == (0, DIM)
    assert not np.isnan(model.embed(["", "\x00\x01", "\U0001f680" * 10_000])).any()


@pytest.mark.parametrize("damage", ["missing", "corrupt"])
def test_a_broken_model_file_means_keyword_search_that_says_why(tmp_path: Path,
                                                                damage: str) -> None:
    """A copy of the installed package with its weights removed or cut short, first on the
    path of a fresh interpreter: search still answers, by keywords, and says why."""
    site = tmp_path / "site"
    shutil.copytree(Path(wordllama.__file__).parent, site / "wordllama")
    weights = site / "wordllama" / "weights" / "l2_supercat_256.safetensors"
    if damage == "missing":
        weights.unlink()
    else:
        weights.write_bytes(weights.read_bytes()[:1000])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)]),
           "HF_HUB_OFFLINE": "1"}
    env.pop("MEMORYUI_EMBEDDINGS", None)
    out = subprocess.run([sys.executable, "-c", PROBE, str(tmp_path)], env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    mode, hits, notice = out.stdout.strip().split("\n")
    assert mode == "keyword"
    assert hits == "['agents/ops-bot/memory/notes/storage.md']"
    assert notice.startswith("Search by meaning is unavailable: ")
    assert notice.endswith("; results match keywords only.")
    assert "the embedding model could not load; search uses keywords only" in out.stderr
