"""Continuous batching, without a browser (app/sections/continuous): the mini-GPT's 16 requests served both ways
and each text checked against decoding it alone, the picture's cells and stays, the clock's rounds, both
policies' rows at the measured costs, the chapter's simulation reproduced, and the section itself:
built only when opened (model.scheduler imported then), its tables and sentences from the same numbers."""

import re
from pathlib import Path

import numpy as np
import pytest

from app.sections.continuous import logic
from app.sections.continuous.logic import (
    OCCUPANCIES,
    SLOTS,
    StepLab,
    cells,
    chapter_facts,
    chapter_rows,
    counts,
    segments,
    window_facts,
    window_rows,
    window_runs,
    window_sentence_keys,
)
from app.state import clock
from model import generate
from model.scheduler import HELD, POLICIES
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


def test_the_step_lab_keeps_the_median_of_its_rounds(gpt):
    lab = StepLab(gpt, occupancies=(1, 3), rounds=3, position=8, min_seconds=0.0005)
    assert lab.costs is None and lab.total == 3
    while lab.advance():
        assert lab.costs is None or lab.finished
    rows = lab.rows()
    assert [r["B"] for r in rows] == [1, 3] and all(r["n"] == 3 for r in rows)
    for r in rows:
        assert r["low_s"] <= r["median_s"] <= r["high_s"]
        assert lab.costs[r["B"]] == r["median_s"] == sorted(lab.samples_by_b[r["B"]])[1]
    cancelled = StepLab(gpt, occupancies=(1,), rounds=3, min_seconds=0.0005)
    cancelled.advance()
    cancelled.cancel()
    assert not cancelled.advance() and cancelled.costs is None and len(cancelled.rows()) == 1
    assert OCCUPANCIES == (1, 2, 3, 4, 8)


def test_policy_rows_at_the_measured_costs(runs):
    costs = {1: 1e-3, 2: 1.5e-3, 3: 2e-3, 4: 2.5e-3, 8: 4e-3}
    w = window_rows(runs, costs)
    for p in POLICIES:
        s = runs.schedules[p]
        r, summary = w[p], s.summary({b: costs[b] for b in range(1, 5)})
        assert r["mean_s"] == pytest.approx(summary.latency_mean_seconds)  # the model's own mean
        assert r["per_second"] == pytest.approx(summary.tokens_per_second) and r["tokens"] == 168
        assert r["median_s"] <= r["p90_s"] and r["steps"] == len(s.steps)
        assert r["seconds"] == pytest.approx(sum(costs[int(n)] for n in s.occupied()))
    assert w["static"]["seconds"] == pytest.approx(71 * costs[4])  # held slots count: always 4
    assert w["ratios"]["throughput"] == pytest.approx(w["static"]["seconds"] / w["continuous"]["seconds"])
    flat = window_rows(runs, dict.fromkeys(OCCUPANCIES, 2e-3))  # one cost: the ratios in steps
    assert flat["ratios"]["throughput"] == pytest.approx(71 / 46)
    assert flat["ratios"]["mean"] == pytest.approx(w["static"]["mean_steps"] / w["continuous"]["mean_steps"])
    assert flat["static"]["p90_s"] == pytest.approx(flat["static"]["p90_steps"] * 2e-3)
    assert window_sentence_keys(w["ratios"]) == ("cb_window_faster", "cb_window_sooner")
    assert window_sentence_keys({"throughput": 1.01, "mean": 0.9}) == ("cb_window_not_faster", "cb_window_not_sooner")


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
    assert other["ratios"] == pytest.approx(c["ratios"]) and other["at_once"] == pytest.approx(c["at_once"])
    assert c["at_once"]["throughput"] == pytest.approx(2.49, abs=0.01) and c["at_once"]["mean"] < 4


def test_what_the_window_does(gpt, runs):
    f = window_facts(runs, gpt.config.n_ctx)
    assert (f["n"], f["median"], f["max"], f["total"], f["hold"], f["chapter_max"]) == (16, 8.0, 35, 168, 63, 231)
    assert all(len(r.prompt) + r.n_new <= 64 for r in runs.requests)


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
    monkeypatch.setattr(s, "new_lab", lambda: StepLab(s.ex.gpt, rounds=2, min_seconds=0.0005))
    in_fresh_loop(s.run())
    assert "data-run='1' data-state='done'" in s.status.object
    costs = s.lab.costs
    assert set(costs) == set(OCCUPANCIES)
    w, c = window_rows(s.served, costs), chapter_rows(costs[8])
    ms = lambda x: clock.ms_text(x, "en")  # noqa: E731
    for testid, rows in (("continuous-window-table", w), ("continuous-chapter-table", c)):
        shown = cells_of(
            s.window_table.object if testid == "continuous-window-table" else s.chapter_table.object, testid
        )
        assert [r[0] for r in shown] == ["Static batching", "Continuous batching"]
        for row, p in zip(shown, POLICIES):
            r = rows[p]
            assert row[1:] == [
                str(r["steps"]),
                f"{r['per_second']:,.0f}",
                ms(r["mean_s"]),
                ms(r["median_s"]),
                ms(r["p90_s"]),
            ]
    explain = s.window_explain.object  # the sentence says what the table shows, chosen from its ratios
    faster, sooner = window_sentence_keys(w["ratios"])  # a loaded machine may measure no gain: said so
    assert f"{ms(w['continuous']['mean_s'])} ms against {ms(w['static']['mean_s'])} ms" in explain
    x = clock.ratio_text(w["ratios"]["throughput"], "en")
    assert (f"{x} times more tokens per second" if faster == "cb_window_faster" else f"{x} times):") in explain
    assert ("answers come back sooner" in explain) == (sooner == "cb_window_sooner")
    chapter = s.chapter_explain.object
    assert f"({ms(costs[8])} ms)" in chapter and f"{clock.ratio_text(c['ratios']['throughput'], 'en')} times" in chapter
    assert np.isclose(float(re.search(r"data-latency='([^']+)'", chapter).group(1)), c["ratios"]["mean"])
    v.session.settings.lang = "pt"  # relabelled, numbers the Portuguese way
    assert "Batching estático" in s.window_table.object and "Feito: 2 rondas" in s.status.object
    assert "sim (estático: 16 de 16" in s.same.object
