"""The paired bench's ratio counts only the calls answered while both stacks were loaded."""

from __future__ import annotations

import pytest

from bench.bench_together import rates_while_both


def test_a_stack_alone_on_the_core_before_or_after_the_other_is_not_counted() -> None:
    # "a" answers from 0 s to 10 s, 10 a second; "b" from 2 s to 6 s, 5 a second. While b
    # was loaded (2-6 s) a answered 10 a second; its 6 s alone do not make it look faster.
    a = [i / 10 for i in range(101)]
    b = [2 + i / 5 for i in range(21)]
    rates = rates_while_both({"a": a, "b": b})
    assert rates["a"] == pytest.approx(41 / 4)
    assert rates["b"] == pytest.approx(21 / 4)


def test_stacks_that_never_ran_together_give_no_ratio() -> None:
    with pytest.raises(ValueError, match="never loaded at the same time"):
        rates_while_both({"a": [0.0, 1.0], "b": [2.0, 3.0]})
