"""One parser for every date read from input, bounded (memoryui/store/dates.py)."""

from __future__ import annotations

import datetime as dt

import pytest

from memoryui.store.dates import GIT_MAX, GIT_MIN, BadDate, parse_date


def test_a_date_in_range_is_read():
    assert parse_date(" 2026-02-12 ") == dt.date(2026, 2, 12)
    assert parse_date(dt.datetime(2026, 2, 12, 9, 30)) == dt.date(2026, 2, 12)


@pytest.mark.parametrize(("text", "words"), [
    ("0001-01-01", "0001-01-01 is out of range: use a date from 1900-01-01 to 2999-12-31"),
    ("9999-12-31", "9999-12-31 is out of range"),
    ("2026-02-30", "'2026-02-30' is not a date: use YYYY-MM-DD"),
    ("yesterday", "'yesterday' is not a date"),
    ("２０２６-01-01", "is not a date"),  # fromisoformat would read other digits
])
def test_a_far_or_broken_date_is_one_sentence(text, words):
    with pytest.raises(BadDate) as caught:
        parse_date(text)
    assert words in str(caught.value) and caught.value.status == 400


def test_git_filters_keep_to_gits_years():
    assert parse_date("1970-01-01", earliest=GIT_MIN, latest=GIT_MAX) == GIT_MIN
    with pytest.raises(BadDate, match="1969-12-31 is out of range"):
        parse_date("1969-12-31", earliest=GIT_MIN, latest=GIT_MAX)
