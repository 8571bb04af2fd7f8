"""The prerender: the app built once per language in CPython, in a process of its own (Panel reads
PANEL_CDN_ROOT when it is imported), while the build fetches and compiles.

    python -m buildsupport.prerender OUT.json

writes, per language of app/i18n (a catalog each), the first paint (app/figure/snapshot.py's HTML of every state a
URL can ask for with the default seed and top-p, and the text's grid image), the URL's rules for
the page's shell (app/state/settings.py), the page scripts and stylesheets the app's models need, the
Pyodide version Panel pins, the panel and bokeh versions and the modules CPython imported (the
fallback when the Pyodide trace cannot run).
"""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from .common import ROOT, SENTINEL_CDN, BuildError

SCRIPT = re.compile(r'<script[^>]*\bsrc="([^"]+)"')
STYLESHEET = re.compile(r'<link[^>]*\bhref="([^"]+)"')


def add_new(urls: list[str], found: list[str]) -> None:
    urls.extend(u for u in found if u not in urls)


def prerender() -> dict:
    """Run in the prerender process, once PANEL_CDN_ROOT is set."""
    import bokeh
    import panel

    from app.i18n import DEFAULT_LANG, LANGS
    from app.main import create_view
    from app.wasm import prerender as prerender_view
    from app.wasm import pyodide_version

    out = {
        "pyodide_version": pyodide_version(),
        "panel_version": panel.__version__,
        "bokeh_version": bokeh.__version__,
        "js": [],
        "css": [],
        "default_lang": DEFAULT_LANG,
        "langs": list(LANGS),
        **previews(LANGS, create_view),
    }
    for lang in LANGS:
        _view, js, css = prerender_view(f"?lang={lang}")
        add_new(out["js"], SCRIPT.findall(js))
        add_new(out["css"], STYLESHEET.findall(css))
    out["modules"] = sorted(sys.modules)
    return out


def previews(langs, create_view) -> dict:
    """The first paint of every state a URL can ask for (app/figure/snapshot.py), the grid image they share,
    what the build fills in, and the URL's rules the page's shell reads them by (app/state/settings.py)."""
    from app.figure.snapshot import GRID_URL, PROGRESS, render_states, style
    from app.main import load_model, settings_for

    out = {
        "states": {},
        "snapshot_style": style(),
        "grid_placeholder": GRID_URL,
        "progress_marker": PROGRESS,
        "query": settings_for(None, load_model()).url_rules(),
    }
    for lang in langs:
        for name, data in render_states(create_view, lang):
            if name == "grid":
                out["grid"] = base64.b64encode(data).decode()
            else:
                out["states"][name] = data
    return out


def main(argv: list[str]) -> int:
    os.environ["PANEL_CDN_ROOT"] = SENTINEL_CDN
    os.environ.setdefault("BOKEH_RESOURCES", "cdn")
    Path(argv[0]).write_text(json.dumps(prerender()), encoding="utf-8")
    return 0


class Prerender:
    """The prerender process, started at once and awaited when its result is needed."""

    def __init__(self):
        fd, name = tempfile.mkstemp(prefix="kv-prerender-", suffix=".json")
        os.close(fd)
        self.out = Path(name)
        env = dict(os.environ, PYTHONHASHSEED="0", BOKEH_SIMPLE_IDS="1")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "buildsupport.prerender", str(self.out)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            cwd=ROOT,
        )

    def result(self) -> dict:
        _, err = self.proc.communicate()
        if self.proc.returncode != 0:
            raise BuildError(f"prerendering the app in CPython failed:\n{err[-3000:]}")
        return json.loads(self.out.read_text(encoding="utf-8"))

    def __enter__(self) -> Prerender:
        return self

    def __exit__(self, *exc) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.out.unlink(missing_ok=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
