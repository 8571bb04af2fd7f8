"""Continuous batching, without a browser (app/sections/continuous): the mini-GPT's 16 requests served both ways
and each text checked against decoding it alone, the picture's cells and stays, the clock's rounds (serve()
of both policies, timed, and the step costs), the words chosen from the measured ratios' spreads, the model
of cost at the measured step costs, the chapter's natural reading over the committed seeds (recomputed) and
its tuned pair, and the section itself: built only when opened (model.scheduler imported then), its tables
and sentences from the same numbers."""

import re
from pathlib import Path

import numpy as np
import pytest

from app.i18n import num
from app.sections.continuous import logic
from app.sections.continuous.logic import (
    OCCUPANCIES,
    SLOTS,
    ServeLab,
    cells,
    chapter_facts,
    chapter_pair,
    chapter_rows,
    counts,
    measured_sentence_keys,
    modelled_rows,
    seed_readings,
    segments,
    verdict,
    window_facts,
    window_runs,
)
from app.state import clock
from model import generate
from model.scheduler import (
    CHAPTER_INTERVAL,
    CHAPTER_SEED,
    HELD,
    POLICIES,
    committed_spread,
    pair_hits,
    seed_spread,
    serve,
    serve_timed,
    served_clock,
)
from model.timing import Comparison
from tests.fresh import in_fresh_loop, in_fresh_python

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def runs(gpt):
    return window_runs(gpt)


def test_every_text_is_the_one_decoded_alone(gpt, runs):
    """Both policies write, for every request, what model.generate writes for it alone with its seed."""
    assert len(runs.requests) == 16 and runs.all_same
    for r in runs.requests:
        alone = generate(gpt, gpt.tokenizer.decode(r.prompt), r.n_new, seed=r.seed, top_p=r.top_p)
        assert len(alone) == len(r.prompt) + r.n_new
        for p in POLICIES:
            assert runs.texts[p][r.id] == alone, (p, r.id)
    assert [runs.same(p) for p in POLICIES] == [16, 16]
    assert window_runs(gpt) is runs  # served once per checkpoint


def test_a_different_text_is_counted(runs):
    texts = {p: dict(v) for p, v in runs.texts.items()}
    texts["static"][3] = texts["static"][3][:-1] + [(texts["static"][3][-1] + 1) % 512]
    changed = logic.WindowRuns(runs.requests, runs.schedules, texts, runs.alone)
    assert changed.same("static") == 15 and changed.same("continuous") == 16 and not changed.all_same


def test_the_pictures_cells_and_stays(gpt, runs):
    for p in POLICIES:
        s = runs.schedules[p]
        cs = cells(s)
        assert len(cs) == len(s.steps) * SLOTS
        segs = segments(s)
        assert sorted(g.request for g in segs) == list(range(16))
        for g in segs:
            n_new = runs.requests[g.request].n_new
            assert g.finished - g.entered + 1 == n_new  # one token a step, the first at prefill
            mine = [(t, state) for t, slot, r, state in cs if r == g.request]
            assert all(slot == g.slot for _t, slot, r, _s in cs if r == g.request)
            assert [t for t, _ in mine] == list(range(g.entered, g.left + 1))  # one stay, in one slot
            assert [state for _, state in mine] == (
                ["prefill"] + ["decode"] * (n_new - 1) + [HELD] * (g.left - g.finished)
            )
            if p == "continuous":
                assert g.left == g.finished  # the slot is given up at once
        for slot in range(SLOTS):  # stays never overlap
            stays = sorted((g.entered, g.left) for g in segs if g.slot == slot)
            assert all(a[1] < b[0] for a, b in zip(stays, stays[1:]))
    st, co = counts(runs.schedules["static"]), counts(runs.schedules["continuous"])
    assert (st["steps"], co["steps"]) == (71, 46)  # docs/chapter.md's run
    assert co["held"] == 0 and st["idle"] == 0 and st["held"] > 0 and co["idle"] > 0
    tokens = sum(r.n_new for r in runs.requests)
    for c in (st, co):  # every cell is a token, padding or idle
        assert c["cells"] == c["steps"] * SLOTS == tokens + c["held"] + c["idle"]


