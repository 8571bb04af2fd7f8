"""Continuous batching: a fixed number of slots, a queue, and two ways to fill the slots.

    from model.scheduler import Request, serve, simulate, compare, chapter_workload
    reqs = [Request(0, gpt.tokenizer.encode("La Nela"), 12, seed=0),
            Request(1, gpt.tokenizer.encode("Pablo"), 3, seed=1)]
    run = serve(gpt, reqs, slots=2, policy="continuous")     # the real mini-GPT
    run.texts[0] == generate(gpt, "La Nela", 12, seed=0)      # True: each text as if alone
    run.schedule.owners, run.schedule.states                 # (steps, slots): who is where, doing what
    run.schedule.summary(step_seconds=2e-4)                  # steps, tokens, throughput, latency

    lengths, arrivals = chapter_workload()                    # 64 output lengths: median 18, max 231
    compare(lengths, slots=8, arrivals=arrivals)              # static vs continuous, lengths only

The server has `slots` places and a FIFO queue (requests in order of arrival,
ties in the order given). Every step, each occupied slot makes one token of
its request. The two policies differ only in when a slot takes a new request:

    static      only when every slot is free: the next group (up to `slots`
                requests from the queue) enters together and the group runs
                until its longest member is done; a member done earlier keeps
                its slot ("held": the padding of a fixed batch), and its answer
                goes back with the group's, when all are done
    continuous  a slot freed at one step takes the next queued request at the
                very next step (token granularity); each answer goes back when
                its last token is made

A request entering a slot at step s gets its prefill there (its prompt in one
pass, and its first token from the last row's logits): state "prefill". Its
other tokens come one step each ("decode": every decoding slot in one batched
step, model.batch.step_batch). A request of n tokens is done at step s + n - 1.
Each cell of the schedule is (request id, state), state one of "prefill",
"decode", "held" (static only), "idle" (no request). Steps are counted from 0;
a step in which nothing is queued yet is idle and still counts (time passes).

Per request (a Ticket): arrival, admitted (its prefill step, its first token),
finished (its last token), returned (its answer goes back: `finished` with
continuous batching, the group's last step with static batching), latency =
returned - arrival + 1 steps (the steps it waited and ran, both ends counted).
The summary: steps, tokens, tokens per step, latency mean / median / 90th
percentile (NumPy's linear interpolation), and with `step_seconds` (a number,
or a function of the occupied slots: held ones count, a fixed batch computes
its padding) seconds, tokens per second and the mean latency in seconds.

The chapter's simulation ("64 requests with skewed output lengths, median 18,
max 231, 1,874 in total, both policies at the per-step cost measured for eight
slots: throughput 1.6x better, mean latency more than ten times better") does
not say how the requests arrive. Measured here (`python -m model.scheduler`):

- all 64 queued at step 0: over 200 workload seeds the throughput ratio is
  1.8-2.7x (10th-90th percentile) and the latency ratio 3.0-4.1x, never above
  4.9x: the continuous server works through the same queue of 64, so its mean
  latency is a good part of its makespan too. More than ten is out of reach.
- a steady stream, one request every 6 steps (0.17 a step, where 8 slots serve
  8 / 29.3 = 0.27 a step at the mean length): the medians over 200 seeds are
  1.67x and 8.8x (90th percentile of the latency ratio 11.3x; 17% of seeds
  give 1.55-1.65x, 24% more than 10x, 4 of 200 both). Under a stream the static
  server falls behind (each group lasts as long as its longest member) and its
  queue, more than its padding, makes its latency.
So the chapter's pair fits a stream like this with a workload from the upper
fifth of latency ratios. CHAPTER_SEED is the first seed from 0 whose stream
gives 1.55-1.65x and more than 10x (1.63x and 10.5x): chosen to match, not
predicted. With a constant step cost the ratios are the same in steps and in
seconds; the cost only turns steps into tokens per second.

On the clock: `serve_timed` is serve() with a clock reading after every step, `serve_round` one
interleaved round of both policies, `served_clock` the medians over rounds and the ratios with
their spread (model.timing.comparison). Charging each step a separately timed step_batch of its
occupied slots (`Schedule.summary` with a step cost) is a model of that clock, not a reading of
it: the server computes no padding rows, but it runs each entering request's prefill alone and
lays the caches side by side at every step.

Our window: the chapter's lengths are for a model with thousands of positions.
The mini-GPT has 64, and a request's prompt and output must fit in them
(len(prompt) + n_new <= n_ctx, else ValueError: the position table has no row
65, and its IndexError is what a step there would raise). So real requests on
the mini-GPT are short: `window_requests` draws the same lognormal shape with
median 8, each capped at the window. The longest a member can hold a fixed
batch is 63 steps instead of 231, so the gap between the policies is smaller.
"""
from __future__ import annotations

