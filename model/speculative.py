"""Speculative decoding: a small draft model proposes k tokens, the mini-GPT checks them
all in one pass over its cache, and the text comes out as if the mini-GPT alone had
sampled it (Leviathan et al., 2023).

    from model.speculative import Speculative, speculative_generate
    gpt, draft = MiniGPT.load(), MiniGPT.load("draft")
    ids, stats = speculative_generate(gpt, draft, "La Nela", 62, k=4, seed=0)

One round, with the text ids (n tokens) and both caches holding ids[:-1]:

1. the draft catches up on what its cache lacks, then proposes x_1..x_k, each
   sampled from its distribution q_i, one step each;
2. the mini-GPT runs the last token and x_1..x_k in one pass after its cache (the
   prefill path on k + 1 rows): p_1..p_{k+1}, its distributions at each;
3. x_i is accepted with probability min(1, p_i(x_i) / q_i(x_i)); at the first
   rejection the next token is drawn from max(0, p_i - q_i), normalised, and the
   round ends; if all k are accepted, a bonus token is drawn from p_{k+1};
4. the rows of the rejected tokens are cut off both caches (slicing).

The window: the drafts of a round at n tokens take positions n+1..n+k, so k is
capped at n_ctx - n and the check never asks for position n_ctx + 1 = 65 (nor
does the bonus token: with the window full it is not drawn). A round asked for
when the text already fills the window needs position 65 for its first token:
it raises the position table's own IndexError (looked up before anything
changes), the one the reader meets stepping there without the draft.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .gpt import KVCache, position_rows
from .sampling import draw, probabilities


def verify(p, q, drafts, rng) -> tuple[int, int | None]:
    """The acceptance rule. p (k+1, V): the mini-GPT's distributions; q (k, V): the draft's;
    drafts (k,): the tokens proposed. -> (accepted, next token): the next token is drawn
    from the normalised residual at the first rejection, else the bonus from p[k]
    (None if p has only k rows: no position left for a bonus)."""
    for i, x in enumerate(drafts):
        if rng.random() * q[i, x] < p[i, x]:          # accept with probability min(1, p/q)
            continue
        residual = np.maximum(p[i] - q[i], 0.0)       # a rejection means p(x) < q(x): mass > 0
        return i, draw(residual, rng)
    return len(drafts), (draw(p[len(drafts)], rng) if len(p) > len(drafts) else None)


@dataclass
class Counts:
    """What the rounds did: tokens drafted and accepted, passes of each model."""
    rounds: int = 0
    drafted: int = 0
    accepted: int = 0
    rejected: int = 0        # rounds that ended at a rejection (the drafts after it were never tested)
    tokens: int = 0
    draft_rows: int = 0
    target_rows: int = 0

    def add(self, k: int, accepted: int, written: int) -> None:
        """One round: k drafted, `accepted` of them kept, `written` tokens in all."""
        self.rounds += 1
        self.drafted += k
        self.accepted += accepted
        self.rejected += accepted < k
        self.tokens += written

    @property
    def acceptance(self) -> float:
        """alpha: the share of the draft tokens the mini-GPT tested that it accepted."""
        tested = self.accepted + self.rejected
        return self.accepted / tested if tested else float("nan")

    @property
    def tokens_per_pass(self) -> float:
        """Tokens written per pass of the mini-GPT (one pass per round)."""
        return self.tokens / self.rounds if self.rounds else float("nan")


def catch_up(model, cache, ids) -> np.ndarray:
    """Rows of ids the cache lacks (at least the last one) in one pass -> logits of the last (V,)."""
    logits, _ = model.prefill(ids[len(cache):], cache)
    return logits[-1]


def primed(model, ids) -> KVCache:
    """A cache of ids[:-1]: every token but the last, whose row the next round computes."""
    cache = KVCache.empty(model.config)
    if len(ids) > 1:
        model.prefill(ids[:-1], cache)
    return cache


@dataclass
class Speculative:
    """The state of speculative decoding: the text, both caches, one generator, the counts."""
    target: object
    draft: object
    ids: list[int]
    seed: int = 0
    temperature: float = 1.0
    top_k: int | None = None
    top_p: float | None = 0.9
    counts: Counts = field(default_factory=Counts)

    def __post_init__(self):
        t, d = self.target.config, self.draft.config
        if d.vocab_size != t.vocab_size or d.n_ctx < t.n_ctx:
            raise ValueError(f"the draft must share the mini-GPT's tokenizer and window: vocabulary "
                             f"{d.vocab_size} vs {t.vocab_size}, window {d.n_ctx} vs {t.n_ctx}")
        self.ids = list(self.ids)
        self.rng = np.random.default_rng(self.seed)
        self.target_cache = primed(self.target, self.ids)
        self.draft_cache = primed(self.draft, self.ids)

    def dist(self, logits) -> np.ndarray:
        return probabilities(logits, self.temperature, self.top_k, self.top_p)

    def propose(self, k: int) -> tuple[list[int], np.ndarray]:
        """k draft tokens and the draft's distributions q (k, V) they were drawn from."""
        drafts, q = [], []
        self.counts.draft_rows += len(self.ids) - len(self.draft_cache)
        z = catch_up(self.draft, self.draft_cache, self.ids)
        for i in range(k):
            q.append(self.dist(z))
            drafts.append(draw(q[-1], self.rng))
            if i < k - 1:
                z = self.draft.step(drafts[-1], self.draft_cache)
                self.counts.draft_rows += 1
        return drafts, np.array(q).reshape(k, -1)

    def check(self, drafts: list[int], bonus: bool) -> np.ndarray:
        """The mini-GPT on the last token and the drafts, one pass: p (k + 1, V), or (k, V)
        without the bonus row."""
        rows = self.ids[len(self.target_cache):] + (drafts if bonus else drafts[:-1])
        logits, _ = self.target.prefill(rows, self.target_cache)
        self.counts.target_rows += len(rows)
        return np.array([self.dist(z) for z in logits[-(len(drafts) + bonus):]])

    def begin(self, k: int) -> Round:
        """Phase 1: the draft proposes up to k tokens (see the module's doc)."""
        n, n_ctx = len(self.ids), self.target.config.n_ctx
        position_rows(self.target.params["wpe"], [n])      # the next token's position: IndexError past n_ctx
        k = max(0, min(k, n_ctx - n))                       # drafts at positions n+1..n+k <= n_ctx
        drafts, q = self.propose(k) if k else ([], np.zeros((0, 1)))
        return Round(n, k, drafts, q, bonus=n + k < n_ctx)

    def check_round(self, r: Round) -> None:
        """Phase 2: the mini-GPT's one pass over the last token and the drafts."""
        r.p = self.check(r.drafts, r.bonus)

    def decide(self, r: Round) -> list[int]:
        """Phase 3: the acceptance rule, the new tokens, and the rejected rows cut off both caches.
        -> the tokens the round wrote."""
        r.accepted, r.next = verify(r.p, r.q, r.drafts, self.rng)
        new = r.new
        self.ids += new
        self.target_cache.truncate(len(self.ids) - 1)
        self.draft_cache.truncate(min(len(self.draft_cache), len(self.ids) - 1))
        self.counts.add(r.k, r.accepted, len(new))
        return new

    def round(self, k: int) -> list[int]:
        """One round with up to k drafts, its three phases at once -> the tokens it wrote."""
        r = self.begin(k)
        self.check_round(r)
        return self.decide(r)


