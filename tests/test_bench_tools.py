"""The benchmarks' own verdicts, on made-up timings: `make bench` prints them beside its figures, so a page is called
within 10 % of its base only where the run's own spread allows it. Timings themselves are not asserted here."""

from __future__ import annotations

import random

from tools.bench_pages import interval, verdict


def test_a_page_is_within_ten_percent_only_when_its_whole_interval_is():
    rng = random.Random(1)
    steady = [1.02 + rng.uniform(-0.02, 0.02) for _ in range(15)]
    assert verdict(*interval(steady)) == "within 10 %"
    slow = [1.3 + rng.uniform(-0.05, 0.05) for _ in range(15)]
    assert verdict(*interval(slow)) == "slower"
    # visit-to-visit noise of ±25 % around a true 1.05: the median may read 1.05, but the run cannot tell
    noisy = [1.05 * rng.uniform(0.75, 1.25) for _ in range(15)]
    low, high = interval(noisy)
    assert low < 1.10 < high and verdict(low, high) == "cannot tell"


def test_the_interval_holds_the_median_and_is_the_same_each_run():
    ratios = [0.9, 1.0, 1.1, 1.2, 0.95, 1.05, 1.15]
    low, high = interval(ratios)
    assert low <= sorted(ratios)[3] <= high
    assert interval(ratios) == (low, high)  # seeded: the same timings give the same printed interval
