"""The lesson's two cells, as the page runs them."""
from app.lab import COMPARE_AT, LESSON_CODE, TimingLab, compare, fill_window
from model import generate


def test_fill_window_is_the_lesson_loop(gpt):
    f = fill_window(gpt, 64, seed=0, top_p=0.9)
    assert f.error is None and len(f.ids) == 64
    assert f.ids == generate(gpt, "La Nela", 62, seed=0, top_p=0.9)
    r = compare(gpt, f)
    assert set(r["diffs"]) == set(COMPARE_AT)
    assert r["max"] < 1e-12
    assert r["shape"] == (4, 64, 16) and r["numbers"] == 16_384 and r["bytes"] == 131_072


def test_changing_64_to_65_meets_the_index_error(gpt):
    f = fill_window(gpt, 65, seed=0, top_p=0.9)
    assert f.error is not None
    kind, message, position = f.error
    assert kind == "IndexError" and position == 65 and "out of bounds" in message
    assert len(f.ids) == 64 and len(f.cache) == 64            # the cache is untouched by the failure
    assert "while len(ids) < 65" in LESSON_CODE.format(limit=65, top_p=0.9)


def test_timing_lab_runs_step_by_step_and_cancels(gpt):
    ids = fill_window(gpt).ids
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
