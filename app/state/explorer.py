"""The explorable's state: the text so far, the cache, costs, timings, the error.

Plain Python over the model; no Panel here. Each step really computes the
token both ways, with the cache (`avanzar`) and without it (the full pass,
`llenar` over every token): the selected mode's logits pick the next token, the
other way is the proof (their largest difference). Switching the mode therefore
never recomputes anything. A step back (`back`) slices the cache, as speculative decoding
rolls back a rejected token (KVCache.truncate). The clock is measured apart (`measure_clock`), in
interleaved samples, once the page has shown the step.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

from model import cost, sample
from model.gpt import is_position_error, kv_difference
from model.sampling import Candidates, candidates
from model.timing import Comparison, compare

from .settings import CACHE, FULL, MODES, Settings

FLOAT64 = "float64"  # the lesson's cache: every number as computed

# what a cell of the cache grid shows at this step
FUTURE, READ, COMPUTED = 0, 1, 2

PROMPT = "La Nela"
# a fixed text for the colour scale of the cache grid (the novel's first sentences)
REFERENCE = (
    "Se puso el sol. Tras el breve crepúsculo vino tranquila y oscura la noche, en cuyo negro "
    "seno murieron poco a poco los últimos rumores de la tierra soñolienta"
)


@dataclass
class StepError:
    """The exception a step raised, as the reader will see it. `lesson`: it is the lesson's
    error, the position table's IndexError past n_ctx; anything else is a failure and is
    reported as what it is."""

    type_name: str
    message: str
    position: int
    lesson: bool = True


@dataclass
class Measure:
    """One position, computed both ways."""

    proof: float | None = None  # max |cached logits - full-pass logits|
    clock: Comparison | None = None  # avanzar on the cache of t-1 positions vs the full pass over t
    recomputed: float | None = None  # max |K, V the full pass recomputed - the cached ones|, positions 1..t-1
    waited: bool = False  # an animation had no time to time it: timed when the animation stops

    @property
    def cached_s(self) -> float | None:
        return self.clock.a_s if self.clock else None

    @property
    def full_s(self) -> float | None:
        return self.clock.b_s if self.clock else None


@dataclass
class Past:
    """What one step replaced, to step back: the generator before the draw, the logits the token was
    drawn from and what the query read before it, and the `epoch` (model and format) they belong to."""

    rng_state: dict
    logits: np.ndarray  # (V,)
    reads: list
    epoch: int


class Explorer:
    """Step the mini-GPT token by token, keeping everything the views show. It reads the
    reader's seed, top-p and mode from `settings` (app/state/settings.py).

    The cache keeps its numbers in `fmt` (the lesson's float64, or fewer bits: model/quantize.py).
    With fewer bits it is a real cache of that format (a QuantizedKVCache): llenar fills it and
    every step appends to it, each block reading the numbers as the format keeps them, as
    model.quantize.logit_drift and generate(..., cache=QuantizedKVCache.empty(...)) do. A float64
    twin of it (`cache64`) takes the same tokens, so every cached step also says how far the
    logits drifted (`drift`)."""

    temperature = 1.0

    def __init__(self, gpt, settings: Settings | None = None, prompt: str = PROMPT):
        self.prompt = prompt
        self.settings = settings or Settings(n_ctx=gpt.config.n_ctx, n_prompt=len(gpt.tokenizer.encode(prompt)))
        self.fmt = FLOAT64
        self.epoch = 0  # one more each time the text is read again (another model or format)
        self.lesson_gpt = gpt  # the model the page began with: the lesson's (app/sections/quiz)
        self.use_model(gpt)
        self.reset()

    def use_model(self, gpt) -> None:
        """Costs and colour scales of a model: every position 1..n_ctx, exact integers from its formulas."""
        self.gpt, self.cfg = gpt, gpt.config
        positions = range(1, self.cfg.n_ctx + 1)
        self.cost_cached = np.array([cost.c_cached(self.cfg, t) for t in positions], dtype=np.int64)
        self.cost_full = np.array([cost.c_uncached(self.cfg, t) for t in positions], dtype=np.int64)
        self.kv_scale = self._kv_scale()
        self._baseline = None

    def switch_model(self, gpt, fmt: str | None = None) -> None:
        """Another checkpoint from here on (and another format, if given): the text so far stays; the
        new model reads it again in one pass (llenar), and that fills its own cache."""
        self.use_model(gpt)
        self.fmt = fmt or self.fmt
        self.refill()
        self.mark_switch()

    def set_format(self, fmt: str) -> None:
        """Store the cache's numbers in `fmt` from here on: the text so far is read again in one pass
        (llenar) into a cache of that format, as a real cache of it would be filled."""
        self.fmt = fmt
        self.refill()
        self.mark_switch()

    def mark_switch(self) -> None:
        """Past the prompt, the text so far was written another way: `departure` has nothing to say."""
        self.switched_at = self.t if self.t > self.n_prompt else None

    def empty_cache(self):
        """A cache of the current format with nothing in it (model/quantize.py for fewer bits)."""
        from model.quantize import QuantizedKVCache  # only once a reader asks for fewer bits

        return QuantizedKVCache.empty(self.cfg, self.fmt)

    def refill(self) -> None:
        """The text so far in one pass (llenar): the caches, the next token's logits, what the last
        query read. With fewer bits the pass fills a cache of that format (each block reads the
        numbers as the format keeps them) and a float64 twin of it; the selected mode's pass gives the
        next token's logits and the reads (the full pass, without the cache, is the float64 one)."""
        self.epoch += 1
        logits, self.cache64, self.reads = self.gpt.prefill(self.ids, return_weights=True)
        self.cache, self.next_logits = self.cache64, logits[-1]  # (V,) the next token's logits
        if self.fmt != FLOAT64:
            quantized, self.cache, reads = self.gpt.prefill(self.ids, self.empty_cache(), return_weights=True)
            if self.mode == CACHE:
                self.next_logits, self.reads = quantized[-1], reads
        self.measures: dict[int, Measure] = {}
        self.drift: dict[int, float] = {}
        self.error: StepError | None = None

    def _kv_scale(self) -> dict[tuple[int, str], float]:
        """A fixed colour scale per (block, 'k'|'v'): the 99th percentile of |value| on a
        reference text. Fixed, so a stored column never changes colour."""
        ids = self.gpt.tokenizer.encode(REFERENCE)[: self.cfg.n_ctx]
        _, cache = self.gpt.llenar(ids)
        return {
            (l, kind): float(np.percentile(np.abs((cache.k if kind == "k" else cache.v)[l]), 99)) or 1.0
            for l in range(self.cfg.n_layers)
            for kind in ("k", "v")
        }

    # -- state ------------------------------------------------------------------------------
    def reset(self) -> None:
        """Back to the prompt after prefill, with a fresh generator of the same seed."""
        self.rng = np.random.default_rng(self.settings.seed)
        self.ids: list[int] = self.gpt.tokenizer.encode(self.prompt)
        self.n_prompt = len(self.ids)
        self.switched_at = None
        self.past: list[Past] = []  # one per token drawn since the prompt
        self.refill()

    def departure(self) -> int | None:
        """The first position where this text differs from what the model writes with a float64
        cache and the same seed and top-p (None: it does not, so far). Meaningful when the text was
        written this way from the prompt on (`switched_at` is None)."""
        key = (self.settings.seed, self.settings.top_p)
        if self._baseline is None or self._baseline[0] != key:
            from model import generate

            self._baseline = (
                key,
                generate(self.gpt, self.prompt, self.cfg.n_ctx - self.n_prompt, seed=key[0], top_p=key[1]),
            )
        return next((i + 1 for i, (a, b) in enumerate(zip(self.ids, self._baseline[1])) if a != b), None)

    @property
    def t(self) -> int:
        """Positions in the text (and in the cache)."""
        return len(self.ids)

    @property
    def mode(self) -> str:
        return self.settings.mode

    def set_mode(self, mode: str) -> None:
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
        self.settings.mode = mode

    def toggle(self) -> str:
        self.set_mode(FULL if self.mode == CACHE else CACHE)
        return self.mode

    def configure(self, seed: int | None = None, top_p: float | None = None) -> None:
        """New seed or top-p: a new text, so start over."""
        if seed is not None:
            self.settings.seed = int(seed)
        if top_p is not None:
            self.settings.top_p = float(top_p)
        self.reset()

    @property
    def full(self) -> bool:
        return self.t >= self.cfg.n_ctx

    # -- one token --------------------------------------------------------------------------
    def step(self, measure: bool = True) -> bool:
        """Sample the next token and compute its position. False if it failed.

        The selected mode's way is computed first and gives the logits that
        pick the following token; with `measure`, the other way is computed
        too, both are timed, and their largest difference is the proof.
        At t = n_ctx the next position does not exist: the model raises its
        own IndexError, kept in `self.error`; nothing else changes (the cache
        is untouched, the generator rewound: trying again gives the same error).
        Any other exception (non-finite logits, say) is kept the same way, but
        not taken for the lesson's.
        """
        s = self.settings
        rng_state = self.rng.bit_generator.state
        ids = self.ids + [None]

        def with_cache():  # avanzar: one row, on a copy of the cache
            grown = self.cache.copy()
            logits, reads = self.gpt.step(token, grown, return_weights=True)
            return logits, grown, reads

        def without_cache():  # the full pass over every token
            all_logits, cache, reads = self.gpt.prefill(ids, return_weights=True)
            return all_logits[-1], cache, reads

        ways = {CACHE: with_cache, FULL: without_cache}
        other = FULL if self.mode == CACHE else CACHE
        try:
            token = ids[-1] = sample(self.next_logits, self.rng, self.temperature, None, s.top_p)
            logits, cache, reads = ways[self.mode]()
            check = ways[other]() if measure else None
            twin = self.twin_step(token, logits if self.mode == CACHE else None)
            kept = self.kept(cache, check, twin, with_cache)
        except Exception as e:  # the model's own error, kept for the reader to see
            self.rng.bit_generator.state = rng_state
            lesson = is_position_error(e)
            self.error = StepError(type(e).__name__, str(e), position=len(ids), lesson=lesson)
            return False
        previous = self.cache64
        self.past.append(Past(rng_state, self.next_logits, self.reads, self.epoch))
        self.ids, self.next_logits, self.reads = ids, logits, reads
        self.cache, self.cache64 = kept
        self.error = None
        self.measures[self.t] = Measure() if check is None else self.compared(previous, logits, cache, check)
        return True

    def back(self) -> bool:
        """One step back, as speculative decoding rolls back a rejected token: the cache is sliced to
        t - 1 positions (truncate: nothing is recomputed), the generator rewound to before the draw,
        the logits it drew from restored. Avanzar then draws the same token and computes the same
        numbers, to the bit. After another model or format read the text, that one reads the
        shorter text again (llenar). False at the prompt: nothing there was drawn."""
        if not self.past:
            return False
        last, t = self.past.pop(), self.t
        self.ids = self.ids[:-1]
        self.cache.truncate(t - 1)
        if self.cache64 is not self.cache:
            self.cache64.truncate(t - 1)
        self.rng.bit_generator.state = last.rng_state
        self.measures.pop(t, None)
        self.drift.pop(t, None)
        self.error = None
        if last.epoch == self.epoch:
            self.next_logits, self.reads = last.logits, last.reads
        else:
            self.refill()
        if self.switched_at is not None and self.t <= self.n_prompt:
            self.switched_at = None
        return True

    def newest_candidates(self, n: int | None = 8) -> tuple[Candidates, int | None]:
        """What the sampler weighed for the newest token (its n likeliest, all if None), and the
        token it drew; at the prompt (nothing drawn yet), what it weighs for the next position, and
        None."""
        s = self.settings
        if self.past:
            return candidates(self.past[-1].logits, self.temperature, s.top_p, n), self.ids[-1]
        return candidates(self.next_logits, self.temperature, s.top_p, n), None

    def twin_step(self, token: int, logits):
        """With fewer bits: the float64 twin takes the same token; its logits against the cached
        step's are the drift (as model.quantize.logit_drift measures it: the same two caches, the
        same steps). None with the lesson's float64 cache (the cache is its own twin)."""
        if self.fmt == FLOAT64:
            return None
        grown = self.cache64.copy()
        exact = self.gpt.step(token, grown)
        if logits is not None:
            self.drift[len(self.ids) + 1] = float(np.abs(logits - exact).max())
        return grown

    def kept(self, cache, check, twin, with_cache) -> tuple:
        """The caches after a step: (the cache in the format, its float64 twin).

        The lesson's float64 cache is its own twin: the cached step's, or the full pass's K and V.
        With fewer bits the cache is always the one the cached step appended to (a real cache of
        that format: without the cache, that step is the other way's, computed here if it was not
        measured), and the twin the float64 cache that took the same tokens."""
        if self.fmt == FLOAT64:
            return cache, cache
        if self.mode == CACHE:
            return cache, twin
        return (check if check is not None else with_cache())[1], twin

    def compared(self, previous, logits, cache, check) -> Measure:
        """The proof of a step computed both ways: the logits' largest difference, and the keys and
        values the full pass recomputed for positions 1..t-1 against the ones the cache kept."""
        full_cache = cache if self.mode == FULL else check[1]
        return Measure(
            float(np.abs(logits - check[0]).max()), recomputed=kv_difference(previous, full_cache, len(previous))
        )

    def measure_clock(self, samples: int = 5, min_seconds: float = 0.002) -> bool:
        """Time the current position both ways (interleaved samples, model/timing.py), once.
        True if a new measurement was made."""
        m = self.measures.get(self.t)
        if m is None or m.proof is None or m.clock is not None:
            return False
        before = self.cache.copy()
        before.truncate(self.t - 1)
        token, ids = self.ids[-1], list(self.ids)
        m.clock = compare(
            lambda: self.gpt.avanzar(token, before.copy()),
            lambda: self.gpt.forward(ids),
            samples=samples,
            min_seconds=min_seconds,
        )
        return True

    def weights_digest(self) -> str:
        """A checksum of the model's weights: the page shows it to tests, which check that nothing
        the reader does (their code runs elsewhere) changes them."""
        h = hashlib.sha256()
        for name in sorted(self.gpt.params):
            h.update(name.encode() + b"\0" + np.ascontiguousarray(self.gpt.params[name]).tobytes())
        return h.hexdigest()[:16]

    def proof_now(self, gpt=None) -> float:
        """Largest |cached - full| of the logits at the current position, computed afresh with a
        float64 cache: the text minus its last token through llenar, that token through avanzar.
        `gpt`: another model on the same text (the lesson's, for the quiz); the current one if None."""
        gpt = gpt or self.gpt
        _, cache = gpt.llenar(self.ids[:-1])
        return float(np.abs(gpt.avanzar(self.ids[-1], cache) - gpt.forward(self.ids)[-1]).max())

    def advance_to(self, t: int) -> None:
        """Step without measuring up to position t (for a URL's t), measuring the last one."""
        while self.t < min(t, self.cfg.n_ctx) - 1 and self.step(measure=False):
            pass
        if self.t < min(t, self.cfg.n_ctx):
            self.step()

    # -- what the views show ----------------------------------------------------------------
    def cell_states(self) -> np.ndarray:
        """(n_ctx,) FUTURE / READ / COMPUTED for each position at this step.

        With the cache only the newest column is computed and the others are
        read; without it every column 1..t is computed again. Right after the
        prefill the prompt's columns were all computed in that one pass.
        """
        states = np.full(self.cfg.n_ctx, FUTURE, dtype=np.int8)
        t = self.t
        if t <= self.n_prompt or self.mode == FULL:
            states[:t] = COMPUTED
        else:
            states[: t - 1] = READ
            states[t - 1] = COMPUTED
        return states

    def vectors(self, layer: int, kind: str) -> np.ndarray:
        """(t, d) the cached keys ('k') or values ('v') of a block, one row per position,
        the heads side by side."""
        a = (self.cache.k if kind == "k" else self.cache.v)[layer]  # (H, t, d_k)
        H, t, dk = a.shape
        return a.transpose(1, 0, 2).reshape(t, H * dk)

    def tokens(self) -> list[str]:
        return self.gpt.tokenizer.token_strings(self.ids)

    def costs(self) -> dict:
        """This token's multiplications both ways, the totals so far, the cache's memory."""
        t, cfg = self.t, self.cfg
        return {
            "t": t,
            "cached": int(self.cost_cached[t - 1]),
            "full": int(self.cost_full[t - 1]),
            "ratio": float(self.cost_full[t - 1] / self.cost_cached[t - 1]),
            "total_cached": cost.total_cached(cfg, t),
            "total_full": cost.total_uncached(cfg, t),
            "total_ratio": cost.total_ratio(cfg, t),
            "cache_numbers": self.cache.n_numbers,
            "cache_bytes": self.cache.nbytes,
        }

    def clock(self) -> Measure:
        """The last measured position (the current one, unless it was skipped)."""
        return self.measures.get(self.t, Measure())
