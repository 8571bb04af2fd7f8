"""The sites tests/bench_load.py compares, each served the same way (build.py's server, from one
folder):

- the static site (build.build into a temporary folder);
- the bare yardstick: a page that boots the same Pyodide, from the site's own runtime files and
  NumPy wheel, in a Web Worker, imports NumPy and nothing else (tests/bench/bare*.{html,js});
- the baseline: `panel convert <script> --to pyodide-worker` with Panel's defaults for a two-line
  script equivalent to app/explorable.py (tests/bench/baseline_app.py). Two changes are unavoidable
  for it to run here at all:
    - panel convert cannot pack ../model, and its auto-detected requirement "app" is not a PyPI
      package: the app + model go in as Panel's own data archive (data_archives) and the
      requirement list is given explicitly;
    - Panel's micropip.install resolves panel's dependencies on PyPI (pandas, ... whose Pyodide
      builds are not obtainable here): the worker installs the same wheels as the static site
      (nh3 included), by URL, with deps=False (micropip still does the installing).
  Its CDN URLs (Pyodide CDN, Panel CDN, Bokeh CDN, PyPI files) are rewritten to a local mirror of
  the same files under the same server, with gzip for text/wasm and immutable caching as those
  CDNs send (also PANEL_CDN_ROOT in its worker, for Panel's stylesheets); Panel's CDN wheels are
  the slimmed sources (what Panel's build_pyodide_wheels.py publishes).
"""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import build
from buildsupport.common import sha256_file
from buildsupport.packages import COMPILED_PACKAGES as COMPILED
from buildsupport.wheels import pack_wheel, unpack_slim
from tests.site_fixtures import compiled_wheel_candidates

ROOT = Path(__file__).resolve().parents[1]
FILES = Path(__file__).resolve().parent / "bench"
CONFIG = re.compile(r'<script type="application/json" id="kv-config">(.*?)</script>', re.S)
BARE_CONFIG = ("pyodide", "indexURL", "stdlib", "lock", "packageBaseUrl")


def bare_config(site: Path) -> str:
    """The site's runtime files and lock file, as the bare pages' {{CONFIG}} (JSON)."""
    config = json.loads(CONFIG.search((site / "index.html").read_text(encoding="utf-8")).group(1))
    return json.dumps({k: config[k] for k in BARE_CONFIG})


def make_bare(site: Path) -> str:
    """The bare page beside the site's index.html, on the site's runtime files and lock file;
    returns its name."""
    html = (FILES / "bare.html").read_text(encoding="utf-8")
    (site / "bare.html").write_text(html.replace("{{CONFIG}}", bare_config(site)), encoding="utf-8")
    for name in ("bare.js", "bare-worker.js"):
        shutil.copy(FILES / name, site / name)
    return "bare.html"


