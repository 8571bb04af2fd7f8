"""tests/device.py: the phone a throttle makes of this machine (Lighthouse's BenchmarkIndex, DevTools' bisect)."""

from __future__ import annotations

import math

from tests.device import CLOSE_ENOUGH, LOW_TIER, MID_TIER, benchmark_index, calibrate, host_line, phone_words


def test_calibrate_finds_the_rate_at_which_the_score_meets_the_target():
    """A machine that scores 1600 unthrottled and, as throttling does, in proportion to 1 / rate: the bisect
    between 1x and DevTools' first upper bound (1.5 times the plain ratio) ends within 10 points of each
    of DevTools' phones, at a rate to the hundredth."""
    calls = []

    def score(rate):
        calls.append(rate)
        return 1600 / rate

    for target in (LOW_TIER, MID_TIER):
        calls.clear()
        rate = calibrate(score, target, 1, 1600 / target * 1.5)
        assert abs(1600 / rate - target) < CLOSE_ENOUGH, (target, rate)
        assert rate == round(rate, 2)
        assert len(calls) <= 8


def test_calibrate_gives_up_after_its_tries_at_the_rate_nearest_the_target():
    """A target it cannot meet (the machine is slower than the phone at any rate): eight halvings, and the
    rate it ends at is the lower bound's side, the fastest it tried."""
    calls = []

    def score(rate):
        calls.append(rate)
        return 100.0

    rate = calibrate(score, MID_TIER, 1, 8)
    assert len(calls) == 8
    assert rate == min(calls) and rate < 1.05


def test_phone_words_name_the_phone_a_score_is_near():
    assert phone_words(120) == "slower than DevTools' low-tier phone (264)"
    assert phone_words(260) == phone_words(273) == "DevTools' low-tier phone (264)"
    assert phone_words(378) == "between DevTools' low-tier phone (264) and its mid-tier one (1000)"
    assert phone_words(995) == "DevTools' mid-tier phone (1000)"
    assert phone_words(1530) == "faster than DevTools' mid-tier phone (1000)"


def test_host_line_gives_each_rate_before_and_after_and_the_phone_of_each_throttle():
    line = host_line({1.0: 1530, 4.0: 378}, {1.0: 1210.4, 4.0: 301})
    assert line == (
        "Lighthouse's BenchmarkIndex in a blank page, before / after: 1x 1530 / 1210; "
        "4x 378 / 301 (between DevTools' low-tier phone (264) and its mid-tier one (1000))"
    )


def test_benchmark_index_runs_in_a_throttled_page(browser):
    """The benchmark's JavaScript runs as given (a broken copy would raise) and scores a positive count."""
    got = benchmark_index(browser, 4, runs=1, ms=200)
    assert math.isfinite(got) and got > 0
