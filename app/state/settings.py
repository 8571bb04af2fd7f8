"""What a reader (or a course page's URL) can set: one `param` object, no Panel.

    ?lang=en&mode=full&t=40&seed=3&speed=8&top_p=0.8&embed=1&theme=dark

The parameters carry their own bounds, so the URL parser, the page's widgets
(`Widget.from_param`) and the share link all read them from here, and no range is
written twice; the position's bounds come from the model (its prompt and n_ctx).
Every URL parameter is optional. A bad value is ignored and reported as a notice
(shown on the page in the reader's language); parsing never raises. One rule for
every reader of the URL: a key given twice counts once, with its last value; a
value is trimmed of spaces; numbers are plain ASCII digits (an optional sign, a
decimal point, an exponent), at most 40 characters. The static page's shell reads
the URL before Python runs with the same rules, exported by `url_rules()`
(static/urlquery.js; tests/test_urlquery.py runs both on the same URLs).
"""

from __future__ import annotations

import re
from urllib.parse import parse_qs

import param

from model.config import CACHE_FORMATS, KV_HEADS_CHECKPOINTS

from ..i18n import DEFAULT_LANG, LANGS

CACHE, FULL = "cache", "full"
MODES = (CACHE, FULL)
THEMES = ("auto", "light", "dark")  # theme=: auto follows the reader's system (prefers-color-scheme)
ALIASES = {"mode": {"con": CACHE, "sin": FULL, "nocache": FULL, "no-cache": FULL}}
TRUE, FALSE = ("1", "true", "yes", "si", "sí"), ("0", "false", "no")
MAX_DIGITS = 40  # a longer number is not a seed or a position: refused before int() sees it
SPACES = " \t\n\r\f\v"
INTEGER = re.compile(r"[+-]?[0-9]+")
NUMBER = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")


class Settings(param.Parameterized):
    lang = param.Selector(default=DEFAULT_LANG, objects=list(LANGS), doc="Language of the page.")
    mode = param.Selector(default=CACHE, objects=list(MODES), doc="With the cache, or the full pass.")
    t = param.Integer(default=None, allow_None=True, bounds=(2, 64), doc="Start at this position.")
    seed = param.Integer(default=0, bounds=(0, 2**32 - 1), doc="Seed of the sampler.")
    top_p = param.Number(default=0.9, bounds=(0.05, 1.0), step=0.05, doc="Top-p of the sampler.")
    speed = param.Integer(default=4, bounds=(1, 20), doc="Tokens per second when animating.")
    embed = param.Boolean(default=False, doc="No title or introduction: the course page has its own.")
    theme = param.Selector(
        default="auto",
        objects=list(THEMES),
        doc="Light or dark; auto follows the reader's system (a course page whose palette is a toggle says which).",
    )
    kv_heads = param.Selector(
        default=4, objects=list(KV_HEADS_CHECKPOINTS), doc="Key/value heads: 4 is the lesson's model."
    )
    precision = param.Selector(
        default="float64", objects=list(CACHE_FORMATS), doc="How the cache stores its numbers: float64 is the lesson's."
    )

    URL_KEYS = ("lang", "mode", "t", "seed", "top_p", "speed", "embed", "theme", "kv_heads", "precision")

    def __init__(self, n_ctx: int = 64, n_prompt: int = 2, **params):
        super().__init__(**params)
        self.param.t.bounds = (n_prompt, n_ctx)  # per instance: the model's own window
        self.notices: list[tuple[str, str, str, dict]] = []  # (key, value, reason key, reason values)

    def query(self) -> str:
        """The query string that reproduces this state (a share link, a reload)."""
        parts = [f"lang={self.lang}", f"mode={self.mode}"]
        if self.t is not None:
            parts.append(f"t={self.t}")
        parts += [f"seed={self.seed}", f"speed={self.speed}", f"top_p={self.top_p:g}"]
        if self.kv_heads != 4 or self.precision != "float64":  # beyond the lesson: only when chosen
            parts += [f"kv_heads={self.kv_heads}", f"precision={self.precision}"]
        if self.embed:
            parts.append("embed=1")
        if self.theme != "auto":
            parts.append(f"theme={self.theme}")
        return "?" + "&".join(parts)

    def url_rules(self) -> dict:
        """How the URL is read, for the page's shell (static/urlquery.js): each key's kind, choices,
        aliases, bounds and default."""
        params = {}
        for key in self.URL_KEYS:
            p = self.param[key]
            if isinstance(p, param.Boolean):
                rule = {"kind": "bool"}
            elif isinstance(p, param.Selector):
                rule = {"kind": "choice", "choices": list(p.objects), "aliases": ALIASES.get(key, {})}
            else:
                rule = {"kind": "int" if isinstance(p, param.Integer) else "float", "bounds": list(p.bounds)}
            params[key] = {**rule, "default": p.default}
        return {
            "params": params,
            "true": list(TRUE),
            "false": list(FALSE),
            "spaces": SPACES,
            "max_digits": MAX_DIGITS,
            "integer": INTEGER.pattern,
            "number": NUMBER.pattern,
        }

    @classmethod
    def from_query(cls, query, n_ctx: int = 64, n_prompt: int = 2) -> Settings:
        """Settings from a URL query ('?lang=en&t=12') or Panel's session_args; bad values become
        notices."""
        settings = cls(n_ctx=n_ctx, n_prompt=n_prompt)
        for key, raw in query_dict(query).items():
            if key not in cls.URL_KEYS:
                settings.notices.append((key, raw, "why_unknown", {}))
                continue
            value, problem = parse_value(settings.param[key], raw, ALIASES.get(key, {}))
            if problem:
                settings.notices.append((key, raw, *problem))
            else:
                setattr(settings, key, value)
        return settings


def query_dict(query) -> dict[str, str]:
    """'?a=1&b=2&a=3', or Panel's session_args ({'a': [b'1']}) -> {key: its last value}."""
    if query is None:
        return {}
    pairs = parse_qs(query.lstrip("?"), keep_blank_values=True) if isinstance(query, str) else dict(query)
    out = {}
    for key, values in pairs.items():
        values = values if isinstance(values, (list, tuple)) else [values]
        value = values[-1] if values else ""
        out[str(key)] = value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
    return out


def parse_value(p: param.Parameter, raw: str, aliases: dict):
    """(value, None) if `raw` is a valid value of the parameter, else (None, (reason key, values))."""
    text = raw.strip(SPACES)
    if isinstance(p, param.Boolean):
        low = text.lower()
        return (low in TRUE, None) if low in TRUE + FALSE else (None, ("why_bool", {}))
    if isinstance(p, param.Selector):
        value = aliases.get(text.lower(), text.lower())
        match = next((o for o in p.objects if str(o) == value), None)
        if match is not None:
            return match, None
        return None, ("why_choice", {"options": ", ".join(map(str, p.objects))})
    if isinstance(p, param.Integer):
        value = int(text) if len(text) <= MAX_DIGITS and INTEGER.fullmatch(text) else None
        return in_bounds(p, value, "why_int")
    value = float(text) if len(text) <= MAX_DIGITS and NUMBER.fullmatch(text) else None
    return in_bounds(p, value, "why_float")


def in_bounds(p: param.Parameter, value, why_not: str):
    if value is None:
        return None, (why_not, {})
    lo, hi = p.bounds
    return (value, None) if lo <= value <= hi else (None, ("why_range", {"lo": lo, "hi": hi}))
