"""The overview as it last was, saved so the first request after a start answers at once.

After a start the overview cannot be exact before the workspace is listed (git's index)
and every file grouped: 6 s at 200k files. What it shows is small, though: one row per
scope, the world topics, skills, directives and other files, a few thousand items. So an
exact overview is saved now and then (JSON in the repository's memoryui state folder, at
most every SAVE_EVERY seconds, written off the request path), and after a start the
overview is served from it, saying so on the page, while the exact one is built in the
background (`build.py`). Nothing in the file is trusted beyond its shape: a file that does
not parse, or was saved for another layout, is ignored.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from pathlib import Path

from memoryui.store import Kind, Store
from memoryui.store.layout import Address
from memoryui.store.threadnames import named

from . import folders, model
from .model import Hierarchy, Item, ScopeSummary

log = logging.getLogger("memoryui.web")

FORMAT = 1
SAVE_EVERY = 300.0  # seconds between saves of one workspace's overview
_saved_at: dict[str, float] = {}  # workspace -> time.monotonic() of its last save
_saving: dict[str, threading.Thread] = {}
_lock = threading.Lock()


def _file(store: Store) -> Path:
    return store.git.state_dir / "overview.json"


def keep(store: Store, h: Hierarchy, review_counts: dict[str, int]) -> None:
    """Save `h` (an exact overview) for the next start, in a thread, at most every
    SAVE_EVERY seconds (the first one of a process at once)."""
    if h.saved_at is not None:
        return
    key, now = str(store.root), time.monotonic()
    def work() -> None:
        try:
            save(store, h, review_counts)
        except Exception:  # noqa: BLE001 - only a restart's head start is lost
            log.exception("saving the overview for the next start failed")
        finally:
            with _lock:
                _saving.pop(key, None)

    with _lock:
        last = _saved_at.get(key)
        if key in _saving or (last is not None and now - last < SAVE_EVERY):
            return
        _saved_at[key] = now
        thread = _saving[key] = threading.Thread(target=named(work), name="memoryui-overview-save",
                                                 daemon=True)
    thread.start()


def wait_for_save(store: Store, timeout: float | None = None) -> None:
    """Block until a save under way (if any) ends (tests, bench)."""
    thread = _saving.get(str(store.root))
    if thread is not None:
        thread.join(timeout)


def save(store: Store, h: Hierarchy, review_counts: dict[str, int]) -> None:
    """Write what the overview shows of `h` (atomically; a full disk keeps the old file)."""
    rows = [h.global_memory, *(i for name in _LISTS for i in getattr(h, name))]
    for s in h.scopes.values():
        rows += [s.memory, s.scratchpad, s.newest_daily]
    lasts = [h.last_raw, *(s.last_raw for s in h.scopes.values()),
             *(i.last_raw for i in rows if i is not None)]
    store.tree_model.read_commits(getattr(c, "sha", "") for c in lasts if c)
    data = {
        "format": FORMAT, "layout": store.layout.key, "saved_at": time.time(),
        "files": h.file_count, "size": h.size, "last": _last(h.last_raw),
        "scope_names": list(h.scopes),
        "scopes": [[s.name, _row(store, s.memory), _row(store, s.scratchpad),
                    _row(store, s.newest_daily), s.daily_count, s.note_count, s.files,
                    s.size, _last(s.last_raw)] for s in h.scopes.values()],
        "global": _row(store, h.global_memory),
        **{name: [_row(store, i) for i in getattr(h, name)] for name in _LISTS},
        "review": review_counts,
    }
    target = _file(store)
    tmp = target.with_suffix(f".{threading.get_ident()}.tmp")
    try:
        tmp.write_text(json.dumps(data, separators=(",", ":")))
        os.replace(tmp, target)
    except OSError:
        tmp.unlink(missing_ok=True)
        raise


_LISTS = ("world", "skills", "directives", "other")


def load(store: Store) -> Hierarchy | None:
    """The saved overview as a Hierarchy (`saved_at` set, so pages say what it is), or
    None when there is none for this layout or it cannot be read."""
    try:
        data = json.loads(_file(store).read_text())
        if data.get("format") != FORMAT or data.get("layout") != store.layout.key:
            return None
        h = Hierarchy(store.layout, file_count=int(data["files"]), size=int(data["size"]),
                      last_raw=data["last"], saved_at=float(data["saved_at"]),
                      review_counts={str(k): int(v) for k, v in data["review"].items()})
        for name in _LISTS:
            setattr(h, name, [_item(store, row) for row in data[name]])
        h.global_memory = _item(store, data["global"])
        scopes = {}
        for name, mem, pad, daily, n_daily, n_notes, files, size, last in data["scopes"]:
            scopes[str(name)] = ScopeSummary(str(name), _item(store, mem), _item(store, pad),
                                             _item(store, daily), int(n_daily), int(n_notes),
                                             int(files), int(size), last)
        h.scopes = scopes
        h.scope_names = list(scopes)
        h.built_at = h.saved_at
        return h
    except FileNotFoundError:
        return None
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        log.warning("the saved overview of %s is unreadable: ignored", store.root)
        return None


def first_look(store: Store) -> Hierarchy:
    """What the overview shows at once of a large workspace seen for the first time (no
    overview saved yet): the shared part as the sidebar lists it (world topics, skills,
    directives, the global memory) and every scope by name, with what each holds not
    counted until the first build is done (`first_look`: the page says so, shows "…" for
    the counts and reloads). The first build of a 200k-file repository takes seconds (2 s in
    process here, 3.6 s over HTTP beside the rest of a first start)."""
    part = folders.shared(store)
    now = time.time()
    h = Hierarchy(store.layout, saved_at=now, built_at=now, first_look=True,
                  review_counts={}, global_memory=part.global_memory,
                  **{name: list(getattr(part, name)) for name in _LISTS})
    h.scopes = {name: ScopeSummary(name, None, None, None, None, None, None, None, None)
                for name in part.scope_names}
    h.scope_names = list(h.scopes)
    return h


def _last(last: object) -> dict | None:
    """A last change as a plain dict (a LastChange reads author and subject from git)."""
    if not last:
        return None
    get = last.get  # type: ignore[attr-defined]
    return {k: get(k) for k in ("sha", "time", "author", "actor", "subject")}


def _row(store: Store, item: Item | None) -> list | None:
    if item is None:
        return None
    budget = store.layout.budgets.get(item.kind) if item.kind else None
    lines = model._cached_lines(store, item) if budget and budget.max_lines else None
    return [item.path, item.kind.value if item.kind else None, item.scope, item.name,
            item.size, item.mtime, _last(item.last_raw), lines]


def _item(store: Store, row: list | None) -> Item | None:
    if row is None:
        return None
    path, kind, scope, name, size, mtime, last, lines = row
    addr = Address(Kind(kind), scope, name) if kind else None
    item = model.new_item(store, str(path), addr, int(size), float(mtime), last)
    if item.store is not None and lines is not None:  # a budget meter without a file read
        model.seed_lines(store, item, int(lines))
    return item