def test_serve_timed_is_serve_on_the_clock(gpt, runs):
    """The timed server gives serve()'s texts and schedule, and a clock reading after every step."""
    for p in POLICIES:
        served, ends = serve_timed(gpt, runs.requests, SLOTS, p)
        plain = serve(gpt, runs.requests, SLOTS, p)
        assert served.texts == plain.texts and served.schedule.steps == plain.schedule.steps
        assert len(ends) == len(plain.schedule.steps) + 1 and ends[0] == 0 and np.all(np.diff(ends) > 0)
    ticks = iter(range(1000))
    _, ends = serve_timed(gpt, runs.requests, SLOTS, "static", clock=lambda: float(next(ticks)))
    assert list(ends) == list(range(72))  # one reading before the server is made, one after each of 71 steps


def test_the_serve_lab_measures_serve_in_interleaved_rounds(gpt, runs):
    """Every round serves the 16 requests both ways on the clock and times the steps; the measured
    ratios are served_clock's (the ratio of the rounds' medians, the lowest and highest round around it)."""
    lab = ServeLab(gpt, runs.requests, occupancies=(1, 3), rounds=3, position=8, min_seconds=0.0005)
    assert lab.costs is None and lab.measured() is None and lab.total == 3
    while lab.advance():
        assert lab.measured() is None or lab.finished
    rounds = [r["served"] for r in lab.results.values()]
    m = lab.measured()
    assert m == served_clock(rounds, 168) and m["rounds"] == 3
    for p in POLICIES:
        seconds = sorted(r[p].seconds for r in rounds)
        assert m[p]["seconds"] == seconds[1] and m[p]["per_second"] == pytest.approx(168 / seconds[1])
        assert m[p]["mean_s"] == sorted(r[p].mean for r in rounds)[1]
        for r in rounds:
            assert len(r[p].latencies) == 16 and r[p].latencies.max() == pytest.approx(r[p].seconds)
    t, lat = m["throughput"], m["latency"]
    assert t.ratio == pytest.approx(m["continuous"]["per_second"] / m["static"]["per_second"])
    assert lat.ratio == pytest.approx(m["static"]["mean_s"] / m["continuous"]["mean_s"])
    for c in (t, lat):
        assert c.ratio_low <= c.ratio <= c.ratio_high and c.samples == 3
    rows = lab.rows()
    assert [r["B"] for r in rows] == [1, 3] and all(r["n"] == 3 for r in rows)
    for r in rows:
        assert r["low_s"] <= r["median_s"] <= r["high_s"]
        assert lab.costs[r["B"]] == r["median_s"] == sorted(lab.samples_by_b[r["B"]])[1]
    cancelled = ServeLab(gpt, runs.requests[:2], occupancies=(1,), rounds=3, min_seconds=0.0005)
    cancelled.advance()
    cancelled.cancel()
    assert not cancelled.advance() and cancelled.costs is None and cancelled.measured() is None
    assert len(cancelled.rows()) == 1 and OCCUPANCIES == (1, 2, 3, 4, 8)


def test_the_words_follow_the_spread():
    """Faster or sooner only if even the slowest round says so, as the spread is written; a spread
    that holds 1 (as written) says neither."""
    c = lambda r, lo, hi: Comparison(1.0, r, r, lo, hi, 9)  # noqa: E731
    assert verdict(c(1.2, 1.06, 1.3)) == "more" and verdict(c(1.2, 1.04, 1.3)) == "even"  # 1.04 is written 1
    assert verdict(c(1.0, 0.9, 1.1)) == "even" and verdict(c(0.8, 0.7, 0.94)) == "less"
    assert verdict(c(0.9, 0.8, 0.96)) == "even"  # 0.96 is written 1
    keys = measured_sentence_keys({"throughput": c(1.1, 0.97, 1.2), "latency": c(1.9, 1.7, 2.1)})
    assert keys == ("cb_window_even", "cb_window_sooner")
    keys = measured_sentence_keys({"throughput": c(1.3, 1.2, 1.4), "latency": c(0.8, 0.7, 0.9)})
    assert keys == ("cb_window_faster", "cb_window_later")
    keys = measured_sentence_keys({"throughput": c(0.8, 0.7, 0.9), "latency": c(1, 0.9, 1.1)})
    assert keys == ("cb_window_slower", "cb_window_same_latency")


