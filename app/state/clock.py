"""What the clock says, in numbers and then in words: every sentence about a measured time is
chosen from the measurement itself, and every number is rounded the same way wherever it
appears (a heading that says 2.6× and a sentence under it that says 3 would contradict
each other). No Panel here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..i18n import num

FLAT = 1.5  # cached times within this factor of each other: "almost flat"
RAMP = 2.0  # the full pass at the last position at least this many times the first: "a ramp"
NEAR_COUNT = 0.8  # a clock ratio at least this share of the count: "almost what the count says"


def ratio_digits(x: float) -> int:
    """The decimals a clock ratio is written with: none from 10 up, one below."""
    return 0 if round(x, 1) >= 10 else 1


def ratio_text(x: float, lang: str) -> str:
    """A clock ratio as the page writes it (ratio_digits)."""
    return num(x, lang, ratio_digits(x))


def clock_text(ratio: float, lang: str) -> str:
    """The clock's ratio (without the cache over with it) as the sentences write it: a ratio under 1
    is a cost, so it is written the other way up, as how many times as long the cached token took
    (the "slower" sentences say so)."""
    return ratio_text(ratio if ratio >= 1 or ratio <= 0 else 1 / ratio, lang)


def ms_text(seconds: float, lang: str) -> str:
    """Milliseconds with three significant digits (the medians resolve that much, not more; es drops
    the zeros at their end, as num does)."""
    ms = seconds * 1e3
    digits = 0 if ms >= 100 else max(0, 2 - int(math.floor(math.log10(ms)))) if ms > 0 else 0
    return num(ms, lang, digits)


def verdict(ratio: float, count: float) -> str:
    """How the clock compares with the count: 'slower' (the cache lost this time), 'near' (about
    what the count says), or 'short' (less: each NumPy call's fixed cost)."""
    if ratio < 1:
        return "slower"
    return "near" if ratio >= NEAR_COUNT * count else "short"


@dataclass(frozen=True)
class Reading:
    """The timing table, read: what its sentences may say."""

    first: int  # first and last positions measured
    last: int
    cached_lo: float  # seconds, over the positions
    cached_hi: float
    full_first: float
    full_last: float
    ratio: float  # the clock at the last position
    count: float  # the count there
    flat: bool
    ramp: bool
    verdict: str


def read_table(rows: list[dict]) -> Reading:
    cached = [r["cached_s"] for r in rows]
    first, last = rows[0], rows[-1]
    return Reading(
        first["t"],
        last["t"],
        min(cached),
        max(cached),
        first["full_s"],
        last["full_s"],
        last["clock_ratio"],
        last["count_ratio"],
        max(cached) <= FLAT * min(cached),
        last["full_s"] >= RAMP * first["full_s"],
        verdict(last["clock_ratio"], last["count_ratio"]),
    )


LAB_CLOCK = {"slower": "lab_clock_slower", "near": "lab_clock_near", "short": "lab_clock_short"}  # verdict()


def table_sentences(r: Reading, lang: str) -> list[tuple[str, dict]]:
    """The lab's explanation, as (message key, values), from what the table measured."""
    values = {
        "t0": r.first,
        "t1": r.last,
        "a": ms_text(r.full_first, lang),
        "b": ms_text(r.full_last, lang),
        "lo": ms_text(r.cached_lo, lang),
        "hi": ms_text(r.cached_hi, lang),
        "x": clock_text(r.ratio, lang),
        "n": num(r.count, lang),
    }
    return [
        ("lab_full_ramp" if r.ramp else "lab_full_flat", values),
        ("lab_cached_flat" if r.flat else "lab_cached_varies", values),
        (LAB_CLOCK[r.verdict], values),
    ]
