"""A smaller cache (issue 13): the page's explorer with shared K/V heads and fewer bits, and the
comparison of every combination, without a browser."""
import subprocess
import sys

import pytest

from app.sections.smaller import logic as smaller
from app.main import create_view
from tests.browser import ROOT


@pytest.mark.parametrize("kv, numbers", [(4, 16_384), (2, 8_192), (1, 4_096)])
def test_the_memory_readout_follows_the_kv_heads(kv, numbers):
    v = create_view(f"?lang=en&t=64&kv_heads={kv}")
    assert v.ex.cfg.n_kv_heads == kv and v.ex.cache.n_numbers == numbers
    assert f"{numbers:,} numbers" in v.readouts.layout.object
    assert v.grid.images.data["image"][0].shape == (kv * 16, 64)


@pytest.mark.parametrize("fmt, per_number", [("float64", 8), ("float16", 2), ("int8", 1.25), ("int4", 0.75)])
def test_the_bytes_are_the_real_arrays(fmt, per_number):
    v = create_view(f"?lang=en&t=64&precision={fmt}")
    assert v.ex.cache.nbytes == 16_384 * per_number
    assert v.ex.cache.n_numbers == 16_384


def test_switching_at_40_keeps_the_text_and_steps_on_to_the_lessons_error():
    v = create_view("?lang=es&t=40")
    text = list(v.ex.ids)
    v.session.settings.kv_heads = 2
    v.session.settings.precision = "int8"
    assert v.ex.ids == text and v.ex.t == 40 and len(v.ex.cache) == 40
    assert v.ex.cache.nbytes == 2 * 2 * 40 * 2 * 16 + 2 * 2 * 40 * 2 * 4        # int8 codes + float32 scales
    assert "5 120 números" in v.readouts.layout.object.replace("\u202f", " ")
    assert "2 · L · t · H_kv · d_k = 2 · 2 · 40 · 2 · 16" in v.readouts.layout.object
    while v.ex.t < 64:
        assert v.controls.do("step") is None and v.ex.error is None
    assert len(v.ex.drift) == 24 and max(v.ex.drift.values()) < 1.0
    v.controls.do("step")
    assert v.ex.error.lesson and v.ex.error.position == 65


def test_the_cached_steps_drift_and_the_text_departs_where_the_model_says():
    from model.quantize import first_departure
    v = create_view("?lang=en&precision=int4")
    while v.ex.t < 64:
        v.controls.do("step")
    expected = first_departure(v.ex.gpt, "La Nela", 62, "int4", seed=0, top_p=0.9)
    assert v.ex.switched_at is None and v.ex.departure() == expected


def test_comparing_every_combination():
    gpt = create_view("?lang=en").ex.gpt
    from model.timing import window_ids
    ids = window_ids(gpt)
    rows = {fmt: smaller.combination(gpt, ids, 4, fmt, 3.54, 2) for fmt in smaller.FORMATS}
    assert [rows[f].window_bytes for f in smaller.FORMATS] == [131_072, 32_768, 20_480, 12_288]
    assert rows["float64"].drift == 0.0 < rows["float16"].drift < rows["int8"].drift < rows["int4"].drift


def test_nothing_of_it_is_loaded_before_the_reader_asks():
    code = ("from app.main import create_view; import sys; v = create_view('?lang=es'); "
            "from app.state import checkpoints; "
            "print(sorted(m for m in sys.modules if m in ('model.quantize', 'model.batch', 'model.speculative'))); "
            "print(sorted(checkpoints._loaded))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT).stdout
    assert out.splitlines() == ["[]", "['lesson']"]