def test_the_model_of_cost_at_the_measured_costs(runs):
    costs = {1: 1e-3, 2: 1.5e-3, 3: 2e-3, 4: 2.5e-3, 8: 4e-3}
    w = modelled_rows(runs, costs)
    for p in POLICIES:
        s = runs.schedules[p]
        r, summary = w[p], s.summary({b: costs[b] for b in range(1, 5)})
        assert r["mean_s"] == pytest.approx(summary.latency_mean_seconds)  # the model's own mean
        assert r["per_second"] == pytest.approx(summary.tokens_per_second) and r["tokens"] == 168
        assert r["median_s"] <= r["p90_s"] and r["steps"] == len(s.steps)
        assert r["seconds"] == pytest.approx(sum(costs[int(n)] for n in s.occupied()))
    assert w["static"]["seconds"] == pytest.approx(71 * costs[4])  # held slots count: always 4
    assert w["ratios"]["throughput"] == pytest.approx(w["static"]["seconds"] / w["continuous"]["seconds"])
    flat = modelled_rows(runs, dict.fromkeys(OCCUPANCIES, 2e-3))  # one cost: the ratios in steps
    assert flat["ratios"]["throughput"] == pytest.approx(71 / 46)
    assert flat["ratios"]["mean"] == pytest.approx(w["static"]["mean_steps"] / w["continuous"]["mean_steps"])
    assert flat["static"]["p90_s"] == pytest.approx(flat["static"]["p90_steps"] * 2e-3)


def test_the_committed_seeds_are_what_the_code_computes():
    """model/weights/scheduler.json (python -m model.scheduler --write): every 20th seed and the chapter's
    recomputed here, both readings, to the last bit."""
    table = committed_spread()
    assert table["seeds"] == list(range(200)) and table["slots"] == 8
    sample = sorted({*range(0, 200, 20), CHAPTER_SEED})
    for interval in (0, CHAPTER_INTERVAL):
        fresh = seed_spread(sample, interval)
        for k in ("throughput", "latency"):
            assert [table["intervals"][str(interval)][k][s] for s in sample] == fresh[k].tolist(), (interval, k)


def test_the_natural_reading_first_and_the_tuned_pair():
    """All 64 queued at once, over 200 seeds: about 2.3x and 3.6x, never ten; the chapter's 1.6x and
    more than ten only from a stream and a seed picked for them (4 of 200 seeds, 59 the first)."""
    r = seed_readings()
    assert (r["seeds"], r["first"], r["last"], r["slots"]) == (200, 0, 199, 8)
    at, st = r["at_once"], r["stream"]
    assert [round(at["throughput"][k], 2) for k in ("p10", "p50", "p90")] == [1.84, 2.26, 2.74]
    assert [round(at["latency"][k], 2) for k in ("p10", "p50", "p90")] == [3.0, 3.56, 4.11]
    assert at["latency"]["max"] < 4.9 and at["hits"] == 0
    assert [round(st["throughput"][k], 2) for k in ("p10", "p50", "p90")] == [1.38, 1.67, 1.9]
    assert [round(st["latency"][k], 2) for k in ("p10", "p50", "p90")] == [6.31, 8.83, 11.26]
    assert st["hits"] == 4
    stream = committed_spread()["intervals"][str(CHAPTER_INTERVAL)]
    assert int(np.argmax(pair_hits(stream["throughput"], stream["latency"]))) == CHAPTER_SEED  # the first
    pair = chapter_pair()
    assert round(pair["throughput"], 2) == 1.63 and round(pair["latency"], 1) == 10.5
    assert pair["throughput"] == pytest.approx(stream["throughput"][CHAPTER_SEED])
    assert pair["latency"] == pytest.approx(stream["latency"][CHAPTER_SEED])


