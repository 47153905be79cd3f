"""Every file as the pages' read model, the file catalogue, has it (for tests)."""

from __future__ import annotations

from memoryui.search.catalogue import Catalogue, Entry
from memoryui.store import Store


def catalogued(store: Store) -> dict[str, Entry]:
    """path -> its catalogue entry (size, place, last commit), current as a page reads it."""
    cat = Catalogue.ready(store)
    assert cat is not None, "a small workspace is catalogued at once"
    return {e.path: e for e in cat.entries()}
