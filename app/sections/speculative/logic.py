"""Speculative decoding in the reader's browser: round by round, then measured here. No Panel
here (the view is app/sections/batch and app/sections/speculative); imported only when the reader opens its section.

`SpecRun` goes through model/speculative.py's rounds one phase at a time, as the page shows
them: the draft proposes k tokens (its cache grows), the mini-GPT checks them in one pass (its
cache grows by the last token and the drafts), the acceptance rule keeps some and draws one
more, and the rejected rows are cut off both caches (slicing). After each phase, `lengths`
says how long each cache was before and after it.

`SpecLab` measures, for k = 1..8: the acceptance rate, tokens per pass of the mini-GPT, and the
time per token against plain decoding of the same text length (interleaved samples,
model/timing.py), next to the chapter's formula and the count (model/cost.py).
"""

from __future__ import annotations

import numpy as np
import param

from model import cost
from model.gpt import is_position_error
from model.sampling import generate
from model.speculative import Round, Speculative, speculative_generate
from model.timing import compare, compare_over

from ...i18n import num
from ...state import clock
from ...state.explorer import StepError
from ..stepwise import Stepwise

PROMPT = "La Nela"
KS = tuple(range(1, 9))
DEFAULT_K = 4
C_SAMPLES = 9  # interleaved measurements of a step of each model, for c by the clock

# what a column of a cache shows after a phase
EMPTY, KEPT, NEW, CUT = 0, 1, 2, 3


def column_states(before: int, after: int, n_ctx: int) -> np.ndarray:
    """(n_ctx,) for positions 1..n_ctx: kept from before the phase, written in it, or cut off in it."""
    p = np.arange(1, n_ctx + 1)
    states = np.full(n_ctx, EMPTY)
    states[p <= min(before, after)] = KEPT
    states[(p > before) & (p <= after)] = NEW
    states[(p > after) & (p <= before)] = CUT
    return states


class SpecChoice(param.Parameterized):
    """What the reader chooses in the section: its bounds are the slider's, and all a browser may
    send (app/intake.py refuses the rest)."""

    k = param.Integer(default=DEFAULT_K, bounds=(KS[0], KS[-1]), doc="Tokens the draft proposes per round.")


class SpecRun:
    """Speculative decoding one phase per `advance()`: 'draft', 'check', 'decide', again."""

    def __init__(
        self, gpt, draft, k: int = 4, seed: int = 0, top_p: float = 0.9, greedy: bool = False, prompt: str = PROMPT
    ):
        if k not in KS:
            raise ValueError(f"k must be one of {KS}, not {k}")
        self.gpt, self.k, self.greedy = gpt, k, greedy
        ids = gpt.tokenizer.encode(prompt)
        self.spec = Speculative(gpt, draft, ids, seed, 0.0 if greedy else 1.0, None, top_p)
        self.n_prompt = len(ids)
        self.round: Round | None = None
        self.phase: str | None = None  # the last phase done
        now = self.cache_lengths()
        self.lengths = {m: (n, n) for m, n in now.items()}
        self.error: StepError | None = None
        n_new = gpt.config.n_ctx - len(ids)  # greedy: the mini-GPT's own text, alone, to compare
        self.own = generate(gpt, prompt, n_new, temperature=0) if greedy else None

    def cache_lengths(self) -> dict[str, int]:
        return {"target": len(self.spec.target_cache), "draft": len(self.spec.draft_cache)}

    @property
    def ids(self) -> list[int]:
        return self.spec.ids

    @property
    def counts(self):
        return self.spec.counts

    def advance(self) -> bool:
        """The next phase. False (and `error` set, nothing changed) when the text fills the window."""
        spec, before = self.spec, self.cache_lengths()
        try:
            if self.phase in (None, "decide"):
                self.round, self.phase = spec.begin(self.k), "draft"
            elif self.phase == "draft":
                spec.check_round(self.round)
                self.phase = "check"
            else:
                spec.decide(self.round)
                self.phase = "decide"
        except IndexError as e:  # the position table's: the text fills the window
            self.error = StepError(type(e).__name__, str(e), position=len(spec.ids) + 1, lesson=is_position_error(e))
            return False
        self.error = None
        after = self.cache_lengths()
        self.lengths = {m: (before[m], after[m]) for m in before}
        return True

    def columns(self, model: str) -> np.ndarray:
        return column_states(*self.lengths[model], self.gpt.config.n_ctx)

    def marks(self) -> list[tuple[int, str]]:
        """The text as the page shows it: (token, kind) with kind 'prompt', 'text', and during a
        round 'proposed', then 'accepted', 'rejected', 'untested', 'resampled' or 'bonus'."""
        r = self.round
        ids = self.ids if r is None else self.ids[: r.n]  # the text before this round
        out = [(x, "prompt" if i < self.n_prompt else "text") for i, x in enumerate(ids)]
        if r is None:
            return out
        if self.phase != "decide":
            return out + [(x, "proposed") for x in r.drafts]
        for i, x in enumerate(r.drafts):
            out.append((x, "accepted" if i < r.accepted else "rejected" if i == r.accepted else "untested"))
        if r.next is not None:
            out.append((r.next, "resampled" if r.accepted < r.k else "bonus"))
        return out

    def check_rows(self) -> list[dict]:
        """After the check: each draft with the draft's probability q(x), the mini-GPT's p(x) and the
        chance min(1, p/q) it is kept; after the decision, what happened to it."""
        r = self.round
        if r is None or self.phase == "draft" or r.p is None:
            return []
        rows = []
        for i, x in enumerate(r.drafts):
            q, p = float(r.q[i, x]), float(r.p[i, x])
            verdict = (
                None
                if r.accepted is None
                else ("accepted" if i < r.accepted else "rejected" if i == r.accepted else "untested")
            )
            rows.append({"i": i + 1, "token": x, "q": q, "p": p, "chance": min(1.0, p / q), "verdict": verdict})
        return rows

    @property
    def same_as_own(self) -> bool | None:
        """Greedy: whether the text so far is the mini-GPT's own greedy text, token for token."""
        return None if self.own is None else self.ids == self.own[: len(self.ids)]


