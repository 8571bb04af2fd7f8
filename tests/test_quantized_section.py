"""The quantized weights' section without a browser (app/sections/quantized): its numbers are model.wquant's
(every matrix's error, bits and bytes, the greedy texts, agreement and acceptance measured in the page
equal to the committed table), the committed table is what `python -m model.wquant --write` writes,
the schemes a browser may send (one declaration), and the section built only when opened."""

import logging
import os
from pathlib import Path

import numpy as np
import pytest
from bokeh.document import Document

from app import intake
from app.sections.quantized.logic import (
    SCHEME_NAMES,
    AgreementLab,
    WqChoice,
    activation_facts,
    committed,
    committed_rows,
    compare,
    first_difference,
    full_text,
    is_measured_model,
    matrix_rows,
    mean_error,
    prompts,
    same_as_committed,
    sizes,
    weight_outliers,
)
from model import wquant
from tests.fresh import imported_as_it_opens, in_fresh_loop

ROOT = Path(__file__).resolve().parents[1]


def test_the_schemes_are_model_wquants():
    assert SCHEME_NAMES == tuple(wquant.SCHEMES) and WqChoice.param.scheme.objects == list(wquant.SCHEMES)
    assert [r["scheme"] for r in committed()["rows"]] == [wquant.REFERENCE, *wquant.SCHEMES]


@pytest.mark.parametrize("scheme", SCHEME_NAMES)
def test_every_matrix_error_bits_and_bytes_are_model_wquants(gpt, scheme):
    rows, errors, stats = matrix_rows(gpt, scheme), wquant.matrix_errors(gpt, scheme), wquant.weight_stats(gpt)
    assert [r["matrix"] for r in rows] == list(errors) == [s["matrix"] for s in stats]
    assert all(r["error"] == errors[r["matrix"]] for r in rows)
    assert all(r["max_sigmas"] == s["max_sigmas"] for r, s in zip(rows, stats))
    assert sizes(gpt)[scheme] == wquant.checkpoint_bytes(gpt, scheme)
    row = committed_rows()[scheme]  # what python -m model.wquant --write measured, on the same checkpoint
    worst, median = mean_error(rows)
    assert (worst, median) == pytest.approx((row["worst_error"], row["median_error"]), rel=1e-12)
    assert (
        row["bytes"] == sizes(gpt)[scheme]["total"] and row["bits_per_weight"] == sizes(gpt)[scheme]["bits_per_weight"]
    )


def test_the_committed_numbers_are_this_checkpoints(gpt):
    c = committed()
    assert is_measured_model(gpt) and c["n_new"] == gpt.config.n_ctx - 8 and len(c["prompts"]) == 8
    assert [{**s, "shape": list(s["shape"])} for s in wquant.weight_stats(gpt)] == c["weights"]
    assert (
        committed_rows()[wquant.REFERENCE]["bytes"]
        == wquant.checkpoint_bytes(gpt, wquant.REFERENCE)["total"]
        == 545_792
    )
    w = weight_outliers(matrix_rows(gpt, "nf4"))
    assert w["beyond"] == 0 and w["matrix"] == "h1.attn.wk" and 4.9 < w["max_sigmas"] < 5.0  # docs/chapter.md
    a = activation_facts()
    assert a["outliers"] == {} and a["windows"] == 98 and 1.8 < a["low"] < a["high"] < 2.1
    assert wquant.dump_measured(c) == wquant.MEASURED.read_text(encoding="utf-8")  # written as the command writes it


def test_the_committed_prompts_are_the_held_out_ones(gpt):
    corpus = Path(os.environ.get("MARIANELA", "/nonexistent"))
    if not corpus.is_file():
        pytest.skip("MARIANELA: the novel is not here")
    from model.wquant import held_out_ids, held_out_loss, held_out_prompts

    held = held_out_ids(gpt.tokenizer, corpus.read_text(encoding="utf-8"))
    assert held_out_prompts(held) == prompts()
    row = committed_rows()["int8-row"]
    assert held_out_loss(wquant.quantized_model(gpt, "int8-row"), held) == pytest.approx(row["held_out_loss"], abs=1e-9)


@pytest.mark.parametrize("scheme", ["int8-tensor", "nf4"])
def test_the_page_measures_the_committed_agreement_and_acceptance(gpt, scheme):
    """The lab, prompt by prompt, sums to model.wquant's agreement and acceptance over all 8 prompts:
    the committed row."""
    lab = AgreementLab(gpt, scheme)
    while lab.advance():
        pass
    s, row = lab.totals(), committed_rows()[scheme]
    model = wquant.quantized_model(gpt, scheme)
    texts = wquant.greedy_texts(gpt, prompts(), 56)
    a = wquant.agreement(model, texts, [8] * 8)
    acc = wquant.acceptance(gpt, model, prompts(), 56, 4)
    assert (s["agree"], s["total"], s["accepted"], s["tested"]) == (
        a["agree"],
        a["total"],
        acc["accepted"],
        acc["tested"],
    )
    assert same_as_committed(s, scheme) and s["prompts"] == 8 and s["rate"] == row["agreement"]
    assert [full_text(gpt, i) for i in range(8)] == texts