import json
import sys
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np

PREFILL, DECODE, HELD, IDLE = "prefill", "decode", "held", "idle"
STATES = (PREFILL, DECODE, HELD, IDLE)
POLICIES = ("static", "continuous")


# -- the schedule: who is in which slot at every step (no model needed) -------------------

class Cell(NamedTuple):
    """One slot at one step: the request in it (None if idle) and what it does there."""
    request: int | None
    state: str


@dataclass
class Ticket:
    """One request's passage through the server, in steps (0-based)."""
    id: int
    n_new: int                        # tokens to make (its output length)
    arrival: int = 0                  # the first step it can be admitted at
    slot: int | None = None
    admitted: int | None = None       # its prefill step: its first token
    finished: int | None = None       # its last token's step
    returned: int | None = None       # its answer goes back (static: when the whole group is done)

    @property
    def latency(self) -> int:
        """Steps from arrival to answer, both counted."""
        return self.returned - self.arrival + 1

    @property
    def first_token_latency(self) -> int:
        return self.admitted - self.arrival + 1


class Scheduler:
    """The policy, one step at a time: step() admits, then says what every slot does."""

    def __init__(self, tickets, slots: int, policy: str):
        if policy not in POLICIES:
            raise ValueError(f"unknown policy {policy!r}: one of {POLICIES}")
        if slots < 1:
            raise ValueError(f"a server needs at least one slot, not {slots}")
        self.policy, self.tickets, self.t = policy, list(tickets), 0
        self.incoming = deque(sorted(self.tickets, key=lambda k: k.arrival))   # stable: ties in given order
        self.queue: deque[Ticket] = deque()
        self.slots: list[Ticket | None] = [None] * slots
        self.steps: list[tuple[Cell, ...]] = []

    @property
    def done(self) -> bool:
        return not self.incoming and not self.queue and all(k is None for k in self.slots)

    def admit(self) -> None:
        """Arrivals join the queue; free slots take from it (static: only if all are free)."""
        while self.incoming and self.incoming[0].arrival <= self.t:
            self.queue.append(self.incoming.popleft())
        if self.policy == "static" and any(k is not None for k in self.slots):
            return
        for i, k in enumerate(self.slots):
            if k is None and self.queue:
                k = self.slots[i] = self.queue.popleft()
                k.slot, k.admitted = i, self.t

    def state(self, k: Ticket | None) -> str:
        if k is None:
            return IDLE
        made = self.t - k.admitted                          # tokens made before this step
        return HELD if made >= k.n_new else PREFILL if made == 0 else DECODE

    def release(self) -> None:
        """After the step: answers go back, slots free up (static: only when the whole group is done)."""
        for k in self.slots:
            if k is not None and k.finished is None and self.t - k.admitted == k.n_new - 1:
                k.finished = self.t
        group_done = all(k is None or k.finished is not None for k in self.slots)
        for i, k in enumerate(self.slots):
            if k is not None and k.finished is not None and (self.policy == "continuous" or group_done):
                k.returned, self.slots[i] = self.t, None

    def step(self) -> tuple[Cell, ...]:
        """One step: admissions, then every slot's (request, state); the step's results released."""
        if self.done:
            raise RuntimeError("every request is done: nothing left to schedule")
        self.admit()
        cells = tuple(Cell(None if k is None else k.id, self.state(k)) for k in self.slots)
        self.release()
        self.steps.append(cells)
        self.t += 1
        return cells

    def run(self) -> Schedule:
        while not self.done:
            self.step()
        return self.schedule()

    def schedule(self) -> Schedule:
        return Schedule(self.policy, len(self.slots), self.tickets, self.steps)


@dataclass(frozen=True)
class Summary:
    """What a schedule achieved. Latencies in steps; seconds only with a step cost."""
    policy: str
    slots: int
    requests: int
    steps: int
    tokens: int
    tokens_per_step: float
    latency_mean: float
    latency_median: float
    latency_p90: float
    first_token_mean: float
    seconds: float | None = None
    tokens_per_second: float | None = None
    latency_mean_seconds: float | None = None


