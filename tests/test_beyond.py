"""Beyond the lesson, without a browser: the batch of conversations and the speculative rounds the
page shows (app/sections/batch/logic.py, app/sections/speculative/logic.py), their measurements, the sentences chosen from
the numbers, and the two sections (app/sections/batch and app/sections/speculative): built only when opened, nothing of them
imported or loaded before."""

from pathlib import Path

import pytest

from app.sections.batch.logic import PROMPTS, SLOT_PAD, BatchLab, Conversations, batch_sentences
from app.sections.speculative.logic import CUT, KEPT, NEW, PROMPT, SpecLab, SpecRun, column_states, spec_sentences
from model import cost, generate
from model.gpt import kv_difference
from tests.fresh import in_fresh_python

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def draft():
    from app.state import checkpoints

    return checkpoints.load("draft")


def own_bytes(gpt, t: int) -> int:
    """One conversation's cache at t positions: 2 L t d numbers of 8 bytes (the lesson's count)."""
    return cost.cache_numbers(gpt.config.n_layers, gpt.config.d_model, t) * 8


# -- batching ----------------------------------------------------------------------------------------


def test_the_batch_writes_each_conversations_own_text(gpt):
    """Each conversation, with its own prompt and seed, samples what it samples alone; its logits in
    the batch are its logits alone; the prompts are ragged."""
    c = Conversations(gpt, 6, seed=3, top_p=0.9)
    assert len(set(c.n_prompt)) >= 4 and c.prompts == list(PROMPTS[:6]) and c.seeds == [3, 4, 5, 6, 7, 8]
    for _ in range(10):
        assert c.advance()
    for b in range(6):
        assert c.ids[b] == generate(gpt, c.prompts[b], 10, seed=3 + b, top_p=0.9)
    assert 0 <= c.proof < 1e-12


def test_the_batch_cache_is_b_times_one_conversations(gpt):
    c = Conversations(gpt, 5)
    c.advance()
    m, cfg = c.memory(), gpt.config
    S = max(len(x) for x in c.ids)
    assert m["shape"] == (5, cfg.n_heads, S, cfg.d_head) and m["slots"] == S
    assert m["tensor"] == 5 * m["row"] == 5 * own_bytes(gpt, S)  # B rows of S slots
    assert m["own"] == [own_bytes(gpt, len(x)) for x in c.ids]  # each alone: its own t
    assert m["padding"] == m["tensor"] - sum(m["own"]) == m["pad_slots"] * own_bytes(gpt, 1)
    kinds = c.slot_kinds()
    for b, ids in enumerate(c.ids):
        assert (kinds[b] == SLOT_PAD).sum() == S - len(ids) and (
            kinds[b, : S - len(ids)] == SLOT_PAD
        ).all()  # on the left


def test_the_batch_stops_at_the_position_table(gpt):
    c = Conversations(gpt, 3)
    longest = max(c.n_prompt)
    for _ in range(gpt.config.n_ctx - longest):
        assert c.advance()
    ids = [list(x) for x in c.ids]
    assert not c.advance()
    e = c.error
    assert e.lesson and e.position == gpt.config.n_ctx + 1 and e.type_name == "IndexError"
    assert e.message == "index 64 is out of bounds for axis 0 with size 64"
    assert c.ids == ids and len(c.cache) == gpt.config.n_ctx
    assert not c.advance() and c.ids == ids  # again: the same error


def test_batch_lab_rows_and_sentences(gpt):
    lab = BatchLab(gpt, (4, 8), batches=(1, 3), samples=2, min_seconds=0.0005)
    while lab.advance():
        pass
    rows = lab.rows
    assert [(r["t"], r["B"]) for r in rows] == [(4, 1), (4, 3), (8, 1), (8, 3)]
    for r in rows:
        assert r["per_s"] == pytest.approx(r["step_s"] / r["B"])
        assert r["gain"] == pytest.approx(r["alone_s"] / r["per_s"])  # what the sentence divides
        assert r["gain_low"] <= r["gain_high"]
        assert r["cache_bytes"] == r["B"] * own_bytes(gpt, r["t"])  # the real arrays, B times
    s = lab.summary
    assert (s["t"], s["B"]) == (8, 3)
    keys = [k for k, _ in batch_sentences(dict(s, gain=4.0), "es")]
    assert keys == ["batch_measured", "batch_why", "batch_wait"]
    assert [k for k, _ in batch_sentences(dict(s, gain=1.1), "es")] == ["batch_measured", "batch_no_gain"]
    costlier = batch_sentences(dict(s, gain=0.5), "en")  # dearer: written as a cost
    assert [k for k, _ in costlier] == ["batch_measured_costlier", "batch_costlier"] and costlier[0][1]["x"] == "2.0"
    cancelled = BatchLab(gpt, (4, 8), batches=(1,), samples=1)
    cancelled.advance()
    cancelled.cancel()
    assert not cancelled.advance() and cancelled.summary is None


