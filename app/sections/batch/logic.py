"""Batching in the reader's browser: B conversations decoded together, and what one step of B
costs per conversation, measured here. No Panel here (the view is app/sections/batch and app/sections/speculative); imported
only when the reader opens its section.

`Conversations` keeps B conversations, each with its own prompt, seed and generator, in one
cache tensor per block (model/batch.py: prompts of different lengths padded on the left, each
row at its own positions, never reading padding or another row). Beside each it keeps that
conversation's own single-sequence cache: the proof that the batch changes nothing.

`BatchLab` times one step of B conversations against one conversation alone, at a few
positions, in interleaved samples (model/timing.py), one position per `advance()`.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

import numpy as np
import param

from model.batch import generate_batch, prefill_batch, step_batch
from model.gpt import is_position_error
from model.sampling import sample
from model.timing import interleaved

from ...state import clock
from ...state.explorer import StepError
from ..stepwise import Stepwise

# Prompts from the novel, of different lengths (2 to 13 tokens); conversation b gets the b-th,
# again from the first past the sixteenth, and its own seed.
PROMPTS = (
    "La Nela",
    "Se puso el sol",
    "Marianela",
    "El padre de Pablo",
    "Celipín",
    "Nela, ¿dónde estás?",
    "La noche",
    "El doctor",
    "Pablo",
    "Teodoro Golfín",
    "Florentina",
    "Aldeacorba",
    "Don Francisco Penáguilas",
    "Los ojos",
    "Dios mío",
    "Socartes",
)
MAX_B = 32
DEFAULT_B = 8
BATCHES = (1, 2, 4, 8, 16, 32)  # measured, with the reader's B


class BatchChoice(param.Parameterized):
    """What the reader chooses in the section: its bounds are the slider's, and all a browser may
    send (app/intake.py refuses the rest)."""

    B = param.Integer(default=DEFAULT_B, bounds=(1, MAX_B), doc="Conversations decoded together.")


# what a slot of the cache tensor holds
SLOT_PAD, SLOT_PROMPT, SLOT_SAMPLED, SLOT_NEWEST = 0, 1, 2, 3


class Conversations:
    """B conversations decoded together: `ids[b]` their texts, `cache` the batch's tensors
    (k[l], v[l]: (B, H, S, d_k)), `alone[b]` each one's own cache; `proof` the largest
    difference between a row's logits in the batch and its logits alone, so far."""

    def __init__(self, gpt, B: int, seed: int = 0, top_p: float = 0.9):
        if not 1 <= B <= MAX_B:
            raise ValueError(f"B must be 1 to {MAX_B}, not {B}")
        self.gpt, self.B, self.top_p = gpt, B, top_p
        self.prompts = [PROMPTS[b % len(PROMPTS)] for b in range(B)]
        self.seeds = [seed + b for b in range(B)]
        self.rngs = [np.random.default_rng(s) for s in self.seeds]
        self.ids = [gpt.tokenizer.encode(p) for p in self.prompts]
        self.n_prompt = [len(x) for x in self.ids]
        self.z, self.cache = prefill_batch(gpt, self.ids)  # one pass for every prompt
        self.alone = []
        for ids in self.ids:
            logits, cache = gpt.prefill(ids)
            self.alone.append([logits[-1], cache])
        self.proof = self.difference()
        self.steps = 0
        self.error: StepError | None = None

    def difference(self) -> float:
        return max(float(np.abs(self.z[b] - z).max()) for b, (z, _) in enumerate(self.alone))

    def advance(self) -> bool:
        """One token for every conversation, each from its own generator, in one pass of the batch.
        False (and `error` set, nothing changed) when a conversation would pass the window."""
        states = [r.bit_generator.state for r in self.rngs]
        tokens = [sample(self.z[b], r, top_p=self.top_p) for b, r in enumerate(self.rngs)]
        try:
            z = step_batch(self.gpt, tokens, self.cache)
        except IndexError as e:  # the position table's, for the longest conversation
            for r, s in zip(self.rngs, states):
                r.bit_generator.state = s
            self.error = StepError(
                type(e).__name__, str(e), position=max(len(x) for x in self.ids) + 1, lesson=is_position_error(e)
            )
            return False
        self.z, self.steps, self.error = z, self.steps + 1, None
        for b, tok in enumerate(tokens):
            self.ids[b].append(tok)
            self.alone[b][0] = self.gpt.step(tok, self.alone[b][1])
        self.proof = max(self.proof, self.difference())
        return True

    @property
    def slots(self) -> int:
        """S: the tensor's slots, the longest prompt plus the steps since."""
        return len(self.cache)

    def slot_kinds(self) -> np.ndarray:
        """(B, S): what each slot holds: padding, a prompt token, a sampled one, or its row's newest."""
        valid = self.cache.valid
        kinds = np.where(valid, SLOT_SAMPLED, SLOT_PAD)
        for b, n in enumerate(self.n_prompt):
            first = self.slots - len(self.ids[b])  # the row's first own slot (left padding)
            kinds[b, first : first + n] = SLOT_PROMPT
        if self.steps:
            kinds[:, -1] = SLOT_NEWEST
        return kinds

    def memory(self) -> dict:
        """Bytes, from the arrays: the tensor, one row of it (S slots), each conversation's own."""
        own = [c.nbytes for _, c in self.alone]
        tensor = self.cache.nbytes
        return {
            "tensor": tensor,
            "row": tensor // self.B,
            "own": own,
            "own_total": sum(own),
            "padding": tensor - sum(own),
            "pad_slots": int((~self.cache.valid).sum()),
            "slots": self.slots,
            "B": self.B,
            "shape": self.cache.k[0].shape,
            "matrices": 2 * len(self.cache.k),
        }