def step_cost(step_seconds, occupied: np.ndarray) -> np.ndarray:
    """Seconds of each step: a number for all, or a function (or dict) of the occupied slots, which
    must cover every occupancy that occurs (0 for an idle step, where a stream leaves gaps)."""
    if callable(step_seconds):
        return np.array([float(step_seconds(int(n))) for n in occupied])
    if isinstance(step_seconds, Mapping):
        missing = sorted(set(occupied.tolist()) - set(step_seconds))
        if missing:
            raise ValueError(f"no step cost for {missing} occupied slots (an idle step is 0)")
        return np.array([float(step_seconds[int(n)]) for n in occupied])
    return np.full(len(occupied), float(step_seconds))


@dataclass
class Schedule:
    """Every step's cells and every request's ticket: what the page draws (slots x steps)."""
    policy: str
    n_slots: int
    tickets: list[Ticket]
    steps: list[tuple[Cell, ...]]

    @property
    def owners(self) -> np.ndarray:
        """(steps, slots) int: the request in each slot at each step, -1 where idle."""
        return np.array([[-1 if c.request is None else c.request for c in s] for s in self.steps],
                        dtype=np.int64).reshape(len(self.steps), self.n_slots)

    @property
    def states(self) -> np.ndarray:
        """(steps, slots) str: "prefill", "decode", "held" or "idle"."""
        return np.array([[c.state for c in s] for s in self.steps], dtype="<U7").reshape(len(self.steps), self.n_slots)

    def occupied(self) -> np.ndarray:
        """(steps,) slots holding a request (held ones included)."""
        return (self.states != IDLE).sum(axis=1)

    def summary(self, step_seconds: float | Callable[[int], float] | Mapping | None = None) -> Summary:
        lat = np.array([k.latency for k in self.tickets], dtype=float)
        tokens = sum(k.n_new for k in self.tickets)
        n = len(self.steps)
        seconds = tps = lat_s = None
        if step_seconds is not None:
            clock = np.concatenate([[0.0], np.cumsum(step_cost(step_seconds, self.occupied()))])   # (steps + 1,)
            seconds = float(clock[-1])
            tps = tokens / seconds
            lat_s = float(np.mean([clock[k.returned + 1] - clock[k.arrival] for k in self.tickets]))
        return Summary(self.policy, self.n_slots, len(self.tickets), n, tokens, tokens / n,
                       float(lat.mean()), float(np.median(lat)), float(np.percentile(lat, 90)),
                       float(np.mean([k.first_token_latency for k in self.tickets])), seconds, tps, lat_s)


def simulate(lengths, slots: int = 8, policy: str = "continuous", arrivals=None) -> Schedule:
    """The schedule of requests with these output lengths (request i: lengths[i] tokens, arriving
    at step arrivals[i], all at 0 if None). No model: lengths are all a schedule depends on."""
    arrivals = [0] * len(lengths) if arrivals is None else list(arrivals)
    if len(lengths) == 0:
        raise ValueError("nothing to schedule: no requests")
    if len(arrivals) != len(lengths):
        raise ValueError(f"{len(lengths)} lengths but {len(arrivals)} arrival steps")
    if any(int(n) < 1 for n in lengths) or any(int(a) < 0 for a in arrivals):
        raise ValueError("every request makes at least one token and arrives at a step >= 0")
    tickets = [Ticket(i, int(n), int(a)) for i, (n, a) in enumerate(zip(lengths, arrivals))]
    return Scheduler(tickets, slots, policy).run()


def compare(lengths, slots: int = 8, arrivals=None, step_seconds=None) -> dict:
    """Both policies on one workload: {"static": Summary, "continuous": Summary,
    "throughput_ratio": continuous / static tokens per step (per second with a step cost),
    "latency_ratio": static / continuous mean latency (in seconds with a step cost)}."""
    s, c = (simulate(lengths, slots, p, arrivals).summary(step_seconds) for p in POLICIES)
    timed = step_seconds is not None
    through = c.tokens_per_second / s.tokens_per_second if timed else c.tokens_per_step / s.tokens_per_step
    latency = s.latency_mean_seconds / c.latency_mean_seconds if timed else s.latency_mean / c.latency_mean
    return {"static": s, "continuous": c, "throughput_ratio": through, "latency_ratio": latency}


# -- workloads -----------------------------------------------------------------------------

