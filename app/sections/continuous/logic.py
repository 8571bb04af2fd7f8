"""Continuous batching in the reader's browser: real requests through the mini-GPT behind 4 slots,
served both ways (static and continuous), the slots over time, both policies served on the reader's
clock, a model of their cost beside it, and the chapter's simulation: its natural reading (all 64
requests queued at once) over 200 workload seeds first, then the pair the chapter quotes. No Panel
here (the view is app/sections/continuous/view.py); imported only when the reader opens its section,
and with it model/scheduler.py.

- `window_runs(gpt)`: the 16 requests of `model.scheduler.window_requests` (each with its own seed,
  prompt and output length, all fitting the 64-position window) served both ways by
  `model.scheduler.serve`, and each decoded alone (`model.sampling.generate`): the texts compared.
- `cells(schedule)`: the picture's cells (step, slot, request, state) and `segments(schedule)`: each
  request's stay in its slot (entered, last token, left).
- `ServeLab`: one interleaved round per `advance()`: `model.scheduler.serve_round` (the 16 requests
  served both ways, timed step by step) and `model.batch.step_batch` of 1-4 and 8 conversations.
  `measured()`: medians over the rounds and the ratios with their spread (`model.scheduler.served_clock`);
  `costs`: the step costs' medians, which only the model and the simulation use.
- `modelled_rows`: both policies as a model of cost: each step charged a step of its occupied slots.
- `seed_readings`: the ratios over 200 seeds for both readings (model/weights/scheduler.json, written
  by `python -m model.scheduler --write`); `chapter_rows`: the chapter's pair at one step cost.
"""

from __future__ import annotations

import functools
import statistics
from dataclasses import dataclass

import numpy as np

from model.batch import prefill_batch, step_batch
from model.sampling import generate
from model.scheduler import (
    CHAPTER,
    CHAPTER_INTERVAL,
    CHAPTER_SEED,
    CHAPTER_SLOTS,
    HELD,
    IDLE,
    PAIR,
    POLICIES,
    Schedule,
    chapter_workload,
    committed_spread,
    pair_hits,
    serve,
    serve_round,
    served_clock,
    simulate,
    step_cost,
    window_requests,
)
from model.timing import calls_for, per_call

from ...state.clock import ratio_digits
from ..stepwise import Stepwise

SLOTS = 4  # the mini-GPT's server
OCCUPANCIES = (1, 2, 3, 4, CHAPTER_SLOTS)  # measured: every occupancy of 4 slots, and the chapter's 8
POSITION = 32  # where a step is timed (the caches' length: model.scheduler.measure_step_seconds)
ROUNDS = 9  # interleaved rounds, the median kept


# -- the mini-GPT's requests, served both ways ------------------------------------------------------


@dataclass(frozen=True)
class WindowRuns:
    """The requests, each policy's schedule and texts, and each request decoded alone."""

    requests: tuple
    schedules: dict
    texts: dict  # policy -> {request id: prompt + output ids}
    alone: dict  # request id -> prompt + output ids, decoded alone with its seed

    def same(self, policy: str) -> int:
        """How many texts of this policy are the one that request gives alone."""
        return sum(self.texts[policy][r.id] == self.alone[r.id] for r in self.requests)

    @property
    def all_same(self) -> bool:
        return all(self.same(p) == len(self.requests) for p in POLICIES)


_RUNS: dict = {}  # id(gpt) -> (gpt, slots, WindowRuns): one per checkpoint, for every reader


def window_runs(gpt, slots: int = SLOTS) -> WindowRuns:
    """The 16 window requests through the mini-GPT with `slots` slots, both ways (kept: the same for
    every reader of one checkpoint)."""
    kept = _RUNS.get(id(gpt))
    if kept is not None and kept[0] is gpt and kept[1] == slots:
        return kept[2]
    runs = serve_window(gpt, slots)
    _RUNS[id(gpt)] = (gpt, slots, runs)
    return runs


