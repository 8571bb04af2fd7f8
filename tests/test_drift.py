"""What metrics.json records beyond training: the quantized cache's drift over held-out windows
(model/drift.py) and the held-out loss over training seeds (model/seeds.py), and that writing
them keeps every other key as it was."""

import json
import shutil

import pytest

from model import MiniGPT
from model.checkpoint import METRICS, load_metrics, metrics_path, update_metrics
from model.drift import CHECKPOINTS, FORMATS, KEY, held_out_windows
from model.quantize import first_departure, logit_drift
from model.train import split_corpus


def test_held_out_windows_are_the_held_out_tokens_in_order(gpt, corpus_text):
    windows = held_out_windows(corpus_text, gpt.tokenizer, 64)
    held = gpt.tokenizer.encode(split_corpus(corpus_text, 0.05)[1])
    assert windows.shape == (len(held) // 64, 64) == (98, 64)
    assert windows.ravel().tolist() == held[: 98 * 64]


@pytest.mark.parametrize("name", list(CHECKPOINTS))
def test_committed_drift_is_a_distribution_over_the_held_out_windows(name):
    drift = load_metrics(metrics_path(CHECKPOINTS[name]))[KEY]
    assert list(drift) == list(FORMATS)
    for m in drift.values():
        assert m["windows"] == 98 and m["positions"] == 64 and "held-out" in m["text"]
        assert 0 < m["median"] <= m["p90"] <= m["max"]
        assert len(m["first_departure"]["positions"]) == len(m["first_departure"]["seeds"]) == 10
    medians = [drift[fmt]["median"] for fmt in FORMATS]
    assert medians == sorted(medians) and medians[0] < 0.01 < medians[2]  # fewer bits, more drift


@pytest.mark.parametrize("name", list(CHECKPOINTS))
def test_committed_drift_max_is_measured_again(name, corpus_text):
    """The window each format's max came from, measured again: the same number."""
    gpt = MiniGPT.load(CHECKPOINTS[name])
    drift = load_metrics(metrics_path(CHECKPOINTS[name]))[KEY]
    windows = held_out_windows(corpus_text, gpt.tokenizer, 64)
    for fmt, m in drift.items():
        worst = logit_drift(gpt, list(windows[m["max_window"]]), fmt).max()
        assert worst == pytest.approx(m["max"], rel=1e-3), fmt
    seeds, positions = drift["int4"]["first_departure"]["seeds"], drift["int4"]["first_departure"]["positions"]
    assert first_departure(gpt, "La Nela", 62, "int4", seed=seeds[0]) == positions[0]


@pytest.mark.parametrize("name", list(CHECKPOINTS))
def test_committed_seed_spread_starts_with_the_committed_run(name):
    m = load_metrics(metrics_path(CHECKPOINTS[name]))
    spread = m["held_out_loss_seeds"]
    assert spread["seeds"][0] == m["train_config"]["seed"] and len(set(spread["seeds"])) == len(spread["seeds"]) >= 2
    assert spread["held_out_loss"][0] == m["held_out_loss"] and spread["train_loss"][0] == m["train_loss"]
    assert all(t < h for t, h in zip(spread["train_loss"], spread["held_out_loss"]))


def test_update_metrics_appends_and_keeps_the_rest_byte_for_byte(tmp_path):
    path = tmp_path / "metrics.json"
    shutil.copy(METRICS, path)
    before = path.read_text(encoding="utf-8")
    update_metrics(path, "held_out_loss", json.loads(before)["held_out_loss"])  # same value: same bytes
    assert path.read_text(encoding="utf-8") == before
    update_metrics(path, "new_key", {"a": 1})
    assert path.read_text(encoding="utf-8") == before[:-3] + ',\n  "new_key": {\n    "a": 1\n  }\n}\n'
    assert list(load_metrics(path))[-1] == "new_key"


def test_a_seed_run_of_another_recipe_is_refused(tmp_path, corpus_text):
    from model.seeds import run_metrics

    committed = load_metrics(metrics_path("kv2"))
    out = tmp_path / "kv2-s7"
    out.mkdir()
    other = {**committed, "train_config": {**committed["train_config"], "seed": 7, "steps": 10}}
    (out / "metrics.json").write_text(json.dumps(other), encoding="utf-8")
    with pytest.raises(ValueError, match="not trained with the committed recipe and seed 7"):
        run_metrics(corpus_text, committed, 7, out)
    (out / "metrics.json").write_text(
        json.dumps({**other, "train_config": {**committed["train_config"], "seed": 7}}), encoding="utf-8"
    )
    assert run_metrics(corpus_text, committed, 7, out)["train_config"]["seed"] == 7