def test_the_chapters_simulation_reproduced():
    c = chapter_rows(1.25e-3)
    assert (
        chapter_facts()
        == c["workload"]
        == {"n": 64, "median": 18.0, "max": 231, "total": 1874, "seed": 59, "interval": 6, "slots": 8}
    )
    assert (c["static"]["steps"], c["continuous"]["steps"]) == (738, 454)
    assert c["static"]["tokens"] == c["continuous"]["tokens"] == 1874
    assert clock.ratio_text(c["ratios"]["throughput"], "en") == "1.6"  # the chapter's 1.6x
    assert c["ratios"]["mean"] > 10  # and more than ten
    assert c["static"]["mean_s"] == pytest.approx(c["static"]["mean_steps"] * 1.25e-3)
    assert c["continuous"]["median_s"] == pytest.approx(18 * 1.25e-3)
    other = chapter_rows(3e-3)  # a fixed cost: the same ratios
    assert other["ratios"] == pytest.approx(c["ratios"])
    assert c["ratios"]["throughput"] == pytest.approx(chapter_pair()["throughput"])


def test_what_the_window_does(gpt, runs):
    f = window_facts(runs, gpt.config.n_ctx)
    assert (f["n"], f["median"], f["max"], f["total"], f["hold"], f["chapter_max"]) == (16, 8.0, 35, 168, 63, 231)
    assert all(len(r.prompt) + r.n_new <= 64 for r in runs.requests)
    # the gains in steps: the same tokens in fewer steps, and every request's finish over its count
    steps = {p: len(runs.schedules[p].steps) for p in POLICIES}
    assert f["tps"] == pytest.approx(steps["static"] / steps["continuous"])
    assert 1 < f["tps"] < f["lat"]  # the window: both gains below the chapter's natural medians
    assert f["lat"] < seed_readings()["at_once"]["latency"]["p50"]
    assert f["tps"] < seed_readings()["at_once"]["throughput"]["p50"]


FRESH = """
import json, sys
from app.main import create_view
v = create_view("?lang=es")
watched = ("model.scheduler", "app.sections.continuous.logic")
out = {"before": [m for m in watched if m in sys.modules]}
for s in v.sections:
    if s.key != "continuous":
        s.ensure_built()
out["others"] = [m for m in watched if m in sys.modules]
next(s for s in v.sections if s.key == "continuous").ensure_built()
out["after"] = [m for m in watched if m in sys.modules]
print(json.dumps(out))
"""


def test_nothing_of_it_is_imported_before_it_opens():
    out = in_fresh_python(FRESH)
    assert (
        out["before"] == []
        and out["others"] == []
        and out["after"] == ["model.scheduler", "app.sections.continuous.logic"]
    )


