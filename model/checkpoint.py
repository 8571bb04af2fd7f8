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

from .config import Config, param_shapes
from .tokenizer import Tokenizer

WEIGHTS_DIR = Path(__file__).resolve().parent / "weights"
WEIGHTS = WEIGHTS_DIR / "minigpt.npz"
TOKENIZER = WEIGHTS_DIR / "tokenizer.json"
METRICS = WEIGHTS_DIR / "metrics.json"

# Other checkpoints with the same tokenizer, each in its own folder beside the lesson's
# (weights + metrics.json, no tokenizer): loaded only when chosen, never at start.
CHECKPOINTS_DIR = Path(__file__).resolve().parent / "checkpoints"
VARIANTS = {
    "kv2": CHECKPOINTS_DIR / "kv2" / WEIGHTS.name,      # 2 key/value heads, each shared by 2 query heads
    "kv1": CHECKPOINTS_DIR / "kv1" / WEIGHTS.name,      # 1 key/value head for all 4 (multi-query)
    "draft": CHECKPOINTS_DIR / "draft" / WEIGHTS.name,  # 1 block of width 32: speculative decoding's draft
}
REBUILD = "Rebuild it with `python -m model.train` or restore it with `git checkout -- model/`."


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


def read_archive(path: Path) -> dict[str, np.ndarray]:
    if not path.is_file():
        raise CheckpointError(f"checkpoint not found: {path}. {REBUILD}")
    try:
        with np.load(path, allow_pickle=False) as npz:
            return {name: npz[name] for name in npz.files}
    except (zipfile.BadZipFile, ValueError, OSError, EOFError, KeyError, AttributeError) as e:
        raise CheckpointError(f"checkpoint is corrupt: {path} ({type(e).__name__}: {e}). {REBUILD}") from e


def read_config(path: Path, arrays: dict) -> Config:
    try:
        found = json.loads(str(arrays.pop("__config__")))
        if not isinstance(found, dict):
            raise ValueError(f"expected an object of numbers, found {type(found).__name__}")
        return Config(**found)
    except (KeyError, TypeError, ValueError) as e:
        raise CheckpointError(f"checkpoint has no valid config: {path} ({e}). {REBUILD}") from e


def load_weights(path) -> tuple[dict[str, np.ndarray], Config]:
    path = Path(path)
    arrays = read_archive(path)
    config = read_config(path, arrays)
    expected = param_shapes(config)
    missing = sorted(set(expected) - set(arrays))
    extra = sorted(set(arrays) - set(expected))
    if missing or extra:
        raise CheckpointError(f"checkpoint {path} does not match the model: missing {missing}, "
                              f"unexpected {extra}. {REBUILD}")
    for name, shape in expected.items():
        a = arrays[name]
        if a.shape != shape or a.dtype != np.float32:
            raise CheckpointError(f"checkpoint {path}: {name} is {a.dtype}{a.shape}, expected float32{shape}. {REBUILD}")
        if not np.all(np.isfinite(a)):
            raise CheckpointError(f"checkpoint {path}: {name} has NaN or infinite values. {REBUILD}")
    return {name: a.astype(np.float64) for name, a in arrays.items()}, config


def load_tokenizer(path=None) -> Tokenizer:
    """The tokenizer file, checked whole at load time: CheckpointError naming the file,
    what is wrong and how to fix it (never an error later, while encoding)."""
    path = Path(path or TOKENIZER)
    how = "Restore it with `git checkout -- model/weights/tokenizer.json` or rebuild it with `python -m model.train`."
    if not path.is_file():
        raise CheckpointError(f"tokenizer not found: {path}. {how}")
    try:
        return Tokenizer.from_dict(json.loads(path.read_text(encoding="utf-8")))
    except (ValueError, UnicodeDecodeError) as e:      # json.JSONDecodeError is a ValueError
        raise CheckpointError(f"tokenizer is corrupt: {path} ({type(e).__name__}: {e}). {how}") from e


def weights_path(weights=None) -> Path:
    """The lesson's checkpoint (None), a variant's by name, or the path given."""
    if weights is None:
        return WEIGHTS
    if isinstance(weights, str) and weights in VARIANTS:
        return VARIANTS[weights]
    return Path(weights)


def load_checkpoint(weights=None, tokenizer=None) -> tuple[dict[str, np.ndarray], Config, Tokenizer]:
    """(parameters, config, tokenizer), every file checked; `tokenizer` is a path or a Tokenizer."""
    path = weights_path(weights)
    params, config = load_weights(path)
    tok = tokenizer if isinstance(tokenizer, Tokenizer) else load_tokenizer(tokenizer)
    if tok.vocab_size != config.vocab_size:
        where = "the tokenizer given" if isinstance(tokenizer, Tokenizer) else f"tokenizer {tokenizer or TOKENIZER}"
        raise CheckpointError(
            f"{where} has {tok.vocab_size} tokens but checkpoint {path} expects {config.vocab_size}: "
            f"they do not belong together. Use the tokenizer the checkpoint was trained with.")
    return params, config, tok


def load_metrics(path=None) -> dict:
    """metrics.json of a checkpoint ({} if there is none); CheckpointError if it is not JSON."""
    path = Path(path or METRICS)
    if not path.is_file():
        return {}
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as e:
        raise CheckpointError(f"metrics file is corrupt: {path} ({e}). {REBUILD}") from e


def metrics_path(weights=None) -> Path:
    """metrics.json beside a checkpoint: the lesson's (None), a variant's by name, or beside the path given."""
    return weights_path(weights).with_name(METRICS.name)


def save_metrics(path, metrics: dict) -> None:
    """metrics.json as training writes it: UTF-8, indent 2, keys in their order, a final newline."""
    Path(path).write_text(json.dumps(metrics, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")


def update_metrics(path, key: str, value) -> dict:
    """Set one key of a metrics.json, every other key and its place kept (a new key goes at the
    end); -> the metrics written.

        update_metrics(metrics_path("kv2"), "kv_cache_drift", {...})
    """
    metrics = load_metrics(path)
    metrics[key] = value
    save_metrics(path, metrics)
    return metrics
