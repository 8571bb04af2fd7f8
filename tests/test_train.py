"""Training: the backward pass is right, loss falls, same seed same result,
and the committed checkpoint meets the held-out target."""

import json
import subprocess
import sys

import numpy as np
import pytest

from model import Config, MiniGPT
from model.checkpoint import load_metrics
from model.gpt import init_params
from model.train import TrainConfig, all_windows, evaluate, learning_rate, loss_and_grads, split_corpus, train

TINY = Config(n_layers=2, d_model=8, n_heads=2, d_ff=12, vocab_size=11, n_ctx=6)


def tiny(n_kv: int) -> Config:
    """Four query heads of 2 numbers, sharing n_kv key/value heads."""
    return Config(n_layers=2, d_model=8, n_heads=4, d_ff=12, vocab_size=11, n_ctx=6, n_kv_heads=n_kv)


@pytest.mark.parametrize("cfg", [TINY, tiny(4), tiny(2), tiny(1)], ids=["2 heads", "kv 4", "kv 2", "kv 1"])
def test_backward_matches_finite_differences(cfg):
    rng = np.random.default_rng(0)
    params = {k: v + rng.normal(0, 0.3, v.shape) for k, v in init_params(cfg, 0).items()}
    batch = rng.integers(0, 11, (3, 6))
    _, grads = loss_and_grads(params, cfg, batch)
    for name, a in params.items():
        num = np.zeros_like(a)
        for idx in np.ndindex(a.shape):
            old = a[idx]
            a[idx] = old + 1e-6
            up, _ = loss_and_grads(params, cfg, batch, need_grads=False)
            a[idx] = old - 1e-6
            down, _ = loss_and_grads(params, cfg, batch, need_grads=False)
            a[idx] = old
            num[idx] = (up - down) / 2e-6
        assert np.abs(num - grads[name]).max() <= 1e-6 * max(1.0, np.abs(num).max()), name


@pytest.mark.parametrize("cfg", [TINY, tiny(2), tiny(1)], ids=["2 heads", "kv 2", "kv 1"])
def test_training_loss_is_the_model_loss(cfg):
    rng = np.random.default_rng(1)
    params = init_params(cfg, 1)
    batch = rng.integers(0, 11, (2, 6))
    loss, _ = loss_and_grads(params, cfg, batch, need_grads=False)
    gpt = MiniGPT(params, cfg)
    ref = []
    for row in batch:
        z = gpt.forward(row[:-1])
        logp = z - z.max(-1, keepdims=True)
        logp -= np.log(np.exp(logp).sum(-1, keepdims=True))
        ref.append(-logp[np.arange(5), row[1:]].mean())
    assert abs(loss - np.mean(ref)) < 1e-12


def test_schedule_warms_up_then_decays():
    tc = TrainConfig()
    lrs = [learning_rate(s, tc) for s in range(tc.steps)]
    assert lrs[0] < lrs[50] < lrs[99] == pytest.approx(tc.lr)
    assert lrs[100] > lrs[1000] > lrs[-1] == pytest.approx(tc.min_lr)


def test_held_out_part_starts_at_a_paragraph():
    text = "uno\n\n" * 100
    train_text, held = split_corpus(text, 0.05)
    assert train_text + held == text and train_text.endswith("\n\n")
    assert 0 < len(held) <= 0.05 * len(text)


def test_windows_cover_each_prediction_once():
    w = all_windows(np.arange(200), 65)
    assert w.shape == (3, 65) and w[1, 0] == 64 and w[2, -1] == 192


SMALL = TrainConfig(steps=60, batch=4, warmup=5, lr=3e-3, min_lr=3e-4, weight_decay=0.1)


def test_loss_falls_and_same_seed_same_result(corpus_text):
    text = corpus_text[:40_000]
    cfg = Config()
    a = train(text, None, SMALL, cfg, log=lambda *_: None)
    h = a["history"]
    assert np.mean(h[:5]) > 6.0  # log 512 = 6.24: guessing
    assert np.mean(h[-10:]) < np.mean(h[:5]) - 0.6  # it learns
    b = train(text, None, SMALL, cfg, log=lambda *_: None)
    assert a["tokenizer"].merges == b["tokenizer"].merges
    assert all(np.array_equal(a["params"][k], b["params"][k]) for k in a["params"])