def serve_window(gpt, slots: int) -> WindowRuns:
    requests = tuple(window_requests(gpt.tokenizer, n_ctx=gpt.config.n_ctx))
    runs = {p: serve(gpt, requests, slots, p) for p in POLICIES}
    alone = {
        r.id: generate(gpt, gpt.tokenizer.decode(r.prompt), r.n_new, r.seed, r.temperature, r.top_k, r.top_p)
        for r in requests
    }
    return WindowRuns(requests, {p: runs[p].schedule for p in POLICIES}, {p: runs[p].texts for p in POLICIES}, alone)


def cells(schedule: Schedule) -> list[tuple[int, int, int, str]]:
    """Every slot at every step: (step, slot, request id or -1, state), steps and slots from 0."""
    owners, states = schedule.owners, schedule.states
    steps, slots = owners.shape
    return [(t, s, int(owners[t, s]), str(states[t, s])) for t in range(steps) for s in range(slots)]


@dataclass(frozen=True)
class Segment:
    """One request's stay in its slot: entered (its prefill step), finished (its last token), left
    (its slot's last step: the group's end with static batching), all steps from 0, both ends held."""

    request: int
    slot: int
    entered: int
    finished: int
    left: int


def segments(schedule: Schedule) -> list[Segment]:
    out = []
    for k in schedule.tickets:
        left = k.returned  # a slot is given up at the step the answer goes back
        out.append(Segment(k.id, k.slot, k.admitted, k.finished, left))
    return sorted(out, key=lambda g: (g.slot, g.entered))


def counts(schedule: Schedule) -> dict:
    """The picture in numbers: steps, slot-steps in all, held (padding) and idle ones."""
    states = schedule.states
    return {
        "steps": int(states.shape[0]),
        "cells": int(states.size),
        "held": int((states == HELD).sum()),
        "idle": int((states == IDLE).sum()),
    }


# -- the clock --------------------------------------------------------------------------------------


class ServeLab(Stepwise):
    """One interleaved round per `advance()`: the window's requests served both ways on the clock
    (model.scheduler.serve_round, one policy after the other), then one step of B conversations
    (model.batch.step_batch on copies of a cache of `position` - 1 tokens) for every B of
    `occupancies`, each timed once in turn (the same conditions for all)."""

    def __init__(
        self,
        gpt,
        requests,
        slots: int = SLOTS,
        occupancies=OCCUPANCIES,
        rounds: int = ROUNDS,
        position: int = POSITION,
        min_seconds: float = 0.004,
    ):
        super().__init__(range(rounds))
        self.gpt, self.requests, self.slots = gpt, tuple(requests), slots
        self.occupancies, self.position = tuple(occupancies), position
        self.samples, self.min_seconds = rounds, min_seconds
        self.fns = self.calls = None

    def prepare(self) -> None:
        ids = [list(range(1, self.position))]
        self.fns = []
        for B in self.occupancies:
            _, cache = prefill_batch(self.gpt, ids * B)
            self.fns.append(lambda B=B, cache=cache: step_batch(self.gpt, [1] * B, cache.copy()))
        self.calls = [calls_for(f, self.min_seconds) for f in self.fns]

    def measure(self, _round: int) -> dict:
        if self.fns is None:
            self.prepare()
        served = serve_round(self.gpt, self.requests, self.slots)
        steps = {B: per_call(f, n) for B, f, n in zip(self.occupancies, self.fns, self.calls)}
        return {"served": served, "steps": steps}

    @property
    def complete(self) -> bool:
        return self.finished and not self.cancelled and bool(self.results)

    @property
    def samples_by_b(self) -> dict:
        return {B: [r["steps"][B] for r in self.results.values()] for B in self.occupancies}

    @property
    def costs(self) -> dict | None:
        """{B: seconds of a step of B conversations}, the median of the rounds; None until finished."""
        if not self.complete:
            return None
        return {B: statistics.median(s) for B, s in self.samples_by_b.items()}

    def measured(self) -> dict | None:
        """Both policies served on the clock (model.scheduler.served_clock over the rounds), with each
        policy's steps; None until finished."""
        if not self.complete:
            return None
        rounds = [r["served"] for r in self.results.values()]
        return served_clock(rounds, sum(r.n_new for r in self.requests))

    def rows(self) -> list[dict]:
        """The step costs' table so far: B, the median, the lowest and highest round."""
        return [
            {"B": B, "median_s": statistics.median(s), "low_s": min(s), "high_s": max(s), "n": len(s)}
            for B, s in self.samples_by_b.items()
            if s
        ]