def panel_convert(work: Path) -> Path:
    """`panel convert --to pyodide-worker` of the two-line app script, into work/baseline."""
    site, src = work / "baseline", work / "baseline-src"
    src.mkdir(parents=True)
    shutil.copy(FILES / "baseline_app.py", src / "explorable.py")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    subprocess.run(
        [
            sys.executable,
            "-m",
            "panel",
            "convert",
            str(src / "explorable.py"),
            "--to",
            "pyodide-worker",
            "--out",
            str(site),
            "--requirements",
            "numpy",
        ],
        check=True,
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return site


def mirror_pyodide(full: Path, cache: Path, version: str) -> None:
    """The Pyodide CDN's files the baseline loads: the runtime from the npm tarball, the compiled
    wheels (checked against Pyodide's lock) from where the tests find them."""
    rt = next((cache / "derived").glob(f"pyodide-{version}-*"))
    full.mkdir(parents=True)
    for f in ("pyodide.js", "pyodide.asm.js", "pyodide.asm.wasm", "python_stdlib.zip", "pyodide-lock.json"):
        shutil.copy(rt / f, full / f)
    lock = json.loads((rt / "pyodide-lock.json").read_text())
    for name in COMPILED + ("micropip",):
        fn = lock["packages"][name]["file_name"]
        found = [d / fn for d in compiled_wheel_candidates() if (d / fn).is_file()]
        if not found:
            raise SystemExit(f"{fn} (for the panel convert baseline) is in none of {compiled_wheel_candidates()}")
        if sha256_file(found[0]) != lock["packages"][name]["sha256"]:
            raise SystemExit(f"{found[0]}: sha256 does not match pyodide-lock.json")
        shutil.copy(found[0], full)


def mirror_panel_bokeh(m: Path, work: Path, cache: Path, wheels: list[str]) -> None:
    """Panel's and Bokeh's CDN files from the installed packages; Panel's CDN wheels are slimmed
    sources (what its build_pyodide_wheels.py publishes); the other wheels as PyPI has them."""
    import bokeh
    import panel

    pv = panel.__version__
    shutil.copytree(
        Path(panel.__file__).parent / "dist",
        m / "panel" / pv / "dist",
        ignore=shutil.ignore_patterns("wheels", "*.map", "lib", "dts"),
    )
    (m / "bokeh" / "release").mkdir(parents=True)
    for f in (Path(bokeh.__file__).parent / "server" / "static" / "js").glob("*.min.js"):
        shutil.copy(f, m / "bokeh" / "release" / f.name.replace(".min.js", f"-{bokeh.__version__}.min.js"))
    places = {"panel": m / "panel" / pv / "dist" / "wheels", "bokeh": m / "panel" / "wheels"}
    for folder in (*places.values(), m / "pypi"):
        folder.mkdir(parents=True, exist_ok=True)
    for filename in wheels:
        name = filename.split("-")[0]
        whl = cache / "downloads" / filename
        if name in places:
            unpack_slim(whl, work / f"slim-{name}", name)
            pack_wheel(work / f"slim-{name}", places[name] / filename, deflate=True)
        else:
            shutil.copy(whl, m / "pypi" / filename)


def copy_app_archive(ours: Path, site: Path) -> None:
    """The app + model as Panel's data archive: our app archive without its bytecode."""
    (ours_app,) = (ours / "assets").glob("app.*.zip")
    with zipfile.ZipFile(ours_app) as zin, zipfile.ZipFile(site / "app.zip", "w", zipfile.ZIP_DEFLATED) as zout:
        for n in zin.namelist():
            if "__pycache__" not in n:
                zout.writestr(n, zin.read(n))


def to_mirror(text: str, version: str) -> str:
    """Point the CDN URLs at the mirror (relative: the page and the worker resolve them)."""
    rewrites = {
        f"https://cdn.jsdelivr.net/pyodide/v{version}/full/": f"./mirror/pyodide/v{version}/full/",
        "https://cdn.holoviz.org/panel/": "./mirror/panel/",
        "https://cdn.bokeh.org/bokeh/release/": "./mirror/bokeh/release/",
    }
    for a, b in rewrites.items():
        text = text.replace(a, b)
    return text


def baseline_worker(worker: str, wheels: list[str], panel_version: str) -> str:
    """The same wheels as the static site, by URL, with deps=False (PyPI resolution is impossible
    here), the app archive, and Panel's stylesheets from the mirror."""
    by_name = {f.split("-")[0]: f for f in wheels}
    specs = (
        [f"./mirror/panel/wheels/{by_name['bokeh']}", f"./mirror/panel/{panel_version}/dist/wheels/{by_name['panel']}"]
        + [f"./mirror/pypi/{f}" for n, f in by_name.items() if n not in ("panel", "bokeh")]
        + list(COMPILED)
    )
    worker, n = re.subn(
        r"await micropip\.install\(\[.*?\]\);",
        "await micropip.install(" + repr(specs) + ", deps=False);",
        worker,
        flags=re.S,
    )
    assert n == 1, "panel convert's worker template changed: update tests/bench_sites.py"
    worker = worker.replace("const data_archives = [];", "const data_archives = ['./app.zip'];")
    marker = "const [docs_json, render_items, root_ids] = await self.pyodide.runPythonAsync(`"
    assert marker in worker, "panel convert's worker template changed: update tests/bench_sites.py"
    return worker.replace(
        marker,
        marker + "\nimport os\nos.environ['PANEL_CDN_ROOT'] = "
        "'${new URL('./mirror/panel/', self.location.href).href}'\n",
    )


def make_baseline(work: Path, cache: Path, ours: Path) -> Path:
    """panel convert output + a local mirror of the CDN files it names."""
    import panel
    from panel.io.convert import PYODIDE_VERSION

    version = PYODIDE_VERSION.lstrip("v")
    wheels = list(json.loads(build.LOCK_PATH.read_text())["wheels"])
    site = panel_convert(work)
    mirror_pyodide(site / "mirror" / "pyodide" / f"v{version}" / "full", cache, version)
    mirror_panel_bokeh(site / "mirror", work, cache, wheels)
    copy_app_archive(ours, site)
    worker = baseline_worker(to_mirror((site / "explorable.js").read_text(), version), wheels, panel.__version__)
    (site / "explorable.js").write_text(worker)
    # Mark the live render for the probe (Panel removes body.pn-loading when it embeds the live doc).
    rendered = (FILES / "baseline_rendered.js").read_text(encoding="utf-8")
    html = to_mirror((site / "explorable.html").read_text(), version).replace(
        "</body>", f"<script>{rendered}</script></body>"
    )
    (site / "index.html").write_text(html)
    for p in list(site.rglob("*")):
        if p.is_file() and p.suffix in (".js", ".css", ".json", ".wasm", ".html") and p.stat().st_size > 1024:
            p.with_name(p.name + ".gz").write_bytes(gzip.compress(p.read_bytes(), 9, mtime=0))
    return site