def test_cli_writes_a_loadable_checkpoint(corpus_text, tmp_path):
    corpus = tmp_path / "novel.txt"
    corpus.write_text(corpus_text[:30_000], encoding="utf-8")
    out = tmp_path / "ckpt"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "model.train",
            "--corpus",
            str(corpus),
            "--out",
            str(out),
            "--steps",
            "3",
            "--batch",
            "2",
        ],
        check=True,
        capture_output=True,
    )
    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["n_params"] == 136_448 and "held_out_loss" in metrics
    gpt = MiniGPT.load(out / "minigpt.npz", out / "tokenizer.json")
    ids = gpt.tokenizer.encode("La Nela")
    assert gpt.forward(ids).shape == (len(ids), 512)


def test_cli_says_where_the_corpus_is_missing(tmp_path):
    r = subprocess.run(
        [sys.executable, "-m", "model.train", "--corpus", str(tmp_path / "none.txt"), "--out", str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 2 and "corpus not found" in r.stderr


def test_committed_checkpoint_meets_the_held_out_target():
    m = load_metrics()
    assert m["held_out_loss"] <= 3.75
    assert m["train_loss"] < m["held_out_loss"]
    assert m["n_params"] == 136_448


def test_committed_checkpoint_loss_is_what_metrics_say(gpt, corpus_text):
    m = load_metrics()
    assert m["corpus_sha256"] == __import__("hashlib").sha256(corpus_text.encode()).hexdigest()
    _, held = split_corpus(corpus_text, m["train_config"]["held_out"])
    loss = evaluate(gpt.params, gpt.config, np.array(gpt.tokenizer.encode(held)))
    assert loss == pytest.approx(m["held_out_loss"], abs=1e-4)
    assert loss <= 3.75


def test_cli_reuses_a_tokenizer_and_shares_heads(corpus_text, tmp_path):
    from model.checkpoint import TOKENIZER

    corpus = tmp_path / "novel.txt"
    corpus.write_text(corpus_text[:30_000], encoding="utf-8")
    out = tmp_path / "kv1"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "model.train",
            "--corpus",
            str(corpus),
            "--out",
            str(out),
            "--tokenizer",
            str(TOKENIZER),
            "--kv-heads",
            "1",
            "--steps",
            "2",
            "--batch",
            "2",
        ],
        check=True,
        capture_output=True,
    )
    assert sorted(p.name for p in out.iterdir()) == ["metrics.json", "minigpt.npz"]  # no tokenizer copy
    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["n_params"] == 124_160 and metrics["config"]["n_kv_heads"] == 1
    assert metrics["tokenizer_sha256"] == __import__("hashlib").sha256(TOKENIZER.read_bytes()).hexdigest()
    assert MiniGPT.load(out / "minigpt.npz").config.n_kv_heads == 1
    r = subprocess.run(
        [sys.executable, "-m", "model.train", "--corpus", str(corpus), "--out", str(out), "--kv-heads", "3"],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 2 and "n_heads 4 is not a multiple of n_kv_heads 3" in r.stderr


VARIANTS = {
    "kv2": (Config(n_kv_heads=2), 128_256),
    "kv1": (Config(n_kv_heads=1), 124_160),
    "draft": (Config(n_layers=1, d_model=32, n_heads=2, d_ff=128), 31_072),
}


@pytest.mark.parametrize("name", list(VARIANTS))
def test_committed_variant_is_what_its_metrics_say(name, corpus_text, gpt):
    """Same recipe, tokenizer and held-out part as the lesson's checkpoint; its held-out loss
    measured again on the stored numbers."""
    from model.checkpoint import TOKENIZER
    from model.checkpoint import VARIANTS as PATHS

    model = MiniGPT.load(name)
    cfg, n_params = VARIANTS[name]
    m = load_metrics(PATHS[name].with_name("metrics.json"))
    assert model.config == cfg and model.n_params() == m["n_params"] == n_params
    assert m["tokenizer_sha256"] == __import__("hashlib").sha256(TOKENIZER.read_bytes()).hexdigest()
    assert m["train_config"] == load_metrics()["train_config"]
    assert model.tokenizer.merges == gpt.tokenizer.merges
    _, held = split_corpus(corpus_text, m["train_config"]["held_out"])
    loss = evaluate(model.params, model.config, np.array(model.tokenizer.encode(held)))
    assert loss == pytest.approx(m["held_out_loss"], abs=1e-4)