def shown(x: float) -> float:
    """A ratio as the page writes it (app.state.clock.ratio_text)."""
    return float(round(x, ratio_digits(x)))


def verdict(c) -> str:
    """What a measured ratio (a model.timing.Comparison, continuous against static) may be called, as
    its spread is written: "more" if even its lowest round is above 1, "less" if even its highest is
    below 1, "even" if its spread holds 1."""
    return "more" if shown(c.ratio_low) > 1 else "less" if shown(c.ratio_high) < 1 else "even"


MEASURED_KEYS = {
    "throughput": {"more": "cb_window_faster", "even": "cb_window_even", "less": "cb_window_slower"},
    "latency": {"more": "cb_window_sooner", "even": "cb_window_same_latency", "less": "cb_window_later"},
}


def measured_sentence_keys(m: dict) -> tuple[str, str]:
    """The keys of the sentences under the measured table, chosen from its ratios' spreads."""
    return tuple(MEASURED_KEYS[k][verdict(m[k])] for k in ("throughput", "latency"))


# -- a model of cost: both policies at the measured step costs -----------------------------------------------------------


def latencies_seconds(schedule: Schedule, costs) -> np.ndarray:
    """Each request's latency in seconds: from its arrival to its answer, each step costing what a
    step with that many occupied slots costs (held ones count: a fixed batch computes its padding)."""
    clock = np.concatenate([[0.0], np.cumsum(step_cost(costs, schedule.occupied()))])
    return np.array([clock[k.returned + 1] - clock[k.arrival] for k in schedule.tickets])


def policy_row(schedule: Schedule, costs) -> dict:
    """One policy's row: steps, tokens, tokens per step and per second, latency in steps and seconds."""
    s = schedule.summary(costs)
    lat = latencies_seconds(schedule, costs)
    return {
        "policy": schedule.policy,
        "steps": s.steps,
        "tokens": s.tokens,
        "per_step": s.tokens_per_step,
        "per_second": s.tokens_per_second,
        "seconds": s.seconds,
        "mean_steps": s.latency_mean,
        "median_steps": s.latency_median,
        "p90_steps": s.latency_p90,
        "mean_s": float(lat.mean()),
        "median_s": float(np.median(lat)),
        "p90_s": float(np.percentile(lat, 90)),
    }


def ratios(rows: dict) -> dict:
    """continuous / static throughput (per second), static / continuous latency (mean, median, p90)."""
    s, c = rows["static"], rows["continuous"]
    return {
        "throughput": c["per_second"] / s["per_second"],
        "mean": s["mean_s"] / c["mean_s"],
        "median": s["median_s"] / c["median_s"],
        "p90": s["p90_s"] / c["p90_s"],
    }


def modelled_rows(runs: WindowRuns, costs: dict) -> dict:
    """A model of the mini-GPT's requests' cost, not a measurement: each step of each policy charged
    the measured step_batch of its occupied slots (held ones included), no prefill."""
    rows = {p: policy_row(runs.schedules[p], {B: costs[B] for B in range(1, SLOTS + 1)}) for p in POLICIES}
    return {**rows, "ratios": ratios(rows)}