# -- the clock --------------------------------------------------------------------------------------


class SpecLab(Stepwise):
    """First the draft's cost by the clock ('c'), then one k per `advance()`."""

    def __init__(
        self,
        gpt,
        draft,
        ks=KS,
        seeds=range(7),
        temperature: float = 1.0,
        top_p: float = 0.9,
        samples: int = 5,
        min_seconds: float = 0.004,
        prompt: str = PROMPT,
    ):
        super().__init__(("c",) + tuple(ks))
        self.gpt, self.draft, self.seeds, self.prompt = gpt, draft, tuple(seeds), prompt
        self.kw = {"temperature": temperature, "top_p": top_p}
        self.timing = {"samples": samples, "min_seconds": min_seconds}
        self.n_new = gpt.config.n_ctx - len(gpt.tokenizer.encode(prompt))
        self.window = generate(gpt, prompt, self.n_new, seed=self.seeds[0], **self.kw)
        self.c_count = cost.c_row(draft.config) / cost.c_row(gpt.config)

    def measure(self, item):
        return self.clock_c() if item == "c" else self.measure_k(item)

    def clock_c(self):
        """A draft step against a mini-GPT step, mid-window: ratio = c by the clock."""
        t, ids = self.gpt.config.n_ctx // 2, self.window
        _, big = self.gpt.llenar(ids[: t - 1])
        _, small = self.draft.llenar(ids[: t - 1])
        return compare(
            lambda: self.gpt.avanzar(ids[t - 1], big.copy()),
            lambda: self.draft.avanzar(ids[t - 1], small.copy()),
            samples=C_SAMPLES,
            min_seconds=0.01,
        )

    def measure_k(self, k: int) -> dict:
        """Speculative decoding against plain decoding, one interleaved sample per seed; the check's
        pass of k + 1 rows against a step of one."""
        gpt, draft, prompt, n_new, kw = self.gpt, self.draft, self.prompt, self.n_new, self.kw
        speed, runs = compare_over(
            lambda s: speculative_generate(gpt, draft, prompt, n_new, k=k, seed=s, **kw)[1],
            lambda s: generate(gpt, prompt, n_new, seed=s, **kw),
            self.seeds,
            self.timing["min_seconds"],
        )
        t, ids = gpt.config.n_ctx // 2, self.window
        _, cache = gpt.llenar(ids[: t - 1])
        check = compare(
            lambda: gpt.avanzar(ids[t - 1], cache.copy()),
            lambda: gpt.llenar(ids[t - 1 : t + k], cache.copy()),
            **self.timing,
        )
        return {"runs": runs, "speed": speed, "check": check}

    @property
    def c_clock(self) -> float | None:
        c = self.results.get("c")
        return None if c is None else c.ratio

    @property
    def rows(self) -> list[dict]:
        c, tokens = self.c_clock, self.n_new
        out = []
        for k, m in self.results.items():
            if k == "c":
                continue
            runs, speed = m["runs"], m["speed"]
            tested = sum(r.accepted + r.rejected for r in runs)
            alpha = sum(r.accepted for r in runs) / tested if tested else float("nan")
            out.append(
                {
                    "k": k,
                    "alpha": alpha,
                    "per_pass": sum(r.tokens for r in runs) / sum(r.rounds for r in runs),
                    "expected": cost.expected_tokens_per_pass(alpha, k),
                    "spec_s": speed.a_s / tokens,
                    "plain_s": speed.b_s / tokens,
                    "speedup": speed.ratio,
                    "low": speed.ratio_low,
                    "high": speed.ratio_high,
                    "check_x": m["check"].ratio,
                    "by_clock": cost.speculative_speedup(alpha, k, c),
                    "by_count_c": cost.speculative_speedup(alpha, k, self.c_count),
                    "count": cost.speculative_count_ratio(
                        alpha, k, cost.c_row(self.gpt.config), cost.c_row(self.draft.config)
                    ),
                }
            )
        return out

    @property
    def summary(self) -> dict | None:
        """What the sentences under the table say: the best and worst k, c both ways, the checks."""
        rows = self.rows
        if not self.finished or self.cancelled or not rows:
            return None
        best, worst = max(rows, key=lambda r: r["speedup"]), min(rows, key=lambda r: r["speedup"])
        runs = [r for k, m in self.results.items() if k != "c" for r in m["runs"]]
        alpha = sum(r.accepted for r in runs) / sum(r.accepted + r.rejected for r in runs)
        return {
            "best": best,
            "worst": worst,
            "first": rows[0],
            "last": rows[-1],
            "alpha": alpha,
            "c_clock": self.c_clock,
            "c_count": self.c_count,
            "promise": max(r["by_count_c"] for r in rows),
            "promise_k": max(rows, key=lambda r: r["by_count_c"])["k"],
        }


