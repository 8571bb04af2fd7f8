"""A missing or corrupt checkpoint gives a clear error naming the file."""

import json
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
    assert WEIGHTS.stat().st_size < 600_000  # half of 136,448 x 8 bytes, and a little


def test_saving_refuses_numbers_a_checkpoint_cannot_keep(tmp_path, gpt):
    from model.checkpoint import stored_precision

    params = {k: v.copy() for k, v in gpt.params.items()}
    params["wte"][0, 0] += 1e-12  # not a float32 number any more
    with pytest.raises(ValueError, match="wte is not made of float32 numbers"):
        save_weights(tmp_path / "x.npz", params, gpt.config)
    save_weights(tmp_path / "x.npz", stored_precision(params), gpt.config)


# -- every malformed tokenizer file is refused at load time, naming the file and the fix ----


def tokenizer_data() -> dict:
    return json.loads(TOKENIZER.read_text(encoding="utf-8"))


def edited(change) -> dict:
    data = tokenizer_data()
    change(data)
    return data


MALFORMED = {
    "an empty list": [],
    "null": None,
    "a string": "char-bpe",
    "a number": 512,
    "integer merges": edited(lambda d: d.update(merges=[[1, 2]] + d["merges"][1:])),
    "a merge of three": edited(lambda d: d["merges"][5].append("x")),
    "a merge of one": edited(lambda d: d["merges"].__setitem__(5, ["a"])),
    "a merge that is a string": edited(lambda d: d["merges"].__setitem__(5, "ab")),
    "an empty token in a merge": edited(lambda d: d["merges"].__setitem__(5, ["", "a"])),
    "a merge of unknown tokens": edited(lambda d: d["merges"].__setitem__(5, ["qqq", "a"])),
    "a repeated merge": edited(lambda d: d["merges"].append(d["merges"][0])),
    "merges not a list": edited(lambda d: d.update(merges={"a": "b"})),
    "a number in the alphabet": edited(lambda d: d["alphabet"].__setitem__(3, 7)),
    "null in the alphabet": edited(lambda d: d["alphabet"].__setitem__(3, None)),
    "two characters in one entry": edited(lambda d: d["alphabet"].__setitem__(3, "ab")),
    "a duplicated character": edited(lambda d: d["alphabet"].__setitem__(3, d["alphabet"][4])),
    "alphabet not a list": edited(lambda d: d.update(alphabet="abc")),
    "no merges": edited(lambda d: d.pop("merges")),
    "no alphabet": edited(lambda d: d.pop("alphabet")),
    "no kind": edited(lambda d: d.pop("kind")),
    "another kind": edited(lambda d: d.update(kind="byte-bpe")),
    "another version": edited(lambda d: d.update(version=2)),
}


@pytest.mark.parametrize("what", list(MALFORMED))
def test_malformed_tokenizer_is_refused_at_load(tmp_path, what):
    bad = tmp_path / "tok.json"
    bad.write_text(json.dumps(MALFORMED[what]), encoding="utf-8")
    with pytest.raises(CheckpointError, match="tokenizer is corrupt: .*tok.json .*Restore it with"):
        MiniGPT.load(WEIGHTS, bad)


def test_tokenizer_of_another_size_is_refused_at_load(tmp_path):
    bad = tmp_path / "tok.json"
    bad.write_text(json.dumps(edited(lambda d: d["merges"].pop())), encoding="utf-8")
    with pytest.raises(
        CheckpointError,
        match=r"tokenizer .*tok.json has 511 tokens but checkpoint "
        r".*minigpt.npz expects 512.*Use the tokenizer the checkpoint",
    ):
        MiniGPT.load(WEIGHTS, bad)


def test_the_committed_tokenizer_passes_the_checks_and_round_trips():
    from model.tokenizer import Tokenizer

    tok = Tokenizer.from_dict(tokenizer_data())
    assert tok.to_json() == TOKENIZER.read_text(encoding="utf-8")


# -- weights -------------------------------------------------------------------------------------


def saved_with_config(tmp_path, gpt, config_json: str):
    path = tmp_path / "c.npz"
    arrays = {k: v.astype(np.float32) for k, v in gpt.params.items()}
    with open(path, "wb") as f:
        np.savez(f, __config__=np.array(config_json), **arrays)
    return path


@pytest.mark.parametrize(
    "config_json",
    [
        "[2, 64]",
        "null",
        '"small"',
        '{"n_heads": 3}',
        '{"n_kv_heads": 3}',
        '{"d_model": 64.0}',
        '{"n_layers": -2}',
        '{"colour": 1}',
        "{not json",
    ],
)
def test_checkpoint_with_a_bad_config_is_refused(tmp_path, gpt, config_json):
    path = saved_with_config(tmp_path, gpt, config_json)
    with pytest.raises(CheckpointError, match="checkpoint has no valid config: .*c.npz .*Rebuild it"):
        MiniGPT.load(path)


def test_the_lessons_checkpoint_is_written_byte_for_byte_again(tmp_path):
    """Config.n_kv_heads did not change what a checkpoint of the lesson's model holds: its
    file (written before the key existed) loads, and saving it gives the same bytes."""
    from model.checkpoint import load_weights

    params, config = load_weights(WEIGHTS)
    assert config.n_kv_heads == config.n_heads == 4
    save_weights(tmp_path / "again.npz", params, config)
    assert (tmp_path / "again.npz").read_bytes() == WEIGHTS.read_bytes()


def test_shared_heads_checkpoint_round_trips(tmp_path):
    from model import Config
    from model.checkpoint import stored_precision

    gpt = MiniGPT.random(Config(n_kv_heads=1), seed=3)
    save_weights(tmp_path / "w.npz", stored_precision(gpt.params), gpt.config)
    again = MiniGPT.load(tmp_path / "w.npz")
    assert again.config.n_kv_heads == 1 and again.params["h0.attn.wk"].shape == (64, 16)


def test_corrupt_metrics_name_the_file(tmp_path):
    from model.checkpoint import load_metrics

    bad = tmp_path / "metrics.json"
    bad.write_text("{ no", encoding="utf-8")
    with pytest.raises(CheckpointError, match="metrics file is corrupt: .*metrics.json"):
        load_metrics(bad)
    assert load_metrics(tmp_path / "none.json") == {}


def test_checkpoint_without_its_config_or_with_pickles_is_refused(tmp_path, gpt):
    arrays = {k: v.astype(np.float32) for k, v in gpt.params.items()}
    np.savez(tmp_path / "noconfig.npz", **arrays)
    with pytest.raises(CheckpointError, match="no valid config: .*noconfig.npz"):
        MiniGPT.load(tmp_path / "noconfig.npz")
    np.savez(tmp_path / "pickle.npz", __config__=np.array([{"n_layers": 2}], dtype=object), **arrays)
    with pytest.raises(CheckpointError, match="corrupt: .*pickle.npz"):
        MiniGPT.load(tmp_path / "pickle.npz")
