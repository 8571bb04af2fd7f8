"""One way to read the URL: the page's shell (static/urlquery.js, before Python runs) and the app
(app/state/settings.py) read the same values from the same URLs, with the rules the build exports."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from app.main import load_model, settings_for
from app.state.settings import Settings
from tests.browser import ROOT

QUERIES = [
    "",
    "?lang=en&lang=pt",
    "?lang=pt&lang=en",
    "?lang=english",
    "?lang=EN",
    "?lang=%20pt%20",
    "?lang=en+",
    "?lang=",
    "?lang",
    "?mode=SIN",
    "?mode=nocache",
    "?mode=no-cache",
    "?mode=constructor",
    "?mode=__proto__",
    "?t=64",
    "?t=65",
    "?t=1",
    "?t=2",
    "?t=+12",
    "?t=-3",
    "?t=12.0",
    "?t=1_2",
    "?t=%D9%A3",
    "?t=0012",
    "?t=" + "9" * 40,
    "?t=" + "9" * 41,
    "?seed=" + "1" * 100_000,
    "?seed=4294967295",
    "?seed=4294967296",
    "?seed=-0",
    "?seed=1e3",
    "?top_p=.5",
    "?top_p=1e-1",
    "?top_p=1.",
    "?top_p=nan",
    "?top_p=inf",
    "?top_p=0.049",
    "?top_p=1.0000001",
    "?top_p=%20%200.8%09",
    "?top_p=0,8",
    "?speed=20&speed=21",
    "?speed=21&speed=20",
    "?embed=1",
    "?embed=s%C3%AD",
    "?embed=S%C3%8D",
    "?embed=maybe",
    "?embed",
    "?embed=0&embed=yes",
    "?theme=dark",
    "?theme=LIGHT",
    "?theme=%20auto%20",
    "?theme=slate",
    "?theme=dark&theme=",
    "?t=40&t=",
    "?x=1&t=5",
    "?lang=es;t=5",
    "?t=12%2B",
    "?t=%FF",
    "?lang=pt&mode=full&t=64&seed=3&top_p=0.8&speed=8&embed=1",
    "?" + "&".join(f"k{i}=v" for i in range(5000)) + "&t=7",
]

# Bytes no URL value should have, each for every key (and as a key): the shell and the app read them
# alike (the default, or the last good value), and nothing raises.
BAD_BYTES = [
    "%C0%AF",  # an overlong "/"
    "%C0%80",  # an overlong NUL
    "%E0%80%80",  # an overlong NUL in three bytes
    "%ED%A0%80",  # a surrogate
    "%F4%90%80%80",  # past U+10FFFF
    "%80",  # a lone continuation byte
    "%E2%82",  # a sequence cut short
    "%FF%FE",
    "%00",
    "5%00",
    "%",
    "%G1",
    "%25C0%25AF",  # encoded twice
    "%EF%BB%BF1",  # a byte order mark, then a good number
    "%0D%0A%1B[31m",
    "%C0%AF" * 3000,
]
FUZZ = [f"?{key}={bad}" for key in Settings.URL_KEYS for bad in BAD_BYTES]
FUZZ += [f"?{key}={good}&{key}={bad}" for key, good in (("lang", "en"), ("t", "12")) for bad in BAD_BYTES]
FUZZ += [f"?{bad}=1&t=9" for bad in BAD_BYTES]


def app_values(query: str) -> dict:
    s = settings_for(query, load_model())
    return {key: getattr(s, key) for key in Settings.URL_KEYS}


@pytest.mark.skipif(shutil.which("node") is None, reason="Node.js not found (apt-get install nodejs)")
@pytest.mark.parametrize("queries", [QUERIES, FUZZ], ids=["queries", "bad bytes"])
def test_shell_and_app_read_the_same_values(queries):
    rules = settings_for(None, load_model()).url_rules()
    out = subprocess.run(
        ["node", str(ROOT / "tests" / "js" / "read_queries.js")],
        cwd=ROOT,
        check=True,
        input=json.dumps({"rules": rules, "queries": queries}),
        capture_output=True,
        text=True,
    )
    shell = json.loads(out.stdout)
    assert len(shell) == len(queries)
    for query, values in zip(queries, shell):
        assert values == app_values(query), query[:80]


def test_the_rules_and_their_reading():
    """The cases the issue names, read by the app: the last value, no crash, bounds."""
    assert app_values("?lang=en&lang=pt")["lang"] == "pt"
    assert app_values("?lang=english")["lang"] == "es"
    assert app_values("?seed=" + "1" * 100_000)["seed"] == 0
    assert app_values("?t=1_2")["t"] is None and app_values("?t=+12")["t"] == 12
    s = settings_for("?lang=english&seed=" + "1" * 100_000, load_model())
    assert [n[0] for n in s.notices] == ["lang", "seed"]


def test_the_preview_has_the_live_pages_keys():
    """static/keys.js answers the keyboard on the preview with the live page's map (app/components/a11y.js)."""
    import re

    def keys(path: str) -> dict[str, str]:
        text = (ROOT / path).read_text(encoding="utf-8")
        block = re.search(r"const (?:keys|KEYS) = \{(.*?)\};", text, re.S).group(1)
        pairs = re.findall(r"""(?:'([^']+)'|"([^"]+)"|(\w+)):\s*['"](\w+)['"]""", block)
        return {next(k for k in m[:3] if k): m[3] for m in pairs}

    live, preview = keys("app/components/a11y.js"), keys("static/keys.js")
    assert live == preview and live["ArrowRight"] == "step" and live[" "] == "play", (live, preview)