# -- speculative decoding -----------------------------------------------------------------------------


def test_column_states():
    s = column_states(5, 8, 10)  # grew from 5 to 8
    assert list(s) == [KEPT] * 5 + [NEW] * 3 + [0] * 2
    s = column_states(8, 6, 10)  # cut from 8 to 6
    assert list(s) == [KEPT] * 6 + [CUT] * 2 + [0] * 2


def test_greedy_rounds_phase_by_phase_write_the_mini_gpts_own_text(gpt, draft):
    run = SpecRun(gpt, draft, k=4, greedy=True)
    rejected = 0
    while len(run.ids) < 40:
        n = len(run.ids)
        assert run.advance() and run.phase == "draft"
        assert run.lengths["target"][0] == run.lengths["target"][1] == n - 1  # the mini-GPT waits
        assert [k for _, k in run.marks()[n:]] == ["proposed"] * 4
        assert run.advance() and run.phase == "check"
        assert run.lengths["target"] == (n - 1, n + 4)  # one pass, k + 1 rows
        assert [r["verdict"] for r in run.check_rows()] == [None] * 4
        assert run.advance() and run.phase == "decide"
        r = run.round
        kinds = [k for _, k in run.marks()[n:]]
        assert kinds[: r.accepted] == ["accepted"] * r.accepted
        assert kinds[-1] == ("bonus" if r.accepted == 4 else "resampled")
        before, after = run.lengths["target"]
        assert after == len(run.ids) - 1 and before - after == 4 - r.accepted
        assert list(run.columns("target")).count(CUT) == 4 - r.accepted
        assert kv_difference(run.spec.target_cache, gpt.llenar(run.ids[:-1])[1]) < 1e-12  # as if never drafted
        rejected += r.accepted < 4
        assert run.same_as_own and run.ids == generate(gpt, PROMPT, len(run.ids) - 2, temperature=0)
    assert rejected and run.counts.tokens == len(run.ids) - 2


def test_rounds_end_at_the_position_table(gpt, draft):
    run = SpecRun(gpt, draft, k=8, seed=1)
    while run.advance():
        pass
    assert len(run.ids) == gpt.config.n_ctx and run.phase == "decide"
    e = run.error
    assert e.lesson and e.position == 65 and e.message == "index 64 is out of bounds for axis 0 with size 64"
    c = run.counts
    assert c.accepted + c.rejected <= c.drafted and c.tokens == gpt.config.n_ctx - run.n_prompt


def test_spec_lab_rows_and_sentences(gpt, draft):
    lab = SpecLab(gpt, draft, ks=(1, 3), seeds=(0, 1), samples=2, min_seconds=0.0005)
    while lab.advance():
        pass
    c = lab.c_clock
    assert c > 0 and lab.c_count == pytest.approx(cost.c_row(draft.config) / cost.c_row(gpt.config))
    for r in lab.rows:
        runs = lab.results[r["k"]]["runs"]
        assert r["alpha"] == sum(x.accepted for x in runs) / sum(x.accepted + x.rejected for x in runs)
        assert r["per_pass"] == sum(x.tokens for x in runs) / sum(x.rounds for x in runs)
        assert r["expected"] == cost.expected_tokens_per_pass(r["alpha"], r["k"])
        assert r["by_clock"] == cost.speculative_speedup(r["alpha"], r["k"], c)
        assert r["count"] < 1  # the count never promises a gain
        assert r["low"] <= r["speedup"] <= r["high"]
    s = lab.summary
    assert s["best"]["speedup"] >= s["worst"]["speedup"]
    for best, worst, verdict in (
        (1.3, 1.1, "spec_faster"),
        (1.3, 0.8, "spec_faster_mixed"),
        (0.5, 0.4, "spec_slower"),
        (1.0, 0.8, "spec_even"),
    ):
        said = spec_sentences(dict(s, best=dict(s["best"], speedup=best), worst=dict(s["worst"], speedup=worst)), "en")
        assert [k for k, _ in said][:3] == ["spec_alpha", verdict, "spec_assumes"] and said[-1][0] == "spec_count"
        values = said[1][1]
        # a ratio under 1 is written as a cost: how many times as long the text takes
        assert values["best"] == f"{best if best >= 1.05 else 1 / best:.2f}"
        assert values["worst"] == f"{worst if worst >= 1 else 1 / worst:.2f}"
        assert float(said[-1][1]["count0"]) > 1  # the count's cost, over 1
    checks = lambda x: dict(s, first=dict(s["first"], check_x=x), last=dict(s["last"], check_x=x))  # noqa: E731
    assert [k for k, _ in spec_sentences(dict(checks(1.1), c_clock=0.52, c_count=0.22), "es")][3:5] == [
        "spec_c_high",
        "spec_check_near",
    ]
    assert [k for k, _ in spec_sentences(dict(checks(2.4), c_clock=0.25, c_count=0.22), "en")][3:5] == [
        "spec_c_near",
        "spec_check_high",
    ]