@functools.lru_cache(maxsize=1)
def chapter_schedules(seed: int = CHAPTER_SEED, interval: int = CHAPTER_INTERVAL) -> dict:
    """The chapter's 64 requests, one every `interval` steps, through 8 slots both ways:
    {"stream": {policy: Schedule}, "lengths": array}."""
    lengths, arrivals = chapter_workload(seed, interval)
    return {"lengths": lengths, "stream": {p: simulate(lengths, CHAPTER_SLOTS, p, arrivals) for p in POLICIES}}


def chapter_rows(cost: float) -> dict:
    """The chapter's pair (the stream of one request every CHAPTER_INTERVAL steps, seed CHAPTER_SEED)
    at one step cost (the reader's step of 8, for every step, as the chapter says): both policies and
    their ratios, which are the steps' whatever the cost."""
    sim = chapter_schedules()
    rows = {p: policy_row(sim["stream"][p], cost) for p in POLICIES}
    return {**rows, "ratios": ratios(rows), "workload": chapter_facts()}


@functools.lru_cache(maxsize=1)
def seed_readings() -> dict:
    """Both readings of the chapter over every committed workload seed: {"at_once": ..., "stream":
    ...}, each {"throughput"/"latency": {"p10", "p50", "p90", "max"}, "hits": seeds that give the
    chapter's pair}, and "seeds", "first", "last", "slots"."""
    table = committed_spread()
    out = {"seeds": len(table["seeds"]), "first": table["seeds"][0], "last": table["seeds"][-1]}
    out["slots"] = table["slots"]
    for name, interval in (("at_once", 0), ("stream", CHAPTER_INTERVAL)):
        sp = table["intervals"][str(interval)]
        reading = {"hits": int(pair_hits(sp["throughput"], sp["latency"]).sum())}
        for k in ("throughput", "latency"):
            p10, p50, p90 = np.percentile(sp[k], [10, 50, 90])
            reading[k] = {"p10": float(p10), "p50": float(p50), "p90": float(p90), "max": float(max(sp[k]))}
        out[name] = reading
    return out


def step_gains(schedules: dict) -> tuple[float, float]:
    """Continuous over static, counted in steps (no clock): tokens a step, and mean latency."""
    s, c = (schedules[p].summary() for p in POLICIES)
    return c.tokens_per_step / s.tokens_per_step, s.latency_mean / c.latency_mean


def chapter_pair() -> dict:
    """The tuned pair's ratios (in steps: the same at any step cost) and what picked it: a throughput
    ratio from "low" to "high" and a latency ratio "over"."""
    throughput, latency = step_gains(chapter_schedules()["stream"])
    return {
        "throughput": throughput,
        "latency": latency,
        "low": PAIR["low"],
        "high": PAIR["high"],
        "over": PAIR["latency"],
    }


def chapter_facts() -> dict:
    """The chapter's workload in numbers, from its lengths: how many, median, maximum, total; its
    seed, the steps between arrivals and the slots."""
    lengths = chapter_schedules()["lengths"]
    return {
        "n": len(lengths),
        "median": float(np.median(lengths)),
        "max": int(lengths.max()),
        "total": int(lengths.sum()),
        "seed": CHAPTER_SEED,
        "interval": CHAPTER_INTERVAL,
        "slots": CHAPTER_SLOTS,
    }


def window_facts(runs: WindowRuns, n_ctx: int) -> dict:
    """What the window does to the requests: their output median and maximum, the longest a member
    can hold a fixed batch (n_ctx - 1 steps), the chapter's maximum, and the two gains counted in
    steps (no clock): continuous over static in tokens a step ("tps") and in mean latency ("lat")."""
    n_new = [r.n_new for r in runs.requests]
    tps, lat = step_gains(runs.schedules)
    return {
        "tps": tps,
        "lat": lat,
        "n": len(n_new),
        "median": float(np.median(n_new)),
        "max": max(n_new),
        "total": sum(n_new),
        "hold": n_ctx - 1,
        "chapter_max": CHAPTER["maximum"],
        "n_ctx": n_ctx,
    }