def test_the_texts_and_where_they_part(gpt):
    c = compare(gpt, "int4-tensor", 0)
    model = wquant.quantized_model(gpt, "int4-tensor")
    assert (
        c["full"] == wquant.greedy_texts(gpt, [prompts()[0]], 56)[0]
        and c["quant"] == wquant.greedy_texts(model, [prompts()[0]], 56)[0]
    )
    j = c["first"]
    assert j is not None and c["full"][8 : 8 + j] == c["quant"][8 : 8 + j] and c["full"][8 + j] != c["quant"][8 + j]
    assert c["agree"][j] is False  # where they part, the quantized model disagreed given the same prefix
    mask = wquant.agreement(model, [c["full"]], [8])["masks"][0]
    assert c["agree"] == [bool(x) for x in mask] and len(c["agree"]) == 56
    assert first_difference([1, 2, 3], [1, 2, 3]) is None and first_difference([1, 2], [1, 3]) == 1
    assert first_difference([1, 2], [1, 2, 3]) == 2


@pytest.mark.parametrize("bad", ["int2-row", "float32", "NF4", "", None, 4, "int8-row "])
def test_only_the_declared_schemes(bad):
    with pytest.raises(ValueError):
        WqChoice(scheme=bad)
    assert intake.refusal(WqChoice.param.scheme, bad) is not None


@pytest.mark.parametrize("bad", [0, 9, -1, "1", 1.5, None])
def test_only_the_declared_prompts(bad):
    with pytest.raises(ValueError):
        WqChoice(prompt=bad)
    assert intake.refusal(WqChoice.param.prompt, bad) is not None


def opened(lang="en"):
    from app.main import create_view

    view = create_view(f"?lang={lang}")
    s = next(x for x in view.sections if x.key == "quantized")
    s.card.collapsed = False
    return view, s


def test_the_select_is_the_declaration_and_a_forged_scheme_is_refused(caplog):
    caplog.set_level(logging.WARNING, logger="app.intake")
    view, s = opened()
    doc = Document()
    view.layout.server_doc(doc)
    assert list(s.scheme.options) == list(SCHEME_NAMES)
    model = next(m for m, _p in s.scheme._models.values() if m.document is doc)
    for forged in ("int2-row", "float32", 3, None, "x" * 100):
        intake.apply_patch(
            doc, {"events": [{"kind": "ModelChanged", "model": {"id": model.id}, "attr": "value", "new": forged}]}
        )
        assert s.choice.scheme == "int4-row" and "data-scheme='int4-row'" in s.matrices.object
    assert sum(intake.REFUSED in r.getMessage() for r in caplog.records) == 5
    patch = {"events": [{"kind": "ModelChanged", "model": {"id": model.id}, "attr": "value", "new": "nf4"}]}
    assert intake.apply_patch(doc, patch) == 1
    assert s.choice.scheme == "nf4" and "data-scheme='nf4'" in s.matrices.object


def test_the_section_follows_the_scheme_and_speaks_every_language(gpt):
    view, s = opened("es")
    assert "data-testid='quantized-matrices' data-scheme='int4-row'" in s.matrices.object
    assert "data-chosen='int4-row'" in s.schemes.object and "<tr class='current'>" in s.schemes.object
    assert "Sin pesos atípicos" in s.outliers.object and "data-weights='0'" in s.outliers.object
    assert "data-acts='0'" in s.outliers.object
    s.choice.scheme = "int8-group32"
    worst = max(wquant.matrix_errors(gpt, "int8-group32").values())
    assert f"data-worst='{worst!r}'" in s.matrices.object and "int8-group32" in s.texts.object
    s.choice.prompt = 3
    c = compare(gpt, "int8-group32", 2)
    first = "" if c["first"] is None else c["first"] + 1
    assert f"data-prompt='3' data-first='{first}'" in s.texts.object
    in_fresh_loop(s.run())
    assert "data-same='True'" in s.measured.object and "data-state='done'" in s.status.object
    assert "Hecho: int8-group32, 8 prompts medidos." in s.status.object
    view.session.settings.lang = "pt"
    assert "aqui, no seu navegador" in s.measured.object and s.scheme.name == "Esquema"
    view.session.settings.lang = "en"
    assert "Every scheme, side by side" in s.schemes.object and "No outlier weights" in s.outliers.object
    s.choice.scheme = "nf4"  # another scheme: what was measured for the last one is gone
    assert s.lab is None and s.measured.object == "" and s.status.object == ""


def test_nothing_of_it_is_imported_before_it_opens():
    out = imported_as_it_opens("quantized", ("model.wquant", "app.sections.quantized.logic"))
    assert out == {"before": [], "built_before": False, "after": ["model.wquant", "app.sections.quantized.logic"]}


def test_the_weights_sigmas_are_measured_not_copied(gpt):
    """The outlier sentence reads the model in use: a weight made 8 sigma shows up."""
    from model import MiniGPT

    params = {k: np.array(v) for k, v in gpt.params.items()}
    w = params["h0.attn.wq"]
    w[0, 0] = 8 * w.std() * 1.2
    other = MiniGPT(params, gpt.config, gpt.tokenizer)
    out = weight_outliers(matrix_rows(other, "int8-row"))
    assert out["beyond"] >= 1 and out["matrix"] == "h0.attn.wq" and not is_measured_model(other)
