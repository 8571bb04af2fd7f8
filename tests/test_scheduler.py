"""Continuous batching: the scheduler's two policies, step by step, on the real mini-GPT (every text
as if decoded alone) and on lengths alone (the chapter's simulation)."""

import numpy as np
import pytest

from model import generate
from model.scheduler import (
    CHAPTER_SEED,
    DECODE,
    HELD,
    IDLE,
    POLICIES,
    PREFILL,
    PROMPTS,
    Request,
    Server,
    chapter_workload,
    compare,
    exact_lengths,
    serve,
    simulate,
    window_requests,
)


@pytest.fixture(scope="module")
def requests(gpt):
    """12 requests of the window's workload, two of them sampled otherwise (top-k, temperature)."""
    reqs = window_requests(gpt.tokenizer, 12)
    reqs[3] = Request(3, reqs[3].prompt, reqs[3].n_new, seed=3, top_p=None, top_k=20, temperature=0.8)
    reqs[5] = Request(5, reqs[5].prompt, reqs[5].n_new, seed=5, top_p=0.5, arrival=7)
    return reqs


@pytest.mark.parametrize("policy", POLICIES)
def test_every_text_is_what_its_seed_gives_alone(gpt, requests, policy):
    run = serve(gpt, requests, slots=3, policy=policy)
    for r in requests:
        alone = generate(
            gpt,
            PROMPTS[r.id % len(PROMPTS)],
            r.n_new,
            seed=r.seed,
            temperature=r.temperature,
            top_k=r.top_k,
            top_p=r.top_p,
        )
        assert run.texts[r.id] == alone
    states = run.schedule.states
    assert (states == DECODE).any() and ((states == HELD).any() == (policy == "static"))


def test_the_hand_worked_example():
    """Lengths 4, 1, 1, 1, 1 on two slots, all at step 0. Static: {4, 1} for 4 steps (the 1 held
    three), {1, 1}, {1}: 6 steps; answers at steps 3, 3, 4, 4, 5. Continuous: slot 1 takes the
    short ones one a step: 4 steps; answers at 3, 0, 1, 2, 3."""
    static, cont = simulate([4, 1, 1, 1, 1], 2, "static"), simulate([4, 1, 1, 1, 1], 2, "continuous")
    assert [k.latency for k in static.tickets] == [4, 4, 5, 5, 6] and len(static.steps) == 6
    assert [k.latency for k in cont.tickets] == [4, 1, 2, 3, 4] and len(cont.steps) == 4
    assert static.states.tolist() == [
        [PREFILL, PREFILL],
        [DECODE, HELD],
        [DECODE, HELD],
        [DECODE, HELD],
        [PREFILL, PREFILL],
        [PREFILL, IDLE],
    ]
    assert static.owners.tolist() == [[0, 1], [0, 1], [0, 1], [0, 1], [2, 3], [4, -1]]
    assert cont.owners.tolist() == [[0, 1], [0, 2], [0, 3], [0, 4]]
    s, c = static.summary(), cont.summary()
    assert (s.tokens, s.steps, s.latency_mean, c.steps, c.latency_mean) == (8, 6, 4.8, 4, 2.8)
    assert c.tokens_per_step == 2.0 and s.latency_median == 5 and c.first_token_mean == pytest.approx(2.2)  # 1 1 2 3 4


def random_workloads(n=150):
    rng = np.random.default_rng(0)
    for _ in range(n):
        m = int(rng.integers(1, 30))
        lengths = np.maximum(1, np.round(np.exp(rng.normal(1.5, 1.0, m)))).astype(int)
        arrivals = np.sort(rng.integers(0, 40, m)) if rng.random() < 0.5 else None
        yield lengths, arrivals, int(rng.integers(1, 9))


def test_continuous_never_takes_longer_than_static():
    """Not only in steps: FIFO with a free slot taken at once starts every request no later than
    static batching does, so every single answer comes back no later either."""
    strictly = 0
    for lengths, arrivals, slots in random_workloads():
        s, c = (simulate(lengths, slots, p, arrivals) for p in POLICIES)
        assert len(c.steps) <= len(s.steps)
        assert all(kc.returned <= ks.returned for kc, ks in zip(c.tickets, s.tickets))
        strictly += len(c.steps) < len(s.steps)
    assert strictly > 50


