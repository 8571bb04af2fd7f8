"""The spread over training runs: each committed recipe trained again with other seeds.

    MARIANELA=path/to/marianela.txt python -m model.seeds --out /tmp/seeds --seeds 1879 1880

For the lesson's model (4 key/value heads), kv2 and kv1: trains every run of OUT
that is missing (OUT/kv4-s1879, OUT/kv2-s1879, ...; one at a time, about 3-6
minutes each on 2 cores), with the committed checkpoint's recipe, tokenizer and
held-out part and only the seed changed (a run already in OUT, with its
metrics.json, is reused, so the runs can also be made with `python -m model.train
--seed S --out OUT/kv2-sS --kv-heads 2 --tokenizer model/weights/tokenizer.json`).
The extra checkpoints stay in OUT; the committed ones are not replaced. Then it
writes into each committed metrics.json, its other keys kept:

    "held_out_loss_seeds": {"seeds": [1878, 1879, 1880], "held_out_loss": [...], "train_loss": [...]}

the committed checkpoint's seed and losses first.
"""
from __future__ import annotations

import argparse
import hashlib
import sys
from dataclasses import replace
from pathlib import Path

from .checkpoint import TOKENIZER, load_metrics, load_tokenizer, metrics_path, update_metrics
from .config import Config
from .threads import one_blas_thread
from .train import TrainConfig, corpus_argument, read_corpus, train

RUNS = {"kv4": None, "kv2": "kv2", "kv1": "kv1"}      # tag of a run -> the committed checkpoint it repeats
KEY = "held_out_loss_seeds"


def recipe(committed: dict, seed: int) -> tuple[Config, TrainConfig]:
    """The committed checkpoint's architecture and training settings, with another seed."""
    return Config(**committed["config"]), replace(TrainConfig(**committed["train_config"]), seed=seed)


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def same_tokenizer(out: Path, m: dict) -> bool:
    """The run's tokenizer is the committed one: learned again (its file in `out`) or reused
    (its hash in metrics.json)."""
    learned = out / TOKENIZER.name
    return (sha256(learned) if learned.is_file() else m.get("tokenizer_sha256")) == sha256(TOKENIZER)


def run_metrics(corpus: str, committed: dict, seed: int, out: Path, log=print) -> dict:
    """metrics.json of one run: read from `out` if there, else trained (and written) now.
    ValueError if a run found there was made with another recipe, corpus or tokenizer."""
    if not (out / "metrics.json").is_file():
        cfg, tc = recipe(committed, seed)
        train(corpus, out, tc, cfg, log=log, tokenizer=load_tokenizer())
    m = load_metrics(out / "metrics.json")
    same = {k: committed[k] for k in ("config", "corpus_sha256", "held_out")}
    if ({k: m[k] for k in same} != same or m["train_config"] != {**committed["train_config"], "seed": seed}
            or not same_tokenizer(out, m)):
        raise ValueError(f"{out} was not trained with the committed recipe and seed {seed}")
    return m


def spread(committed: dict, runs: list[dict]) -> dict:
    """The key written: seeds and losses, the committed checkpoint's first."""
    every = [committed] + runs
    return {"seeds": [m["train_config"]["seed"] for m in every],
            "held_out_loss": [m["held_out_loss"] for m in every],
            "train_loss": [m["train_loss"] for m in every]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    corpus_argument(ap)
    ap.add_argument("--out", type=Path, required=True, help="where the extra runs are (or go)")
    ap.add_argument("--seeds", type=int, nargs="+", required=True, help="seeds other than the committed one")
    ap.add_argument("--recipes", nargs="+", choices=list(RUNS), default=list(RUNS), help="which (default: all three)")
    ap.add_argument("--no-write", action="store_true", help="print the losses, leave metrics.json as it is")
    args = ap.parse_args(argv)
    corpus = read_corpus(args.corpus)
    if corpus is None:
        return 2
    one_blas_thread()
    for tag in args.recipes:
        which = RUNS[tag]
        committed = load_metrics(metrics_path(which))
        runs = [run_metrics(corpus, committed, s, args.out / f"{tag}-s{s}") for s in args.seeds]
        value = spread(committed, runs)
        losses = value["held_out_loss"]
        print(f"{tag}: seeds {value['seeds']} held-out loss {losses} (range {min(losses)}-{max(losses)})")
        if not args.no_write:
            update_metrics(metrics_path(which), KEY, value)
    return 0


if __name__ == "__main__":
    sys.exit(main())
