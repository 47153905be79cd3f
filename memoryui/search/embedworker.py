"""A helper process for a full embedding build: the second core embeds passages while the
building process reads files, cuts them into passages and writes both indexes.

A full build (rebuild, the first build, a model change) of a large workspace spends about
half its CPU embedding passages (tokenizing, summing token vectors) and the rest reading
files, cutting passages and in SQLite. Python runs one thread at a time, so the build hands
batches of passages' texts to
this module run as its own process (`python -m memoryui.search.embedworker`, so nothing of
the caller's `__main__` is imported again), keeps two batches in flight and writes the
results as they come. Only full builds use it, and only past HELPER_AFTER documents: a write
and a small workspace embed in process as before. When the helper cannot start or dies, the
build goes on in process with what it has not received back.

Frames on the pipes are an 8-byte length and a pickle, between this process and its own
child only.
"""

from __future__ import annotations

import logging
import os
import pickle
import queue
import subprocess
import sys
import threading
import weakref
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from .embeddings import Embedder, embedder

if TYPE_CHECKING:
    import numpy as np
else:
    from .lazy import numpy as np  # imported at the first batch embedded

log = logging.getLogger("memoryui.search")

HELPER_AFTER = 2_048  # documents a full build embeds in process before it starts the helper
IN_FLIGHT = 2  # batches sent to the helper and not yet written

# One batch's answer: the sign codes (n, DIM // 8) uint8 and vectors (n, DIM) float32.
Answer = tuple["np.ndarray", "np.ndarray"]


def embed_texts(model: Embedder, texts: list[str]) -> Answer:
    """The codes and vectors of `texts`, in order."""
    vecs = model.embed(texts)
    return np.packbits(vecs > 0, axis=1), vecs


def _write_frame(out: IO[bytes], value: object) -> None:
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    out.write(len(data).to_bytes(8, "little"))
    out.write(data)
    out.flush()


def _read_frame(inp: IO[bytes]) -> Any:
    head = inp.read(8)
    if len(head) < 8:
        return None
    size = int.from_bytes(head, "little")
    data = inp.read(size)
    if len(data) < size:
        return None
    return pickle.loads(data)  # noqa: S301 - our own child's frames, never outside input


class Helper:
    """The helper process seen from the build: `submit` a batch, `answer` the oldest one.
    A build that fails midway drops its Helper: the process is stopped then as well."""

    def __init__(self) -> None:
        root = str(Path(__file__).resolve().parents[2])  # where `memoryui` is imported from
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
        self._proc = subprocess.Popen(  # noqa: S603 - this interpreter, this module
            [sys.executable, "-m", "memoryui.search.embedworker"], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, env=env)
        # A thread feeds the child's stdin, so the build never blocks writing a batch while
        # the child blocks writing an answer nobody reads yet.
        self._outbox: queue.Queue = queue.Queue()
        threading.Thread(target=_feed, args=(self._proc.stdin, self._outbox),
                         name="memoryui-embed-feeder", daemon=True).start()
        self._stop = weakref.finalize(self, _stop, self._proc, self._outbox)

    def submit(self, batch: list[str]) -> None:
        self._outbox.put(batch)

    def answer(self) -> Answer:
        assert self._proc.stdout is not None
        got = _read_frame(self._proc.stdout)
        if got is None:
            raise RuntimeError(f"the embedding helper stopped (exit {self._proc.poll()})")
        return got

    def close(self) -> None:
        self._stop()


def _feed(stdin: IO[bytes], outbox: queue.Queue) -> None:
    try:
        while (batch := outbox.get()) is not None:
            _write_frame(stdin, batch)
    except OSError:  # the child died: `answer` finds out and the build goes on in process
        pass
    finally:
        try:
            stdin.close()
        except OSError:
            pass


def _stop(proc: subprocess.Popen, outbox: queue.Queue) -> None:
    """Its stdin closed (it exits when it has read all), our end of its answers closed (an
    answer nobody will read does not hold it up), then reaped."""
    outbox.put(None)
    if proc.stdout is not None:
        proc.stdout.close()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def main() -> int:
    model = embedder()
    if model is None:
        return 1
    inp, out = sys.stdin.buffer, sys.stdout.buffer
    try:
        while (batch := _read_frame(inp)) is not None:
            _write_frame(out, embed_texts(model, batch))
    except BrokenPipeError:  # the build stopped reading: it failed or gave up on us
        return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
