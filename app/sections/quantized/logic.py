"""Quantized weights in the page: the mini-GPT's projection matrices in the scheme the reader picks
(model/wquant.py), each matrix's error, the checkpoint's bytes, and the quantized model writing
beside the full one. No Panel here (the view is app/sections/quantized/view.py); imported only when the
reader opens its section, and model.wquant with it.

Where each number is measured:
- here, in the reader's Python: every matrix's relative error ||W - W_hat|| / ||W||, its largest
  weight in sigmas, bits per weight and the checkpoint's bytes (counted on the codes and scales),
  both models' greedy texts, and, when the reader asks (`AgreementLab`), the chosen scheme's
  agreement and acceptance on the committed prompts, timed;
- by `python -m model.wquant --write` (CPython, committed in model/weights/wquant.json, `committed()`):
  the held-out loss (the held-out text is not in the browser), the activations' outlier dimensions
  over the held-out windows, and every scheme's agreement and acceptance on the same prompts.
"""

from __future__ import annotations

import functools
import json
import time

import numpy as np
import param

from model.wquant import (
    MEASURED,
    REFERENCE,
    SCHEMES,
    acceptance,
    agreement,
    checkpoint_bytes,
    fingerprint,
    greedy_texts,
    matrix_errors,
    projections,
    quantized_model,
    weight_stats,
)

from ..stepwise import Stepwise

SCHEME_NAMES = tuple(SCHEMES)  # what the reader chooses from (float32 is the reference beside them)
DEFAULT_SCHEME = "int4-row"
N_PROMPTS = 8  # the committed prompts (model.wquant.held_out_prompts)
SIGMAS = 6.0  # "an outlier weight": beyond this many standard deviations (the chapter's line)
CHAPTER_OUTLIER = 1579.6  # the chapter's outlier feature (dimension 62 of its 0.5B model) ...
CHAPTER_MEDIAN = 1.6  # ... where the median dimension never exceeds this

# the chapter's three lines (and the way back), as model.wquant.quantize_matrix runs them per territory
CODE = """qmax  = 2 ** (bits - 1) - 1
scale = np.abs(W).max() / qmax
Wq    = np.round(W / scale).clip(-qmax - 1, qmax)
W_hat = Wq * scale"""


class WqChoice(param.Parameterized):
    """What the reader chooses in the section: the scheme and the prompt the two models write after;
    their choices are the widgets', and all a browser may send (app/intake.py refuses the rest)."""

    scheme = param.Selector(default=DEFAULT_SCHEME, objects=list(SCHEME_NAMES), doc="The quantization scheme.")
    prompt = param.Selector(default=1, objects=list(range(1, N_PROMPTS + 1)), doc="Which held-out prompt.")


@functools.lru_cache(maxsize=1)
def committed() -> dict:
    """model/weights/wquant.json: what `python -m model.wquant --write` measured (see the module's doc)."""
    return json.loads(MEASURED.read_text(encoding="utf-8"))


def committed_rows() -> dict[str, dict]:
    """Scheme (float32 first) -> its committed row of the table."""
    return {r["scheme"]: r for r in committed()["rows"]}


def prompts() -> list[list[int]]:
    return committed()["prompts"]


def n_new() -> int:
    return committed()["n_new"]


def is_measured_model(gpt) -> bool:
    """Whether the committed numbers are this checkpoint's (its projection matrices' fingerprint)."""
    return fingerprint(gpt) == committed()["weights_sha256"]


def what_is_quantized(gpt) -> dict:
    """How many matrices the section quantizes, their parameters, and the model's in all."""
    names = projections(gpt.config)
    return {"matrices": len(names), "quantized": sum(gpt.params[n].size for n in names), "params": gpt.n_params()}


def scheme_facts(name: str) -> dict:
    """bits, territory ("tensor", "row", "group", "nf4") and group (weights per scale along the input)."""
    s = SCHEMES[name]
    return {"bits": s.bits, "territory": s.territory, "group": s.group}


def matrix_rows(gpt, scheme: str) -> list[dict]:
    """Per projection matrix: model.wquant.weight_stats (its largest weight in sigmas, how many beyond
    6) and its relative error in the scheme (model.wquant.matrix_errors)."""
    errors = matrix_errors(gpt, scheme)
    return [{**s, "error": errors[s["matrix"]]} for s in weight_stats(gpt)]


def weight_outliers(rows) -> dict:
    """The largest weight of any matrix in sigmas and its matrix, and how many weights lie beyond 6."""
    top = max(rows, key=lambda r: r["max_sigmas"])
    return {"max_sigmas": top["max_sigmas"], "matrix": top["matrix"], "beyond": sum(r["beyond_6_sigma"] for r in rows)}


def activation_facts() -> dict:
    """The committed residual stream: largest dimension over the median one, lowest and highest over
    the layers, and every layer's outlier dimensions (beyond 6x the median: none in the lesson's model)."""
    acts = committed()["activations"]
    ratios = [a["top_over_median"] for a in acts]
    return {
        "low": min(ratios),
        "high": max(ratios),
        "layers": len(acts),
        "outliers": {a["layer"]: a["outliers"] for a in acts if a["outliers"]},
        "windows": committed()["windows"],
    }


