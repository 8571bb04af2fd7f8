"""A missing or corrupt checkpoint gives a clear error naming the file."""
import shutil

import numpy as np
import pytest

from model import CheckpointError, MiniGPT
from model.checkpoint import TOKENIZER, WEIGHTS, save_weights


def test_missing_file(tmp_path):
    with pytest.raises(CheckpointError, match="checkpoint not found: .*nothing.npz"):
        MiniGPT.load(tmp_path / "nothing.npz")
    with pytest.raises(CheckpointError, match="tokenizer not found"):
        MiniGPT.load(WEIGHTS, tmp_path / "nothing.json")


def test_truncated_file(tmp_path):
    bad = tmp_path / "bad.npz"
    bad.write_bytes(WEIGHTS.read_bytes()[:5000])
    with pytest.raises(CheckpointError, match="corrupt"):
        MiniGPT.load(bad)


def test_garbage_file(tmp_path):
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not a checkpoint at all")
    with pytest.raises(CheckpointError, match="corrupt"):
        MiniGPT.load(bad)


def test_wrong_shape_and_nan(tmp_path, gpt):
    params = dict(gpt.params)
    params["wpe"] = np.zeros((65, 64))
    save_weights(tmp_path / "w.npz", params, gpt.config)
    with pytest.raises(CheckpointError, match="wpe"):
        MiniGPT.load(tmp_path / "w.npz")
    params = {k: v.copy() for k, v in gpt.params.items()}
    params["h1.mlp.w1"][3, 3] = np.nan
    save_weights(tmp_path / "n.npz", params, gpt.config)
    with pytest.raises(CheckpointError, match="NaN"):
        MiniGPT.load(tmp_path / "n.npz")
    params = dict(gpt.params)
    del params["lnf.g"]
    save_weights(tmp_path / "m.npz", params, gpt.config)
    with pytest.raises(CheckpointError, match="missing \\['lnf.g'\\]"):
        MiniGPT.load(tmp_path / "m.npz")


def test_corrupt_tokenizer(tmp_path):
    bad = tmp_path / "tok.json"
    bad.write_text("{ not json", encoding="utf-8")
    with pytest.raises(CheckpointError, match="tokenizer is corrupt"):
        MiniGPT.load(WEIGHTS, bad)


def test_round_trip(tmp_path, gpt):
    save_weights(tmp_path / "w.npz", gpt.params, gpt.config)
    shutil.copy(TOKENIZER, tmp_path / "t.json")
    again = MiniGPT.load(tmp_path / "w.npz", tmp_path / "t.json")
    assert all(np.array_equal(again.params[k], gpt.params[k]) for k in gpt.params)


def test_stored_as_float32_computed_in_float64(tmp_path, gpt):
    with np.load(WEIGHTS) as npz:
        assert all(npz[k].dtype == np.float32 for k in npz.files if k != "__config__")
    assert all(p.dtype == np.float64 for p in gpt.params.values())
    assert WEIGHTS.stat().st_size < 600_000                    # half of 136,448 x 8 bytes, and a little


def test_saving_refuses_numbers_a_checkpoint_cannot_keep(tmp_path, gpt):
    from model.checkpoint import stored_precision
    params = {k: v.copy() for k, v in gpt.params.items()}
    params["wte"][0, 0] += 1e-12                               # not a float32 number any more
    with pytest.raises(ValueError, match="wte is not made of float32 numbers"):
        save_weights(tmp_path / "x.npz", params, gpt.config)
    save_weights(tmp_path / "x.npz", stored_precision(params), gpt.config)