FASTER, SLOWER = 1.05, 0.95  # measured speed-ups beyond these: "faster" / "slower" here
NEAR = 1.3  # c by the clock, or a check in steps, under this share of the count / of one: "about"


def spec_sentences(s: dict, lang: str) -> list[tuple[str, dict]]:
    """The measurement, read (message key, values), from its own numbers."""
    pct = lambda x: num(x * 100, lang)  # noqa: E731
    x2 = lambda x: num(x, lang, 2)  # noqa: E731
    first, last, best, worst = s["first"], s["last"], s["best"], s["worst"]
    values = {
        "a": pct(s["alpha"]),
        "lo": x2(first["per_pass"]),
        "hi": x2(last["per_pass"]),
        "k0": first["k"],
        "k1": last["k"],
        "best": x2(best["speedup"]),
        "kb": best["k"],
        "worst": x2(worst["speedup"]),
        "kw": worst["k"],
        "c_clock": x2(s["c_clock"]),
        "c_count": x2(s["c_count"]),
        "check0": clock.ratio_text(first["check_x"], lang),
        "check1": clock.ratio_text(last["check_x"], lang),
        "promise": x2(s["promise"]),
        "kp": s["promise_k"],
        "count0": x2(1 / first["count"]),
    }
    # a ratio under 1 is a cost, written as such: how many times as long the text takes
    if best["speedup"] >= FASTER:
        verdict = "spec_faster" if worst["speedup"] >= 1 else "spec_faster_mixed"
        if worst["speedup"] < 1:
            values["worst"] = x2(1 / worst["speedup"])
    else:
        verdict = "spec_slower" if best["speedup"] <= SLOWER else "spec_even"
        values["best"], values["worst"] = x2(1 / best["speedup"]), x2(1 / worst["speedup"])
    c = "spec_c_high" if s["c_clock"] >= NEAR * s["c_count"] else "spec_c_near"
    check = "spec_check_high" if max(first["check_x"], last["check_x"]) >= NEAR else "spec_check_near"
    return [(key, values) for key in ("spec_alpha", verdict, "spec_assumes", c, check, "spec_count")]