_SIZES: dict = {}  # id(gpt) -> (gpt, {scheme: checkpoint_bytes}): the same for every reader of one checkpoint


def sizes(gpt) -> dict[str, dict]:
    """float32 and every scheme -> model.wquant.checkpoint_bytes (bits per weight, bytes)."""
    kept = _SIZES.get(id(gpt))
    if kept is None or kept[0] is not gpt:
        kept = _SIZES[id(gpt)] = (gpt, {s: checkpoint_bytes(gpt, s) for s in (REFERENCE, *SCHEME_NAMES)})
    return kept[1]


_FULL: dict = {}  # id(gpt) -> (gpt, {prompt index: the full model's greedy text})


def full_text(gpt, i: int) -> list[int]:
    """Committed prompt i (0-based) and the full model's n_new greedy tokens after it (kept)."""
    kept = _FULL.get(id(gpt))
    if kept is None or kept[0] is not gpt:
        kept = _FULL[id(gpt)] = (gpt, {})
    if i not in kept[1]:
        kept[1][i] = greedy_texts(gpt, [prompts()[i]], n_new())[0]
    return kept[1][i]


_MODEL: dict = {}  # the last quantized model built: (gpt, scheme) -> model


def quantized(gpt, scheme: str):
    """model.wquant.quantized_model, the last one kept (a scheme chosen again is not quantized again)."""
    kept = _MODEL.get("last")
    if kept is None or kept[0] is not gpt or kept[1] != scheme:
        kept = _MODEL["last"] = (gpt, scheme, quantized_model(gpt, scheme))
    return kept[2]


def first_difference(a, b) -> int | None:
    """The first index where two token lists differ (None if they are the same)."""
    for j, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return j
    return None if len(a) == len(b) else min(len(a), len(b))


def compare(gpt, scheme: str, i: int) -> dict:
    """After committed prompt i: the full model's greedy text, the quantized model's, the first
    generated token where they part (None: never), and where the quantized model, given the full
    text's prefix, would choose another token (model.wquant.agreement's mask, one per generated token).
    Computed once per model, scheme and prompt (the same arithmetic gives the same texts)."""
    key = (id(gpt), scheme, i)
    kept = _COMPARED.get(key)
    if kept is None or kept[0] is not gpt:
        if len(_COMPARED) >= 64:  # the checkpoints (each loaded once) x the schemes x the prompts
            _COMPARED.pop(next(iter(_COMPARED)))
        kept = _COMPARED[key] = (gpt, _compared(gpt, scheme, i))
    return dict(kept[1])


_COMPARED: dict = {}  # (id of the model, scheme, prompt) -> (the model, what compare found)


def _compared(gpt, scheme: str, i: int) -> dict:
    model = quantized(gpt, scheme)
    prompt = prompts()[i]
    full = full_text(gpt, i)
    quant = greedy_texts(model, [prompt], n_new())[0]
    first = first_difference(full, quant)
    mask = agreement(model, [full], [len(prompt)])["masks"][0]
    return {
        "prompt": len(prompt),
        "full": full,
        "quant": quant,
        "first": None if first is None else first - len(prompt),
        "agree": [bool(x) for x in mask],
    }


class AgreementLab(Stepwise):
    """The chosen scheme's agreement and acceptance on the committed prompts, one prompt a part:
    the full model's greedy text (kept once written), the quantized model asked at every position
    (model.wquant.agreement) and drafting for the full model (model.wquant.acceptance, k as committed),
    the two timed (time.perf_counter)."""

    def __init__(self, gpt, scheme: str):
        super().__init__(range(len(prompts())))
        self.gpt, self.scheme = gpt, scheme
        self.k = committed()["k"]

    def measure(self, i):
        gpt, prompt = self.gpt, prompts()[i]
        full = full_text(gpt, i)
        t0 = time.perf_counter()
        model = quantized(gpt, self.scheme)
        a = agreement(model, [full], [len(prompt)])
        t1 = time.perf_counter()
        acc = acceptance(gpt, model, [prompt], n_new(), self.k)
        t2 = time.perf_counter()
        return {
            "agree": a["agree"],
            "total": a["total"],
            "accepted": acc["accepted"],
            "tested": acc["tested"],
            "agreement_s": t1 - t0,
            "acceptance_s": t2 - t1,
        }

    def totals(self) -> dict:
        """Summed over the prompts measured so far."""
        r = list(self.results.values())
        out = {k: sum(x[k] for x in r) for k in ("agree", "total", "accepted", "tested", "agreement_s", "acceptance_s")}
        out["rate"] = out["agree"] / out["total"] if out["total"] else 0.0
        out["alpha"] = out["accepted"] / out["tested"] if out["tested"] else 0.0
        out["prompts"] = len(r)
        return out


def same_as_committed(totals: dict, scheme: str) -> bool:
    """Whether the page's counts are the committed ones (all prompts measured)."""
    row = committed_rows()[scheme]
    return all(totals[k] == row[k] for k in ("agree", "total", "accepted", "tested"))


def mean_error(rows) -> tuple[float, float]:
    """Worst and median relative error over the matrices."""
    e = [r["error"] for r in rows]
    return max(e), float(np.median(e))