@dataclass
class Round:
    """One round as it goes: what the draft proposed (phase 1), the mini-GPT's distributions
    (phase 2), how many drafts it kept and the token it drew after them (phase 3)."""
    n: int                              # tokens in the text when the round began
    k: int                              # drafts proposed (k capped at the window)
    drafts: list[int]
    q: np.ndarray                       # (k, V) the draft's distributions
    bonus: bool                         # whether the check has a row for a bonus token
    p: np.ndarray | None = None         # (k + bonus, V) the mini-GPT's
    accepted: int | None = None
    next: int | None = None             # drawn from the residual at the rejection, or the bonus

    @property
    def new(self) -> list[int]:
        return self.drafts[:self.accepted] + ([] if self.next is None else [self.next])

def speculative_generate(target, draft, prompt: str, n_new: int, k: int = 4, seed: int = 0,
                         temperature: float = 1.0, top_k: int | None = None,
                         top_p: float | None = 0.9) -> tuple[list[int], Counts]:
    """Prompt + n_new tokens by speculative decoding (k drafts a round, fewer near the end).
    The text is distributed as the mini-GPT's own sampling; with temperature 0 it is its
    greedy text. Past the window, the position table's IndexError."""
    spec = Speculative(target, draft, target.tokenizer.encode(prompt), seed, temperature, top_k, top_p)
    goal = len(spec.ids) + n_new
    while len(spec.ids) < goal:
        spec.round(min(k, goal - len(spec.ids) - 1))
    return spec.ids, spec.counts