# -- the sections ------------------------------------------------------------------------------------

FRESH = """
import json, sys
from app.main import create_view
from app.state import checkpoints
v = create_view("?lang=es")
watched = ("model.batch", "model.speculative", "app.sections.batch.logic", "app.sections.speculative.logic")
out = {"before": [m for m in watched if m in sys.modules], "draft_before": "draft" in checkpoints._loaded}
for s in v.sections:
    if s.key == "batch":
        s.ensure_built()
out["after_batch"] = [m for m in watched if m in sys.modules]
out["draft_after_batch"] = "draft" in checkpoints._loaded
for s in v.sections:
    if s.key == "speculative":
        s.ensure_built()
out["after_spec"] = [m for m in watched if m in sys.modules]
out["draft_after_spec"] = "draft" in checkpoints._loaded
print(json.dumps(out))
"""


def test_nothing_of_them_is_imported_or_loaded_before_they_open():
    out = in_fresh_python(FRESH)
    assert out["before"] == [] and not out["draft_before"]
    assert out["after_batch"] == ["model.batch", "app.sections.batch.logic"] and not out["draft_after_batch"]
    assert set(out["after_spec"]) == {
        "model.batch",
        "model.speculative",
        "app.sections.batch.logic",
        "app.sections.speculative.logic",
    }
    assert out["draft_after_spec"]


def test_the_sections_show_the_models_numbers():
    from app.main import create_view

    v = create_view("?lang=en&seed=5")
    batch, spec = (next(s for s in v.sections if s.key == k) for k in ("batch", "speculative"))
    assert not batch.built and not spec.built
    batch.card.collapsed = False  # opening the card builds it
    assert batch.built and batch.current.B == 8
    for _ in range(3):
        batch.stepper.step_button.clicks += 1
    c = batch.current
    assert c.steps == 3 and c.seeds[0] == 5
    m = c.memory()
    assert f"data-tensor='{m['tensor']}'" in batch.memory.object and m["tensor"] == 8 * m["row"]
    batch.size.value = 3  # the slider let go at 3: a new batch
    assert batch.current.B == 3 and batch.current.steps == 0
    spec.card.collapsed = False
    spec.greedy.value = True
    for _ in range(6):
        spec.stepper.step_button.clicks += 1
    assert spec.current.phase == "decide" and spec.current.same_as_own
    assert "data-same='True'" in spec.same.object and "speculative-checks" in spec.checks.object
    c = spec.current.counts
    assert f"data-rounds='{c.rounds}'" in spec.counts.object and c.rounds == 2
    v.session.settings.lang = "pt"
    assert spec.stepper.step_button.name == "Fase seguinte" and "Ronda 2 · 3" in spec.phase.object
    assert batch.stepper.step_button.name == "Avançar o batch"


def test_the_sections_show_the_position_tables_error():
    """Past the window, both sections show the lesson's IndexError, as the figure does, and go on after Reset."""
    from app.main import create_view

    v = create_view("?lang=es")
    for key, label in (("batch", "Reiniciar el lote"), ("speculative", "Reiniciar las rondas")):
        section = next(s for s in v.sections if s.key == key)
        section.ensure_built()
        while section.step():
            pass
        html = section.error.object
        assert f"data-testid='{key}-error' data-lesson='true'" in html and "La posición 65 no existe" in html
        assert "IndexError: index 64 is out of bounds for axis 0 with size 64" in html and "64 filas" in html
        assert section.stepper.reset_button.name == label
        section.stepper.reset_button.clicks += 1
        assert section.error.object == "" and section.step()
