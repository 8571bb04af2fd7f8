"""Saving and loading the mini-GPT: weights (.npz), tokenizer (.json), metrics (.json).

The model computes in float64 and its 136,448 parameters are float64 in memory.
Each of them is a float32 number (training ends by rounding them, and measures
the loss after that), so the file stores them as float32: half the bytes the
reader's browser downloads, and the same numbers everywhere.

Loading checks everything a reader could trip on and says which file and what is
wrong: missing file, not a valid archive, missing or extra parameters, wrong
shapes or dtype, non-finite numbers, a tokenizer that does not match the model.
"""
from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np

from .gpt import Config, MiniGPT, param_shapes
from .tokenizer import Tokenizer

WEIGHTS_DIR = Path(__file__).resolve().parent / "weights"
WEIGHTS = WEIGHTS_DIR / "minigpt.npz"
TOKENIZER = WEIGHTS_DIR / "tokenizer.json"
METRICS = WEIGHTS_DIR / "metrics.json"


class CheckpointError(RuntimeError):
    """A checkpoint or tokenizer file is missing or unusable."""


def stored_precision(params: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The parameters rounded to float32 numbers, held in float64: what a checkpoint keeps."""
    return {name: np.asarray(a, dtype=np.float32).astype(np.float64) for name, a in params.items()}


def save_weights(path, params: dict[str, np.ndarray], config: Config) -> None:
    """Store float32-representable parameters as float32 (ValueError for any other number)."""
    arrays = {}
    for name, a in params.items():
        a32 = np.asarray(a, dtype=np.float32)
        if not np.array_equal(a32.astype(np.float64), np.asarray(a, dtype=np.float64), equal_nan=True):
            raise ValueError(f"{name} is not made of float32 numbers: round it with stored_precision() first")
        arrays[name] = a32
    arrays["__config__"] = np.array(json.dumps(config.to_dict()))
    with open(path, "wb") as f:
        np.savez(f, **arrays)


def load_weights(path) -> tuple[dict[str, np.ndarray], Config]:
    path = Path(path)
    how = "Rebuild it with `python -m model.train` or restore it with `git checkout -- model/weights`."
    if not path.is_file():
        raise CheckpointError(f"checkpoint not found: {path}. {how}")
    try:
        with np.load(path, allow_pickle=False) as npz:
            arrays = {name: npz[name] for name in npz.files}
    except (zipfile.BadZipFile, ValueError, OSError, EOFError, KeyError) as e:
        raise CheckpointError(f"checkpoint is corrupt: {path} ({type(e).__name__}: {e}). {how}") from e
    try:
        config = Config(**json.loads(str(arrays.pop("__config__"))))
    except (KeyError, TypeError, ValueError) as e:
        raise CheckpointError(f"checkpoint has no valid config: {path} ({e}). {how}") from e
    expected = param_shapes(config)
    missing = sorted(set(expected) - set(arrays))
    extra = sorted(set(arrays) - set(expected))
    if missing or extra:
        raise CheckpointError(f"checkpoint {path} does not match the model: missing {missing}, unexpected {extra}. {how}")
    for name, shape in expected.items():
        a = arrays[name]
        if a.shape != shape or a.dtype != np.float32:
            raise CheckpointError(f"checkpoint {path}: {name} is {a.dtype}{a.shape}, expected float32{shape}. {how}")
        if not np.all(np.isfinite(a)):
            raise CheckpointError(f"checkpoint {path}: {name} has NaN or infinite values. {how}")
    return {name: a.astype(np.float64) for name, a in arrays.items()}, config


def load_tokenizer(path=None) -> Tokenizer:
    path = Path(path or TOKENIZER)
    if not path.is_file():
        raise CheckpointError(f"tokenizer not found: {path}. Rebuild it with `python -m model.train`.")
    try:
        return Tokenizer.load(path)
    except (ValueError, KeyError, TypeError, UnicodeDecodeError) as e:
        raise CheckpointError(f"tokenizer is corrupt: {path} ({type(e).__name__}: {e}).") from e


def load_model(weights=None, tokenizer=None) -> MiniGPT:
    params, config = load_weights(weights or WEIGHTS)
    tok = tokenizer if isinstance(tokenizer, Tokenizer) else load_tokenizer(tokenizer)
    if tok.vocab_size != config.vocab_size:
        raise CheckpointError(
            f"tokenizer has {tok.vocab_size} tokens but the checkpoint expects {config.vocab_size}")
    return MiniGPT(params, config, tok)


def load_metrics(path=None) -> dict:
    path = Path(path or METRICS)
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
