"""The committer's back-off on a full disk: waits that double up to a cap, one log line
when the disk fills and one when commits go through again."""

from __future__ import annotations

import logging

import pytest

from memoryui.store.room import FullDiskBackoff


def test_waits_double_up_to_the_cap_and_each_episode_is_logged_once(
        caplog: pytest.LogCaptureFixture) -> None:
    now = [100.0]
    backoff = FullDiskBackoff(first=1.0, cap=30.0, clock=lambda: now[0])
    with caplog.at_level(logging.INFO, logger="memoryui.store"):
        waits = [backoff.failed("/ws") for _ in range(8)]
        assert waits == [1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 30.0, 30.0]
        now[0] += 91
        backoff.succeeded()
        backoff.succeeded()  # no episode: nothing to say
        assert backoff.failed("/ws") == 1.0  # a new episode starts again from the first wait
    texts = [r.getMessage() for r in caplog.records]
    assert len(texts) == 3
    assert "/ws is full" in texts[0] and "up to 30 s" in texts[0]
    assert "room again" in texts[1] and "after 8 failed attempts in 91 s" in texts[1]
    assert "/ws is full" in texts[2]