def cells_of(html: str, testid: str) -> list[list[str]]:
    body = re.search(rf"data-testid='{testid}'.*?<tbody>(.*?)</tbody>", html).group(1)
    return [
        [re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<td>(.*?)</td>", row)]
        for row in re.findall(r"<tr>(.*?)</tr>", body)
    ]


def test_the_section_shows_the_same_numbers(monkeypatch):
    from app.main import create_view

    v = create_view("?lang=en")
    s = next(x for x in v.sections if x.key == "continuous")
    assert not s.built
    s.card.collapsed = False  # opening the card builds it
    assert "data-same='True'" in s.same.object and "data-static='16' data-continuous='16'" in s.same.object
    assert "yes" in s.same.object and s.same.object.count("16 of 16") == 2
    assert "data-steps='71'" in s.heads["static"].object and "data-steps='46'" in s.heads["continuous"].object
    assert len(s.sources["static"][1].data["x"]) == counts(s.served.schedules["static"])["held"]  # hatched: padding
    assert s.window_table.object == "" and "continuous-chapter-how" in s.chapter_head.object
    natural, tuned = s.chapter_natural.object, s.chapter_tuned.object  # before any measurement: no clock needed
    assert natural.index("continuous-chapter-natural") < natural.index("continuous-seeds")
    assert "a median of 2.3 times more tokens per second (10th to 90th percentile: 1.8 to 2.7)" in natural
    assert "a mean latency 3.6 times lower (3.0 to 4.1); the latency ratio never goes above 4.9" in natural
    assert cells_of(natural, "continuous-seeds") == [
        ["all queued from the first step", "2.3 (1.8–2.7)", "3.6 (3.0–4.1)"],
        ["one every 6 steps", "1.7 (1.4–1.9)", "8.8 (6.3–11)"],
    ]
    assert (
        "seed 59, the first of the 4 seeds in 200 that at that rate give" in tuned
        and "between 1.55 and 1.65 times" in tuned
    )
    assert "1.63 times more tokens per second and a mean latency 10.5 times lower" in tuned
    assert "It is a fit, not a prediction." in tuned
    monkeypatch.setattr(
        s, "new_lab", lambda: ServeLab(s.ex.gpt, s.served.requests, rounds=2, position=8, min_seconds=0.0005)
    )
    in_fresh_loop(s.run())
    assert "data-run='1' data-state='done'" in s.status.object
    costs, m = s.lab.costs, s.lab.measured()
    assert set(costs) == set(OCCUPANCIES)
    model, c = modelled_rows(s.served, costs), chapter_rows(costs[8])
    ms = lambda x: clock.ms_text(x, "en")  # noqa: E731
    ratio = lambda x: clock.ratio_text(x, "en")  # noqa: E731
    assert "served in your browser (median of 2 rounds)" in s.window_table.object
    for testid, rows in (("continuous-window-table", m), ("continuous-chapter-table", c)):
        shown = cells_of(
            s.window_table.object if testid == "continuous-window-table" else s.chapter_table.object, testid
        )
        assert [r[0] for r in shown] == ["Static batching", "Continuous batching"]
        steps = {"static": 71, "continuous": 46} if testid == "continuous-window-table" else {}
        for row, p in zip(shown, POLICIES):
            r = rows[p]
            assert row[1:] == [
                str(steps.get(p, r.get("steps"))),
                f"{r['per_second']:,.0f}",
                ms(r["mean_s"]),
                ms(r["median_s"]),
                ms(r["p90_s"]),
            ]
    explain = s.window_explain.object  # the sentences say what the measured table shows, chosen from its spreads
    faster, sooner = measured_sentence_keys(m)
    t = m["throughput"]
    assert np.isclose(float(re.search(r"data-throughput='([^']+)'", explain).group(1)), t.ratio)
    for p in POLICIES:  # both policies' tokens a second, in every wording
        assert re.search(re.escape(num(m[p]["per_second"], "en")) + r"(?![\d.,])", explain), (p, explain)
    said = {
        "cb_window_faster": f"served {ratio(t.ratio)} times more tokens per second than static batching",
        "cb_window_even": f"the ratio ranged from {ratio(t.ratio_low)} to {ratio(t.ratio_high)}, a range that includes 1",
        "cb_window_slower": "served fewer tokens per second",
    }
    assert said[faster] in explain and all(v not in explain for k, v in said.items() if k != faster)
    assert f"{ms(m['continuous']['mean_s'])} ms against {ms(m['static']['mean_s'])} ms" in explain
    assert ("answers came back sooner" in explain) == (sooner == "cb_window_sooner")
    assert "A model of cost, not a measurement" in explain  # the model, called one, beside the measurement
    assert f"would give {ratio(model['ratios']['throughput'])} times more tokens per second" in explain
    assert f"({ms(costs[1])} ms with one conversation, {ms(costs[4])} ms with four)" in explain
    chapter = s.chapter_explain.object
    assert f"({ms(costs[8])} ms)" in chapter and "These are simulated seconds" in chapter
    assert np.isclose(float(re.search(r"data-latency='([^']+)'", chapter).group(1)), c["ratios"]["mean"])
    v.session.settings.lang = "pt"  # relabelled, numbers the Portuguese way
    assert "Batching estático" in s.window_table.object and "Feito: 2 rondas" in s.status.object
    assert "sim (estático: 16 de 16" in s.same.object
    assert "uma mediana de 2,3 vezes mais tokens por segundo" in s.chapter_natural.object
    assert "entre 1,55 e 1,65 vezes" in s.chapter_tuned.object
    v.session.settings.lang = "es"
    assert "una mediana de 2.3 veces más tokens por segundo" in s.chapter_natural.object
    assert "Un modelo de coste, no una medida" in s.window_explain.object
