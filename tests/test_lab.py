"""The lesson's second cell, as the page runs it (the first one is in tests/test_challenge.py)."""
from app.lab import TimingLab
from model import generate


def test_timing_lab_runs_step_by_step_and_cancels(gpt):
    ids = generate(gpt, "La Nela", 62, seed=0, top_p=0.9)
    lab = TimingLab(gpt, ids, positions=(8, 64), min_seconds=0.001, rounds=1)
    assert lab.total == 4 and lab.rows == [] and lab.by_row is None
    assert lab.advance() and lab.done == 1 and lab.rows == []
    assert lab.advance() and len(lab.rows) == 1
    row = lab.rows[0]
    assert row["t"] == 8 and row["c"] == 133_120 and row["tc"] == 8 * 133_120 and row["count_ratio"] == 8
    assert row["cached_s"] > 0 and row["full_s"] > 0
    while lab.advance():
        pass
    assert lab.finished and lab.by_row["rows"] == 64
    assert lab.by_row["per_row_in_pass_s"] == lab.rows[-1]["full_s"] / 64
    other = TimingLab(gpt, ids, positions=(8, 16), min_seconds=0.001, rounds=1)
    other.advance()
    other.cancel()
    assert not other.advance() and other.finished and other.done == 1
