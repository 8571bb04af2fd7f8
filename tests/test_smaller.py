"""A smaller cache (issue 13): the page's explorer with shared K/V heads and fewer bits, and the
comparison of every combination, without a browser."""

import subprocess
import sys

import pytest

from app.main import create_view
from app.sections.smaller import logic as smaller
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
    assert v.ex.cache.nbytes == 2 * 2 * 40 * 2 * 16 + 2 * 2 * 40 * 2 * 4  # int8 codes + float32 scales
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
    code = (
        "from app.main import create_view; import sys; v = create_view('?lang=es'); "
        "from app.state import checkpoints; "
        "print(sorted(m for m in sys.modules if m in ('model.quantize', 'model.batch', 'model.speculative'))); "
        "print(sorted(checkpoints._loaded))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT).stdout
    assert out.splitlines() == ["[]", "['lesson']"]


@pytest.mark.parametrize("fmt", ["float16", "int8", "int4"])
def test_the_page_drifts_as_model_quantize_says(fmt):
    """The page's cache is a real cache of the format (issue 19): filled by llenar and appended to by
    every step, so the drift it shows at each position is model.quantize.logit_drift's for the same
    text, model and format, to the last bit, a stretch without the cache in between included."""
    from model import generate
    from model.gpt import kv_difference
    from model.quantize import QuantizedKVCache, logit_drift

    v = create_view(f"?lang=en&precision={fmt}")
    ex = v.ex
    while ex.t < 30:
        v.controls.do("step")
    assert ex.ids == generate(ex.gpt, "La Nela", 28, seed=0, top_p=0.9, cache=QuantizedKVCache.empty(ex.cfg, fmt))
    v.controls.do("toggle")
    while ex.t < 35:  # without the cache: the full pass picks, the cache still fills
        v.controls.do("step")
    v.controls.do("toggle")
    while ex.t < 40:
        v.controls.do("step")
    drift = logit_drift(ex.gpt, ex.ids, fmt, ex.n_prompt)
    assert sorted(ex.drift) == list(range(3, 31)) + list(range(36, 41))
    assert all(ex.drift[p] == drift[p - 1] for p in ex.drift)
    _, same = ex.gpt.llenar(ex.ids[: ex.n_prompt], QuantizedKVCache.empty(ex.cfg, fmt))
    for token in ex.ids[ex.n_prompt :]:
        ex.gpt.step(token, same)
    assert isinstance(ex.cache, QuantizedKVCache) and kv_difference(ex.cache, same) == 0.0
    assert kv_difference(ex.cache64, ex.gpt.llenar(ex.ids)[1]) < 1e-12  # the float64 twin


def test_switching_at_40_fills_the_format_in_one_pass():
    """Another checkpoint and format at 40: the text so far read again into a cache of that format (as a
    step in that format fills it, not a float64 cache quantized after the fact), and each step's drift is
    logit_drift's with those 40 tokens as the prompt."""
    from model.gpt import kv_difference
    from model.quantize import QuantizedKVCache, logit_drift

    v = create_view("?lang=en&t=40")
    v.session.settings.kv_heads = 2
    v.session.settings.precision = "int4"
    ex = v.ex
    _, filled = ex.gpt.llenar(ex.ids, QuantizedKVCache.empty(ex.cfg, "int4"))
    assert ex.cfg.n_kv_heads == 2 and ex.switched_at == 40 and kv_difference(ex.cache, filled) == 0.0
    while ex.t < 48:
        v.controls.do("step")
    drift = logit_drift(ex.gpt, ex.ids, "int4", n_prompt=40)
    assert sorted(ex.drift) == list(range(41, 49)) and all(ex.drift[p] == drift[p - 1] for p in ex.drift)
