"""The page's URL parameters: what an embedding course page or a shared link sets.

    ?lang=en&mode=full&t=40&seed=3&speed=8&top_p=0.8&embed=1

Every parameter is optional. A bad value is ignored and reported as a notice
(shown on the page in the reader's language); parsing never raises.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import parse_qs

from .i18n import DEFAULT_LANG, LANGS
from .state import CACHE, FULL

MODE_ALIASES = {"cache": CACHE, "con": CACHE, "full": FULL, "sin": FULL, "nocache": FULL}
SPEED_RANGE = (1, 20)        # tokens per second
SEED_RANGE = (0, 2 ** 32 - 1)
T_RANGE = (2, 64)
TOP_P_RANGE = (0.05, 1.0)


@dataclass
class UrlState:
    lang: str = DEFAULT_LANG
    mode: str = CACHE
    t: int | None = None
    seed: int = 0
    speed: int = 4
    top_p: float = 0.9
    embed: bool = False
    # (key, value, reason key, reason values) for each ignored parameter
    notices: list[tuple[str, str, str, dict]] = field(default_factory=list)

    def query(self) -> str:
        """The query string that reproduces this state (for sharing)."""
        parts = [f"lang={self.lang}", f"mode={self.mode}"]
        if self.t is not None:
            parts.append(f"t={self.t}")
        parts += [f"seed={self.seed}", f"speed={self.speed}", f"top_p={self.top_p:g}"]
        if self.embed:
            parts.append("embed=1")
        return "?" + "&".join(parts)


def _as_dict(query) -> dict[str, str]:
    """A query string ('?a=1&b=2'), or Panel's session_args ({'a': [b'1']}), -> {key: last value}."""
    if query is None:
        return {}
    if isinstance(query, str):
        pairs = parse_qs(query.lstrip("?"), keep_blank_values=True)
    else:
        pairs = dict(query)
    out = {}
    for key, values in pairs.items():
        values = values if isinstance(values, (list, tuple)) else [values]
        value = values[-1] if values else ""
        out[str(key)] = value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
    return out


def _int(raw: str, lo: int, hi: int):
    try:
        v = int(raw)
    except ValueError:
        return None, ("why_int", {})
    return (v, None) if lo <= v <= hi else (None, ("why_range", {"lo": lo, "hi": hi}))


def _float(raw: str, lo: float, hi: float):
    try:
        v = float(raw)
    except ValueError:
        return None, ("why_float", {})
    if v != v:                                  # NaN
        return None, ("why_float", {})
    return (v, None) if lo <= v <= hi else (None, ("why_range", {"lo": lo, "hi": hi}))


def _choice(raw: str, options: dict):
    v = options.get(raw.strip().lower())
    return (v, None) if v else (None, ("why_choice", {"options": ", ".join(sorted(set(options.values())))}))


def _bool(raw: str):
    v = {"1": True, "true": True, "yes": True, "si": True, "sí": True,
         "0": False, "false": False, "no": False}.get(raw.strip().lower())
    return (v, None) if v is not None else (None, ("why_bool", {}))


PARSERS = {
    "lang": lambda raw: _choice(raw, {l: l for l in LANGS}),
    "mode": lambda raw: _choice(raw, MODE_ALIASES),
    "t": lambda raw: _int(raw, *T_RANGE),
    "seed": lambda raw: _int(raw, *SEED_RANGE),
    "speed": lambda raw: _int(raw, *SPEED_RANGE),
    "top_p": lambda raw: _float(raw, *TOP_P_RANGE),
    "embed": _bool,
}


def parse(query) -> UrlState:
    state = UrlState()
    for key, raw in _as_dict(query).items():
        parser = PARSERS.get(key)
        if parser is None:
            state.notices.append((key, raw, "why_unknown", {}))
            continue
        value, problem = parser(raw)
        if problem:
            state.notices.append((key, raw, *problem))
        else:
            setattr(state, key, value)
    return state