# -- the clock --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BatchTiming:
    """One position: seconds of a step of each B (median of interleaved samples) and of one
    conversation alone (avanzar); per B, the gain per conversation (one alone over a step's share, from
    the medians: what the sentences divide) and its spread over the samples, and the bytes of its
    cache after the step (the real arrays')."""

    t: int
    alone_s: float
    step_s: dict
    gain: dict
    gain_low: dict
    gain_high: dict
    cache_bytes: dict


def step_fn(gpt, texts, t: int, B: int):
    """A step of B conversations at position t, on a copy of their cache; and the cache's bytes after it."""
    _, cache = prefill_batch(gpt, [x[: t - 1] for x in texts[:B]])
    tokens = [x[t - 1] for x in texts[:B]]
    grown = cache.copy()
    step_batch(gpt, tokens, grown)
    return (lambda: step_batch(gpt, tokens, cache.copy())), grown.nbytes


def time_position(gpt, texts, t: int, batches, samples: int, min_seconds: float) -> BatchTiming:
    """Every B's step at position t (its B conversations' first t - 1 tokens cached) and one alone."""
    _, one = gpt.llenar(texts[0][: t - 1])
    fns, cache_bytes = [lambda: gpt.avanzar(texts[0][t - 1], one.copy())], {}
    for B in batches:
        fn, cache_bytes[B] = step_fn(gpt, texts, t, B)
        fns.append(fn)
    alone, *steps = interleaved(fns, samples, min_seconds)
    one, step_s = statistics.median(alone), {B: statistics.median(s) for B, s in zip(batches, steps)}
    spread = {B: sorted(a / (s / B) for a, s in zip(alone, times)) for B, times in zip(batches, steps)}
    return BatchTiming(
        t,
        one,
        step_s,
        {B: one / (step_s[B] / B) for B in batches},  # the medians' ratio,
        {B: g[0] for B, g in spread.items()},
        {B: g[-1] for B, g in spread.items()},  # the samples'
        cache_bytes,
    )


class BatchLab(Stepwise):
    """Measures one position per `advance()`; `rows` fill in as it goes."""

    def __init__(self, gpt, positions, batches=BATCHES, samples: int = 7, min_seconds: float = 0.004, seed: int = 0):
        super().__init__(positions)
        self.gpt, self.positions, self.batches = gpt, tuple(positions), tuple(sorted(set(batches)))
        self.samples, self.min_seconds, self.seed = samples, min_seconds, seed
        self.texts = None

    def measure(self, t: int) -> BatchTiming:
        if self.texts is None:  # full windows to time on, one per conversation
            n_new = self.gpt.config.n_ctx - len(self.gpt.tokenizer.encode(PROMPTS[0]))
            self.texts = generate_batch(
                self.gpt, [PROMPTS[0]] * max(self.batches), n_new, seeds=range(self.seed, self.seed + max(self.batches))
            )
        return time_position(self.gpt, self.texts, t, self.batches, self.samples, self.min_seconds)

    @property
    def rows(self) -> list[dict]:
        return [
            {
                "t": m.t,
                "B": B,
                "step_s": m.step_s[B],
                "per_s": m.step_s[B] / B,
                "alone_s": m.alone_s,
                "gain": m.gain[B],
                "gain_low": m.gain_low[B],
                "gain_high": m.gain_high[B],
                "wait": m.step_s[B] / m.alone_s,
                "cache_bytes": m.cache_bytes[B],
            }
            for m in self.results.values()
            for B in self.batches
        ]

    @property
    def summary(self) -> dict | None:
        """The largest B at the last position: what the sentences under the table say."""
        if not self.finished or self.cancelled or not self.results:
            return None
        last = [r for r in self.rows if r["t"] == self.positions[-1]]
        return max(last, key=lambda r: r["B"])


GAIN = 1.5  # a gain per conversation at least this large: "the fixed cost is shared"


def batch_sentences(r: dict, lang: str) -> list[tuple[str, dict]]:
    """The measurement, read (message key, values), from its own numbers."""
    values = {
        "t": r["t"],
        "n": r["B"],
        "B": r["B"],
        "step": clock.ms_text(r["step_s"], lang),
        "per": clock.ms_text(r["per_s"], lang),
        "alone": clock.ms_text(r["alone_s"], lang),
        "x": clock.ratio_text(r["gain"], lang),
        "wait": clock.ratio_text(r["wait"], lang),
    }
    if r["gain"] < 1:  # a cost, written as such: how many times as much per conversation
        values["x"] = clock.ratio_text(1 / r["gain"], lang)
        return [("batch_measured_costlier", values), ("batch_costlier", values)]
    if r["gain"] < GAIN:
        return [("batch_measured", values), ("batch_no_gain", values)]
    return [("batch_measured", values), ("batch_why", values), ("batch_wait", values)]


def memory_values(m: dict, lang: str, size) -> dict:
    """The memory sentence's numbers, written the language's way (`size`: app.i18n.size)."""
    return {
        "B": m["B"],
        "shape": "(" + ", ".join(str(n) for n in m["shape"]) + ")",
        "S": m["slots"],
        "matrices": m["matrices"],
        "tensor": size(m["tensor"], lang),
        "row": size(m["row"], lang),
        "own": size(m["own_total"], lang),
        "pad": size(m["padding"], lang),
        "n": m["pad_slots"],
        "tokens": m["B"] * m["slots"] - m["pad_slots"],
    }
