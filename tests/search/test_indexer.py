"""The indexer's reading ahead: a rebuild's files read by a thread while the index writes."""

from __future__ import annotations

import threading

from memoryui.search.indexer import read_ahead


def test_read_ahead_keeps_order_and_stops_with_its_consumer():
    assert list(read_ahead(iter(range(1000)), batch=7, depth=2)) == list(range(1000))
    produced = []

    def endless():
        i = 0
        while True:
            produced.append(i)
            yield i
            i += 1

    it = read_ahead(endless(), batch=5, depth=2)
    assert [next(it) for _ in range(3)] == [0, 1, 2]
    it.close()  # the consumer stops: so does the reading thread
    assert not any(t.name == "memoryui-search-reader" for t in threading.enumerate())