@pytest.mark.parametrize("policy", POLICIES)
def test_a_slot_holds_one_request_and_a_request_one_slot(policy):
    for lengths, arrivals, slots in random_workloads(60):
        sched = simulate(lengths, slots, policy, arrivals)
        owners, states = sched.owners, sched.states
        for row in owners:  # no request in two slots at once
            held = row[row >= 0]
            assert len(set(held.tolist())) == len(held)
        for k in sched.tickets:
            steps, where = np.nonzero(owners == k.id)
            assert set(where.tolist()) == {k.slot}  # always the same slot
            assert steps.tolist() == list(range(k.admitted, k.returned + 1))  # from prefill to answer
            made = np.isin(states[steps, where], [PREFILL, DECODE]).sum()
            assert made == k.n_new and k.finished == k.admitted + k.n_new - 1 and k.admitted >= k.arrival
        if policy == "static":  # a group enters together, into an empty server
            for row in states:
                if (row == PREFILL).any():
                    assert (row[row != IDLE] == PREFILL).all()


def test_the_chapter_workload_is_exact_and_gives_its_ratios():
    lengths, arrivals = chapter_workload()
    assert (len(lengths), int(np.median(lengths)), lengths.max(), lengths.sum()) == (64, 18, 231, 1874)
    assert np.array_equal(lengths, exact_lengths(seed=CHAPTER_SEED)) and arrivals.tolist() == list(range(0, 384, 6))
    r = compare(lengths, 8, arrivals)
    assert 1.5 <= r["throughput_ratio"] <= 1.7 and r["latency_ratio"] > 10
    timed = compare(lengths, 8, arrivals, step_seconds=1.06e-3)  # a constant cost: the same ratios
    assert timed["throughput_ratio"] == pytest.approx(r["throughput_ratio"])
    assert timed["latency_ratio"] == pytest.approx(r["latency_ratio"])
    assert timed["static"].seconds == pytest.approx(timed["static"].steps * 1.06e-3)
    at_once = compare(lengths, 8)  # all queued at step 0
    assert at_once["throughput_ratio"] > 1.5 and at_once["latency_ratio"] < 10


def test_exact_lengths_for_other_targets_and_impossible_ones():
    for seed in range(5):
        v = exact_lengths(n=21, median=5, maximum=40, total=200, seed=seed)
        assert (np.median(v), v.max(), v.sum(), v.min() >= 1) == (5, 40, 200, True)
    with pytest.raises(ValueError, match="sum to 100000"):
        exact_lengths(total=100_000)


def test_a_cost_that_depends_on_occupancy():
    """Seconds are the sum of each step's cost at its occupancy, held slots included."""
    sched = simulate([4, 1, 1, 1, 1], 2, "static")
    cost = {0: 0.0, 1: 1.0, 2: 1.5}
    s = sched.summary(step_seconds=cost)
    assert sched.occupied().tolist() == [2, 2, 2, 2, 2, 1]
    assert s.seconds == 5 * 1.5 + 1.0 and s.tokens_per_second == 8 / 8.5
    assert s.latency_mean_seconds == pytest.approx((6 + 6 + 7.5 + 7.5 + 8.5) / 5)
    assert sched.summary(step_seconds=lambda n: cost[n]).seconds == s.seconds


def test_a_request_must_fit_the_window(gpt):
    ids = gpt.tokenizer.encode("La Nela")
    serve(gpt, [Request(0, ids, 62)], slots=1)  # 2 + 62 = 64: fits
    with pytest.raises(ValueError, match="2 prompt tokens \\+ 63 new = 65 > n_ctx = 64"):
        Server(gpt, [Request(0, ids, 63)])
    with pytest.raises(ValueError, match="n_new >= 1"):
        Server(gpt, [Request(0, ids, 0)])
    with pytest.raises(ValueError, match="unique"):
        Server(gpt, [Request(0, ids, 3), Request(0, ids, 4)])
    assert all(len(r.prompt) + r.n_new <= 64 for r in window_requests(gpt.tokenizer, 40, median=30))


def test_each_step_makes_one_token_per_working_slot(gpt, requests):
    server = Server(gpt, requests[:6], slots=4, policy="static")
    made = 0
    while not server.done:
        out = server.step()
        working = [c.request for c in out["cells"] if c.state in (PREFILL, DECODE)]
        assert sorted(out["tokens"]) == sorted(working)
        assert set(server.caches) <= {c.request for c in out["cells"] if c.state != IDLE}  # done ones freed
        made += len(out["tokens"])
    assert made == sum(r.n_new for r in requests[:6]) and not server.caches
    with pytest.raises(RuntimeError, match="nothing left"):
        server.step()


def test_the_package_does_not_load_the_chapters_modules_at_start():
    import subprocess
    import sys
    from pathlib import Path

    code = "import model, sys; model.MiniGPT.load(); print(' '.join(m for m in sys.modules if m.startswith('model')))"
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[1],
    ).stdout.split()
    assert "model.gpt" in out and not {"model.scheduler", "model.paged", "model.wquant"} & set(out)
