"""The duration budget of MetricsProducerInterceptor (``Sampler``), on a clock the test sets."""

from __future__ import annotations

from itertools import pairwise

from kheaders.interceptors._metrics_common import Sampler


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _taken(sampler: Sampler, clock: Clock, calls: int, seconds: float) -> list[int]:
    """Which of ``calls`` calls, spread evenly over ``seconds``, were taken (their indexes)."""
    start = clock.now
    taken = []
    for i in range(calls):
        clock.now = start + seconds * i / calls
        if sampler.take() is not None:
            taken.append(i)
    clock.now = start + seconds
    return taken


def test_below_the_budget_every_call_is_taken_with_the_clock_time() -> None:
    clock = Clock()
    sampler = Sampler(100, clock)
    assert _taken(sampler, clock, 80, 1.0) == list(range(80))
    assert _taken(sampler, clock, 80, 1.0) == list(range(80))
    clock.now = 500.0
    assert sampler.take() == 500.0


def test_above_the_budget_at_most_the_limit_per_second_spread_evenly() -> None:
    clock = Clock()
    sampler = Sampler(10, clock)
    first = _taken(sampler, clock, 1000, 1.0)
    assert first == list(range(10))  # no rate known yet: the first ten
    for _ in range(3):
        taken = _taken(sampler, clock, 1000, 1.0)
        assert 9 <= len(taken) <= 10
        gaps = {b - a for a, b in pairwise(taken)}
        assert gaps == {100}  # the stride from the last window's 1,000 calls
    # the rate falls: one window takes what the old stride allows, the next follows the rate
    assert len(_taken(sampler, clock, 50, 1.0)) <= 10
    assert _taken(sampler, clock, 50, 1.0) == list(range(4, 50, 5))


def test_zero_takes_every_call() -> None:
    clock = Clock()
    sampler = Sampler(0, clock)
    assert len(_taken(sampler, clock, 5000, 1.0)) == 5000