def lognormal_draw(n: int, median: float, seed: int, sigma: float = 1.0) -> np.ndarray:
    """n numbers exp(sigma z), z standard normal from default_rng(seed), scaled to this median."""
    x = np.exp(sigma * np.random.default_rng(seed).standard_normal(n))
    return x * median / np.median(x)


def nudge(v: np.ndarray, d: int, lo: int, hi: int, first: int, last: int) -> np.ndarray:
    """Sorted integers v: add d (+ or -) one at a time to v[last], v[last - 1], ... v[first], round
    and round again, each staying in lo..hi and the order kept. ValueError if it cannot."""
    v, i, idle = v.copy(), last, 0
    while d:
        s = 1 if d > 0 else -1
        if lo <= v[i] + s <= hi and v[i - 1] <= v[i] + s <= v[i + 1]:
            v[i] += s
            d -= s
            idle = 0
        else:
            idle += 1
            if idle > last - first:
                raise ValueError("these lengths cannot reach that total")
        i = i - 1 if i > first else last
    return v


def exact_lengths(n: int = 64, median: int = 18, maximum: int = 231, total: int = 1874,
                  seed: int = 0, sigma: float = 1.0) -> np.ndarray:
    """n output lengths (int, in arrival order) whose median, maximum and sum are exactly these.

    1. a lognormal draw (lognormal_draw: sigma 1, median `median`); request i keeps its draw's
       rank from here on, so the order of arrival is the draw's;
    2. sorted: the middle value (n odd) or the middle two (n even) become `median`, the largest
       `maximum`; those below the median are rounded (to at least 1);
    3. those between the median and the maximum are bent, v = median (x / median)^g, g found by
       bisection so that the total comes out, then rounded (and kept to median..maximum);
    4. the few tokens rounding leaves over are added (or taken) one at a time to the largest of
       those, then the next largest, ..., never breaking the sorted order (nudge).
    """
    x = lognormal_draw(n, median, seed, sigma)
    rank = np.argsort(x, kind="stable")                 # rank[r]: the request with the r-th shortest draw
    s = x[rank]
    mid = [n // 2] if n % 2 else [n // 2 - 1, n // 2]
    v = np.empty(n)
    v[:mid[0]] = np.maximum(1, np.round(s[:mid[0]]))
    v[mid], v[-1] = median, maximum
    upper = s[mid[-1] + 1:-1]                            # between the median and the maximum
    budget = total - v[:mid[-1] + 1].sum() - maximum
    bent = lambda g: np.clip(median * (upper / median) ** g, median, maximum)
    lo, hi = 0.0, 8.0
    if not bent(lo).sum() <= budget <= bent(hi).sum():
        raise ValueError(f"no {n} lengths with median {median} and maximum {maximum} sum to {total}")
    for _ in range(100):
        g = (lo + hi) / 2
        lo, hi = (g, hi) if bent(g).sum() < budget else (lo, g)
    v[mid[-1] + 1:-1] = np.round(bent(g))
    v = nudge(v.astype(np.int64), total - int(v.sum()), median, maximum, mid[-1] + 1, n - 2)
    out = np.empty(n, dtype=np.int64)
    out[rank] = v
    return out


CHAPTER = dict(n=64, median=18, maximum=231, total=1874)
CHAPTER_SLOTS = 8
CHAPTER_INTERVAL = 6      # one request every 6 steps (see the module's doc)
CHAPTER_SEED = 59         # the first seed from 0 whose stream gives 1.55-1.65x and > 10x


def chapter_workload(seed: int = CHAPTER_SEED, interval: int = CHAPTER_INTERVAL) -> tuple[np.ndarray, np.ndarray]:
    """The chapter's 64 requests: output lengths with median 18, max 231, 1,874 in total
    (exact_lengths with this seed), request i arriving at step i * interval (0: all at once)."""
    lengths = exact_lengths(seed=seed, **CHAPTER)
    return lengths, np.arange(len(lengths)) * interval


def seed_spread(seeds=range(200), interval: int = CHAPTER_INTERVAL, slots: int = CHAPTER_SLOTS) -> dict:
    """The ratios over many workload seeds: {"throughput": (n,), "latency": (n,)} arrays, what
    the choice of CHAPTER_SEED is to be read against."""
    ratios = []
    for s in seeds:
        lengths, arrivals = chapter_workload(s, interval)
        ratios.append(compare(lengths, slots, arrivals))
    return {"seeds": np.array(list(seeds)),
            "throughput": np.array([r["throughput_ratio"] for r in ratios]),
            "latency": np.array([r["latency_ratio"] for r in ratios])}


SPREAD_SEEDS = 200
SPREAD_INTERVALS = (0, CHAPTER_INTERVAL)   # all queued at step 0 (the natural reading), the chapter's stream
PAIR = {"low": 1.55, "high": 1.65, "latency": 10}   # the chapter's pair: 1.6x (rounded) and more than ten
SPREAD_FILE = Path(__file__).resolve().parent / "weights" / "scheduler.json"   # python -m model.scheduler --write


def spread_table(seeds=range(SPREAD_SEEDS)) -> dict:
    """What `--write` commits: seed_spread() for each of SPREAD_INTERVALS, as lists (the page reads
    the file: 400 simulations are seconds in Pyodide)."""
    out = {"seeds": list(seeds), "slots": CHAPTER_SLOTS, "intervals": {}}
    for interval in SPREAD_INTERVALS:
        sp = seed_spread(seeds, interval)
        out["intervals"][str(interval)] = {k: [float(x) for x in sp[k]] for k in ("throughput", "latency")}
    return out


def committed_spread() -> dict:
    """The spread over seeds that `python -m model.scheduler --write` wrote (spread_table())."""
    return json.loads(SPREAD_FILE.read_text(encoding="utf-8"))


def pair_hits(throughput, latency) -> np.ndarray:
    """Which workloads give the chapter's pair: a throughput ratio in PAIR's low..high and a latency
    ratio above PAIR's latency."""
    t, lat = np.asarray(throughput), np.asarray(latency)
    return (t >= PAIR["low"]) & (t <= PAIR["high"]) & (lat > PAIR["latency"])


# -- the real mini-GPT behind the slots ---------------------------------------------------

@dataclass(frozen=True)
class Request:
    """A conversation to serve: its prompt (token ids), how many tokens to sample, and how
    (as model.sampling.generate: its own generator default_rng(seed), top-p 0.9 unless told)."""
    id: int
    prompt: tuple
    n_new: int
    seed: int = 0
    top_p: float | None = 0.9
    temperature: float = 1.0
    top_k: int | None = None
    arrival: int = 0

    def __post_init__(self):
        object.__setattr__(self, "prompt", tuple(int(i) for i in self.prompt))


def check_fits(r: Request, n_ctx: int) -> None:
    """ValueError unless the request's prompt and output fit in the window."""
    if not r.prompt or r.n_new < 1:
        raise ValueError(f"request {r.id}: needs a prompt of at least one token and n_new >= 1")
    if len(r.prompt) + r.n_new > n_ctx:
        raise ValueError(f"request {r.id} does not fit the window: {len(r.prompt)} prompt tokens + "
                         f"{r.n_new} new = {len(r.prompt) + r.n_new} > n_ctx = {n_ctx} positions "
                         f"(the position table has no row {n_ctx + 1})")


def decode_together(gpt, tokens, caches) -> np.ndarray:
    """One step of several conversations in one batched pass (model.batch.step_batch), each with
    its own KVCache of any length: the caches are laid side by side, padded on the left, and
    each one's new keys and values are appended to its own cache. tokens (B,) -> logits (B, V)."""
    from .batch import BatchCache, step_batch
    cfg, B = gpt.config, len(caches)
    S = max(len(c) for c in caches)
    shape = (B, cfg.n_kv_heads, S, cfg.d_head)
    k = [np.zeros(shape) for _ in range(cfg.n_layers)]
    v = [np.zeros(shape) for _ in range(cfg.n_layers)]
    valid = np.zeros((B, S), dtype=bool)
    for b, c in enumerate(caches):
        t = len(c)
        for l in range(cfg.n_layers):
            k[l][b, :, S - t:], v[l][b, :, S - t:] = c.k[l], c.v[l]     # (H_kv, t, d_k)
        valid[b, S - t:] = True
    batch = BatchCache(k, v, valid, np.array([len(c) for c in caches], dtype=np.int64))
    z = step_batch(gpt, tokens, batch)                                   # (B, V)
    for b, c in enumerate(caches):
        for l in range(cfg.n_layers):
            c.append(l, batch.k[l][b, :, -1:], batch.v[l][b, :, -1:])   # (H_kv, 1, d_k)
    return z


@dataclass
class Served:
    """What serving gave: each request's text (prompt + its new tokens) and the schedule."""
    texts: dict[int, list[int]]
    schedule: Schedule


class Server:
    """The scheduler driving the mini-GPT: each step, the prefills of the requests entering,
    one batched decoding step of the others, one token sampled for each. Held slots (static)
    are not computed: their rows would be padding nobody reads."""

    def __init__(self, gpt, requests, slots: int = 4, policy: str = "continuous"):
        requests = list(requests)
        if not requests:
            raise ValueError("nothing to serve: no requests")
        if len({r.id for r in requests}) != len(requests):
            raise ValueError("request ids must be unique")
        for r in requests:
            check_fits(r, gpt.config.n_ctx)
        self.gpt, self.requests = gpt, {r.id: r for r in requests}
        self.scheduler = Scheduler([Ticket(r.id, r.n_new, r.arrival) for r in requests], slots, policy)
        self.texts = {r.id: list(r.prompt) for r in requests}
        self.rngs = {r.id: np.random.default_rng(r.seed) for r in requests}
        self.caches = {}

    @property
    def done(self) -> bool:
        return self.scheduler.done

    def sample(self, rid: int, z) -> int:
        from .sampling import sample
        r = self.requests[rid]
        tok = sample(z, self.rngs[rid], r.temperature, r.top_k, r.top_p)
        self.texts[rid].append(tok)
        return tok

    def step(self) -> dict:
        """One step -> {"step": t, "cells": (slots,) Cells, "tokens": {request id: token made}}."""
        t = self.scheduler.t
        cells = self.scheduler.step()
        logits = {}
        for c in cells:
            if c.state == PREFILL:
                z, self.caches[c.request] = self.gpt.prefill(list(self.requests[c.request].prompt))
                logits[c.request] = z[-1]
        decoding = [c.request for c in cells if c.state == DECODE]
        if decoding:
            z = decode_together(self.gpt, [self.texts[i][-1] for i in decoding], [self.caches[i] for i in decoding])
            logits.update(zip(decoding, z))
        made = {rid: self.sample(rid, z) for rid, z in logits.items()}
        for rid in made:
            if len(self.texts[rid]) == len(self.requests[rid].prompt) + self.requests[rid].n_new:
                del self.caches[rid]                     # done: its cache is freed at once
        return {"step": t, "cells": cells, "tokens": made}

    def run(self) -> Served:
        while not self.done:
            self.step()
        return Served(self.texts, self.scheduler.schedule())


def serve(gpt, requests, slots: int = 4, policy: str = "continuous") -> Served:
    """Every request through the mini-GPT with this many slots and this policy."""
    return Server(gpt, requests, slots, policy).run()


def serve_timed(gpt, requests, slots: int = 4, policy: str = "continuous", clock=time.perf_counter):
    """serve() on the clock -> (Served, ends): ends[0] = 0 is the start (before the server is made),
    ends[t + 1] the seconds from it to the end of step t. A request's latency in seconds is
    ends[returned + 1] - ends[arrival]; the whole run took ends[-1]."""
    t0 = clock()
    server = Server(gpt, requests, slots, policy)
    ends = [0.0]
    while not server.done:
        server.step()
        ends.append(clock() - t0)
    return Served(server.texts, server.scheduler.schedule()), np.array(ends)


@dataclass(frozen=True)
class ServedRound:
    """One policy's timed run: its seconds in all and every request's latency in seconds."""
    seconds: float
    latencies: np.ndarray

    @property
    def mean(self) -> float:
        return float(self.latencies.mean())


def serve_round(gpt, requests, slots: int = 4) -> dict:
    """One interleaved round: serve_timed() of each policy in turn (the same conditions for both)
    -> {policy: ServedRound}."""
    out = {}
    for p in POLICIES:
        served, ends = serve_timed(gpt, requests, slots, p)
        lat = np.array([ends[k.returned + 1] - ends[k.arrival] for k in served.schedule.tickets])
        out[p] = ServedRound(float(ends[-1]), lat)
    return out


def served_clock(rounds: list[dict], tokens: int) -> dict:
    """Rounds of serve_round() -> per policy the medians over rounds (seconds, tokens per second as
    tokens / the median seconds, latency mean / median / p90), and continuous against static as
    model.timing.comparison reads interleaved samples: "throughput" (static seconds over continuous
    seconds: the ratio of tokens per second) and "latency" (static mean latency over continuous),
    each the ratio of the medians with the lowest and highest round's ratio as its spread."""
    from .timing import comparison
    per = {}
    for p in POLICIES:
        rs = [r[p] for r in rounds]
        seconds = float(np.median([r.seconds for r in rs]))
        per[p] = {"seconds": seconds, "per_second": tokens / seconds,
                  "mean_s": float(np.median([r.mean for r in rs])),
                  "median_s": float(np.median([np.median(r.latencies) for r in rs])),
                  "p90_s": float(np.median([np.percentile(r.latencies, 90) for r in rs]))}
    samples = lambda f, p: [f(r[p]) for r in rounds]
    return {**per, "rounds": len(rounds),
            "throughput": comparison(samples(lambda r: r.seconds, "continuous"), samples(lambda r: r.seconds, "static")),
            "latency": comparison(samples(lambda r: r.mean, "continuous"), samples(lambda r: r.mean, "static"))}


PROMPTS = ("La Nela", "Pablo", "Marianela y", "Se puso el sol.", "¿Qué", "Teodoro Golfín",
           "Celipín", "Florentina")


def window_requests(tokenizer, n: int = 16, median: float = 8, seed: int = 0, n_ctx: int = 64,
                    top_p: float | None = 0.9) -> list[Request]:
    """n real requests that fit the mini-GPT's window: prompt i is PROMPTS[i mod 8], its output
    length a lognormal draw (sigma 1, this median, lognormal_draw with this seed) rounded and
    kept to 1..n_ctx - len(prompt); request i samples with seed i; all arrive at step 0."""
    x = lognormal_draw(n, median, seed)
    out = []
    for i in range(n):
        prompt = tokenizer.encode(PROMPTS[i % len(PROMPTS)])
        out.append(Request(i, prompt, int(np.clip(np.round(x[i]), 1, n_ctx - len(prompt))), seed=i, top_p=top_p))
    return out


def measure_step_seconds(gpt, occupancies=range(1, 9), position: int = 32, min_seconds: float = 0.02) -> dict:
    """{B: seconds of the model's batched decoding step (model.batch.step_batch) of B conversations
    at `position`}: a step cost for Schedule.summary (best of several rounds, model.timing.time_per_call)."""
    from .batch import prefill_batch, step_batch
    from .timing import time_per_call
    out = {}
    for B in occupancies:
        _, cache = prefill_batch(gpt, [list(range(1, position))] * B)
        out[B] = time_per_call(lambda B=B, cache=cache: step_batch(gpt, [1] * B, cache.copy()), min_seconds=min_seconds)
    return out


def format_comparison(r: dict) -> str:
    rows = [f"{'policy':>10} {'steps':>6} {'tokens':>6} {'tok/step':>8} {'tok/s':>9} {'latency mean':>12} "
            f"{'median':>7} {'p90':>7}"]
    for s in (r["static"], r["continuous"]):
        tps = "" if s.tokens_per_second is None else f"{s.tokens_per_second:,.0f}"
        rows.append(f"{s.policy:>10} {s.steps:>6} {s.tokens:>6} {s.tokens_per_step:>8.2f} {tps:>9} "
                    f"{s.latency_mean:>12.1f} {s.latency_median:>7.1f} {s.latency_p90:>7.1f}")
    rows.append(f"continuous / static: throughput {r['throughput_ratio']:.2f}x, "
                f"mean latency {r['latency_ratio']:.1f}x better")
    return "\n".join(rows)


def serve_both(gpt, requests, slots: int = 4, step_seconds=None) -> dict:
    """Both policies on the mini-GPT: as compare(), plus "texts_as_alone": whether every text is
    the one model.sampling.generate gives that request alone with its seed."""
    from .sampling import generate
    runs = {p: serve(gpt, requests, slots, p) for p in POLICIES}
    alone = {r.id: generate(gpt, gpt.tokenizer.decode(r.prompt), r.n_new, r.seed, r.temperature, r.top_k, r.top_p)
             for r in requests}
    s, c = (runs[p].schedule.summary(step_seconds) for p in POLICIES)
    timed = step_seconds is not None
    return {"static": s, "continuous": c,
            "throughput_ratio": c.tokens_per_second / s.tokens_per_second if timed else c.tokens_per_step / s.tokens_per_step,
            "latency_ratio": s.latency_mean_seconds / c.latency_mean_seconds if timed else s.latency_mean / c.latency_mean,
            "texts_as_alone": all(runs[p].texts[i] == alone[i] for p in POLICIES for i in alone)}


def main(argv=None) -> int:
    """python -m model.scheduler: the chapter's simulation at the step cost measured here, the
    spread over workload seeds, and both policies on the mini-GPT itself, served on the clock in
    interleaved rounds. --write also writes the spread to model/weights/scheduler.json."""
    import argparse

    from .gpt import MiniGPT
    from .threads import one_blas_thread
    ap = argparse.ArgumentParser(prog="python -m model.scheduler")
    ap.add_argument("--write", action="store_true", help=f"write the spread over seeds to {SPREAD_FILE.name}")
    ap.add_argument("--rounds", type=int, default=9, help="interleaved rounds of serving both ways")
    args = ap.parse_args(argv)
    one_blas_thread()
    gpt = MiniGPT.load()
    costs = measure_step_seconds(gpt, range(1, CHAPTER_SLOTS + 1), min_seconds=0.05)
    cost = costs[CHAPTER_SLOTS]
    lengths, arrivals = chapter_workload()
    print(f"workload: {len(lengths)} requests, median {np.median(lengths):g}, max {lengths.max()}, "
          f"total {lengths.sum():,}; seed {CHAPTER_SEED}, one every {CHAPTER_INTERVAL} steps; "
          f"{CHAPTER_SLOTS} slots, a step {cost * 1e3:.3f} ms (measured: step_batch of {CHAPTER_SLOTS} at position 32)")
    print(format_comparison(compare(lengths, CHAPTER_SLOTS, arrivals, step_seconds=cost)))
    print("\nthe same 64 lengths, all queued at step 0:")
    print(format_comparison(compare(lengths, CHAPTER_SLOTS, step_seconds=cost)))
    table = spread_table()
    if args.write:
        SPREAD_FILE.write_text(json.dumps(table) + "\n", encoding="utf-8")
    for interval in SPREAD_INTERVALS:
        sp = table["intervals"][str(interval)]
        q = lambda a: " / ".join(f"{x:.2f}" for x in np.percentile(a, [10, 50, 90]))
        hits = int(pair_hits(sp["throughput"], sp["latency"]).sum())
        print(f"\n{len(table['seeds'])} seeds, {'all at step 0' if interval == 0 else f'one every {interval} steps'}: "
              f"throughput ratio {q(sp['throughput'])} (10th / 50th / 90th percentile), "
              f"latency ratio {q(sp['latency'])} (highest {max(sp['latency']):.2f}); "
              f"{hits} seeds give {PAIR['low']}-{PAIR['high']}x and > {PAIR['latency']}x")
    if args.write:
        print(f"(written to {SPREAD_FILE})")
    reqs = window_requests(gpt.tokenizer)
    lens = [r.n_new for r in reqs]
    print(f"\non the mini-GPT: {len(reqs)} requests (window_requests: output median {np.median(lens):g}, "
          f"max {max(lens)}, {sum(lens)} in all), 4 slots, all at step 0; modelled: each step costing what "
          f"step_batch of its occupied slots (padding included) measured here "
          f"({', '.join(f'{costs[b] * 1e3:.2f}' for b in range(1, 5))} ms for 1-4)")
    both = serve_both(gpt, reqs, 4, costs)
    print(format_comparison(both))
    print(f"every text the same as that request decoded alone with its seed: {both['texts_as_alone']}")
    rounds = [serve_round(gpt, reqs, 4) for _ in range(args.rounds)]
    m = served_clock(rounds, sum(lens))
    print(f"\nmeasured: serve() of both policies in {m['rounds']} interleaved rounds (medians over rounds)")
    print(f"{'policy':>10} {'ms':>7} {'tok/s':>7} {'latency ms mean':>15} {'median':>7} {'p90':>7}")
    for p in POLICIES:
        r = m[p]
        print(f"{p:>10} {r['seconds'] * 1e3:>7.1f} {r['per_second']:>7,.0f} {r['mean_s'] * 1e3:>15.1f} "
              f"{r['median_s'] * 1e3:>7.1f} {r['p90_s'] * 1e3:>7.1f}")
    t, lat = m["throughput"], m["latency"]
    print(f"continuous / static: throughput {t.ratio:.2f}x (rounds {t.ratio_low:.2f}-{t.ratio_high:.2f}), "
          f"mean latency {lat.ratio:.2f}x better (rounds {lat.ratio_low:.2f}-{lat.ratio_high:.2f}); "
          f"modelled {both['throughput_ratio']:.2f}x and {both['latency_ratio']:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
