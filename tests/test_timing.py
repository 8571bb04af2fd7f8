"""The lesson's second cell, as the page runs it (the first one is in tests/test_challenge.py),
and what its sentences may say: every one is chosen from the measurement."""

import pytest

from app.sections.timing.logic import TimingLab
from app.state import clock
from model import generate


def test_timing_lab_runs_position_by_position_and_cancels(gpt):
    ids = generate(gpt, "La Nela", 62, seed=0, top_p=0.9)
    lab = TimingLab(gpt, ids, positions=(8, 64), samples=3, min_seconds=0.001, warm_up_s=0.05)
    assert lab.total == 2 and lab.rows == [] and lab.by_row is None and lab.summary is None
    assert lab.advance() and lab.done == 1 and len(lab.rows) == 1
    row = lab.rows[0]
    assert row["t"] == 8 and row["c"] == 133_120 and row["tc"] == 8 * 133_120 and row["count_ratio"] == 8
    assert row["cached_s"] > 0 and row["full_s"] > 0
    assert row["ratio_low"] <= row["clock_ratio"] <= row["ratio_high"]
    while lab.advance():
        pass
    assert lab.finished and lab.by_row["rows"] == 64
    assert lab.by_row["per_row_in_pass_s"] == lab.rows[-1]["full_s"] / 64
    assert lab.summary is not None and lab.summary.last == 64
    written = []
    other = TimingLab(gpt, lambda: written.append(1) or ids, positions=(8, 16), samples=3, min_seconds=0.001)
    assert written == []  # the text is written by the first part (off the server's loop), not here
    other.advance()
    assert written == [1] and other.ids == ids
    other.cancel()
    assert not other.advance() and other.finished and other.done == 1 and other.summary is None


def rows(cached, full, counts=(8, 64)):
    return [
        {"t": t, "cached_s": c, "full_s": f, "clock_ratio": f / c, "count_ratio": n}
        for t, c, f, n in zip(counts, cached, full, counts)
    ]


@pytest.mark.parametrize(
    "cached, full, expect",
    [
        ((0.25e-3, 0.26e-3), (0.6e-3, 4.1e-3), ["lab_full_ramp", "lab_cached_flat", "lab_clock_short"]),
        ((0.25e-3, 0.50e-3), (0.6e-3, 4.1e-3), ["lab_full_ramp", "lab_cached_varies", "lab_clock_short"]),
        ((0.25e-3, 0.26e-3), (0.6e-3, 0.9e-3), ["lab_full_flat", "lab_cached_flat", "lab_clock_short"]),
        ((0.25e-3, 5.00e-3), (0.6e-3, 4.1e-3), ["lab_full_ramp", "lab_cached_varies", "lab_clock_slower"]),
        ((0.10e-3, 0.10e-3), (0.6e-3, 6.0e-3), ["lab_full_ramp", "lab_cached_flat", "lab_clock_near"]),
    ],
)
def test_the_sentences_follow_the_numbers(cached, full, expect):
    sentences = clock.table_sentences(clock.read_table(rows(cached, full)), "es")
    assert [key for key, _ in sentences] == expect


def test_rounding_agrees_everywhere():
    assert clock.ratio_text(2.6, "es") == "2.6" and clock.ratio_text(16.4, "es") == "16"
    assert clock.ratio_text(9.96, "pt") == "10" and clock.ratio_text(9.94, "pt") == "9,9"  # one rule
    assert (
        clock.ms_text(0.0060, "es") == "6"
        and clock.ms_text(0.0060, "en") == "6.00"
        and clock.ms_text(0.000253, "en") == "0.253"
    )
    assert clock.ms_text(0.1234, "es") == "123"
    _, values = clock.table_sentences(clock.read_table(rows((0.25e-3, 0.26e-3), (0.6e-3, 4.1e-3))), "es")[2]
    assert values["x"] == clock.ratio_text(4.1e-3 / 0.26e-3, "es") == "16"
    # the cache lost this time: the ratio under 1 is written as a cost, how many times as long
    _, values = clock.table_sentences(clock.read_table(rows((0.25e-3, 5.00e-3), (0.6e-3, 4.1e-3))), "es")[2]
    assert values["x"] == clock.ratio_text(5.00e-3 / 4.1e-3, "es") == "1.2"
