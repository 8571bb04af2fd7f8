"""Load-speed benchmark of the static site against Panel's own `panel convert` output.

    python -m tests.bench_load            # 3 rounds (cold + warm for each site), Markdown table
    python -m tests.bench_load --rounds 5 --json out.json

Not a test: it prints numbers. What it does, in one run:
  1. builds the self-contained site afresh (build.build into a temporary folder);
  2. makes the baseline: `panel convert <script> --to pyodide-worker` with Panel's defaults for
     a two-line script equivalent to app/explorable.py (create_app(...).servable()). Two changes
     are unavoidable for it to run here at all, and are the same for both sites:
       - panel convert cannot pack ../model, and its auto-detected requirement "app" is not a
         PyPI package: the app + model go in as Panel's own data archive (data_archives) and
         the requirement list is given explicitly;
       - Panel's micropip.install resolves panel's dependencies on PyPI (pandas, ... whose
         Pyodide builds are not obtainable here): the worker installs the same wheels as the
         static site (nh3 included), by URL, with deps=False (micropip still does the installing).
     Its CDN URLs (Pyodide CDN, Panel CDN, Bokeh CDN, PyPI files) are rewritten to a local
     mirror of the same files under the same server, with gzip for text/wasm and immutable
     caching as those CDNs send (also PANEL_CDN_ROOT in its worker, for Panel's stylesheets);
     Panel's CDN wheels are the slimmed sources (what Panel's build_pyodide_wheels.py
     publishes). Requests still aimed at another origin are listed in the output.
  3. for each site: a new browser context (cold: empty cache) loads the page, waits until it
     is interactive; a second page in the same context measures the warm visit. Times are
     from navigation start: first paint = the page's snapshot has painted (ours: its HTML snapshot,
     the loader's kv-first-paint mark; the baseline: BokehJS has rendered its document);
     interactive = the live Python document is linked. Bytes are what the server sent
     (compressed where it sends gzip), by kind.
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import build  # noqa: E402
from buildsupport.common import sha256_file  # noqa: E402
from buildsupport.packages import COMPILED_PACKAGES as COMPILED  # noqa: E402
from buildsupport.wheels import pack_wheel, unpack_slim  # noqa: E402
from tests.browser import chromium  # noqa: E402
from tests.site_fixtures import compiled_wheel_candidates, compiled_wheels_dir  # noqa: E402

PROBE = """
(() => {
  window.__probe = {};
  const tick = () => {
    const p = window.__probe;
    const B = window.Bokeh;
    const mark = performance.getEntriesByName('kv-first-paint')[0];   // ours: the HTML snapshot painted
    if (p.fp === undefined && mark) p.fp = mark.startTime;
    if (p.fp === undefined && B && B.index && B.index.roots && B.index.roots.length) {
      requestAnimationFrame(() => { if (p.fp === undefined) p.fp = performance.now(); });
    }
    const b = document.body;
    if (p.ready === undefined && b && (b.dataset.ready === 'true' ||
        (b.dataset.baseline === 'rendered'))) p.ready = performance.now();
    if (p.ready === undefined) setTimeout(tick, 10);
  };
  tick();
})();
"""

KINDS = ("runtime", "packages", "js/css", "app", "page")


def kind_of(path: str) -> str:
    if path.startswith(("pyodide/", "mirror/pyodide/")):
        return "packages" if path.endswith(".whl") else "runtime"
    if path.endswith(".whl") or "/pypi/" in path:
        return "packages"
    if path.endswith((".js", ".css")) and ("/js/" in path or path.startswith(("panel/", "mirror/"))):
        return "js/css"
    if "app." in path or "/states-" in path or "grid." in path or "pyodide-lock" in path or path.endswith(".zip"):
        return "app"
    if path.endswith((".css", ".svg", ".woff", ".woff2", ".png")):
        return "js/css"
    return "page"


# ------------------------------------------------------------------ baseline

BASELINE_SCRIPT = """\
import sys
sys.path.insert(0, "/home/pyodide")  # where Panel unpacks data archives in the browser
import panel as pn
from app.main import create_app

create_app(pn.state.session_args).servable(title="La caché de claves y valores")
"""


def panel_convert(work: Path) -> Path:
    """`panel convert --to pyodide-worker` of the two-line app script, into work/baseline."""
    site, src = work / "baseline", work / "baseline-src"
    src.mkdir(parents=True)
    (src / "explorable.py").write_text(BASELINE_SCRIPT)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    subprocess.run([sys.executable, "-m", "panel", "convert", str(src / "explorable.py"), "--to", "pyodide-worker",
                    "--out", str(site), "--requirements", "numpy"], check=True, cwd=ROOT, env=env,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
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
    shutil.copytree(Path(panel.__file__).parent / "dist", m / "panel" / pv / "dist",
                    ignore=shutil.ignore_patterns("wheels", "*.map", "lib", "dts"))
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
            pack_wheel(work / f"slim-{name}", places[name] / filename)
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
    specs = ([f"./mirror/panel/wheels/{by_name['bokeh']}",
              f"./mirror/panel/{panel_version}/dist/wheels/{by_name['panel']}"]
             + [f"./mirror/pypi/{f}" for n, f in by_name.items() if n not in ("panel", "bokeh")] + list(COMPILED))
    worker, n = re.subn(r"await micropip\.install\(\[.*?\]\);",
                        "await micropip.install(" + repr(specs) + ", deps=False);", worker, flags=re.S)
    assert n == 1, "panel convert's worker template changed: update tests/bench_load.py"
    worker = worker.replace("const data_archives = [];", "const data_archives = ['./app.zip'];")
    marker = "const [docs_json, render_items, root_ids] = await self.pyodide.runPythonAsync(`"
    assert marker in worker, "panel convert's worker template changed: update tests/bench_load.py"
    return worker.replace(marker, marker + "\nimport os\nos.environ['PANEL_CDN_ROOT'] = "
                          "'${new URL('./mirror/panel/', self.location.href).href}'\n")


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
    html = to_mirror((site / "explorable.html").read_text(), version).replace(
        "</body>", "<script>new MutationObserver((_, o) => { const b = document.body; "
        "if (!b.classList.contains('pn-loading')) { b.dataset.baseline = 'rendered'; o.disconnect(); } })"
        ".observe(document.body, {attributes: true});</script></body>")
    (site / "index.html").write_text(html)
    for p in list(site.rglob("*")):
        if p.is_file() and p.suffix in (".js", ".css", ".json", ".wasm", ".html") and p.stat().st_size > 1024:
            p.with_name(p.name + ".gz").write_bytes(gzip.compress(p.read_bytes(), 9, mtime=0))
    return site


# ------------------------------------------------------------------ measuring

def visit(context, url: str, log: list, timeout_ms: int = 120000) -> dict:
    log.clear()
    page = context.new_page()
    external = []
    page.on("request", lambda r: external.append(r.url) if not r.url.startswith(("http://127.0.0.1", "data:", "blob:")) else None)
    t = time.time()
    page.goto(url)
    page.wait_for_function("window.__probe && window.__probe.ready !== undefined", timeout=timeout_ms, polling=50)
    probe = page.evaluate("window.__probe")
    probe["mark"] = page.evaluate("(performance.getEntriesByName('kv-first-paint')[0] || {}).startTime")
    wall = time.time() - t
    page.wait_for_timeout(300)
    sent = {k: 0 for k in KINDS}
    for path, status, n in list(log):
        sent[kind_of(path)] += n
    page.close()
    return {"fp": probe.get("fp"), "fp_mark": probe.get("mark"), "ready": probe["ready"], "wall": wall, "bytes": sent, "external": external}


def run(rounds: int, cache: Path, keep: bool) -> dict:
    work = Path(tempfile.mkdtemp(prefix="kv-bench-"))
    t = time.time()
    ours = build.build(work / "dist", cache, pyodide_wheels=[str(compiled_wheels_dir())])
    build_s = time.time() - t
    baseline = make_baseline(work, cache, ours)
    log: list = []
    results = {"ours": {"cold": [], "warm": []}, "baseline": {"cold": [], "warm": []}}
    servers = {
        "ours": build.serve_in_thread(ours, 0, on_response=lambda *a: log.append(a)),
        "baseline": build.serve_in_thread(baseline, 0, on_response=lambda *a: log.append(a),
                                          immutable=("mirror/",)),
    }
    external = []
    try:
        with chromium() as browser:
            # warm the browser process up (the first page of a fresh browser is slower for anyone)
            context = browser.new_context()
            context.add_init_script(PROBE)
            visit(context, servers["ours"].url + "index.html", [])
            context.close()
            for r in range(rounds):
                for name, page in (("ours", "index.html"), ("baseline", "index.html")):
                    server = servers[name]
                    context = browser.new_context(viewport={"width": 1280, "height": 800})
                    context.add_init_script(PROBE)

                    cold = visit(context, server.url + page, log)
                    warm = visit(context, server.url + page, log)
                    context.close()
                    external += cold["external"] + warm["external"]
                    results[name]["cold"].append(cold)
                    results[name]["warm"].append(warm)
                    print(f"round {r + 1} {name:8s} cold fp {cold['fp']:.0f} ms ready {cold['ready']:.0f} ms "
                          f"{sum(cold['bytes'].values()) / 1e6:.1f} MB | warm fp {warm['fp']:.0f} ms "
                          f"ready {warm['ready']:.0f} ms {sum(warm['bytes'].values()) / 1e6:.2f} MB", flush=True)
    finally:
        for s in servers.values():
            s.shutdown()
            s.server_close()
        if not keep:
            shutil.rmtree(work, ignore_errors=True)
    results["build_s"] = build_s
    results["external"] = sorted(set(external))
    results["work"] = str(work)
    return results


def med(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else float("nan")


def table(res: dict, rounds: int) -> str:
    rows = []

    def line(label, f):
        rows.append(f"| {label} | {f('ours')} | {f('baseline')} |")

    rows.append("| measure (median of %d) | static site (build.py) | panel convert baseline |" % rounds)
    rows.append("|---|---:|---:|")
    line("cold: first paint", lambda n: f"{med([x['fp'] for x in res[n]['cold']]) / 1000:.2f} s")
    line("cold: interactive", lambda n: f"{med([x['ready'] for x in res[n]['cold']]) / 1000:.2f} s")
    line("warm: first paint", lambda n: f"{med([x['fp'] for x in res[n]['warm']]) / 1000:.2f} s")
    line("warm: interactive", lambda n: f"{med([x['ready'] for x in res[n]['warm']]) / 1000:.2f} s")
    for k in KINDS:
        line(f"cold bytes: {k}", lambda n, k=k: f"{med([x['bytes'][k] for x in res[n]['cold']]) / 1e6:.2f} MB")
    line("cold bytes: total", lambda n: f"{med([sum(x['bytes'].values()) for x in res[n]['cold']]) / 1e6:.2f} MB")
    line("warm bytes: total", lambda n: f"{med([sum(x['bytes'].values()) for x in res[n]['warm']]) / 1e6:.3f} MB")
    return "\n".join(rows)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--cache", type=Path, default=build.DEFAULT_CACHE)
    ap.add_argument("--json", type=Path, help="also write the raw results here")
    ap.add_argument("--keep", action="store_true", help="keep the built sites (path printed)")
    args = ap.parse_args(argv)
    if compiled_wheels_dir() is None:
        print("the compiled Pyodide wheels are not available (see tests/site_fixtures.py)", file=sys.stderr)
        return 2
    with open("/proc/loadavg") as f:
        load_before = f.read().split()[:3]
    res = run(args.rounds, args.cache, args.keep)
    with open("/proc/loadavg") as f:
        load_after = f.read().split()[:3]
    print()
    print(table(res, args.rounds))
    print()
    cold_ratio = med([x['ready'] for x in res['baseline']['cold']]) / med([x['ready'] for x in res['ours']['cold']])
    print(f"cold interactive: static site is {cold_ratio:.1f}x faster than the panel convert baseline.")
    print(f"build of the static site (warm cache): {res['build_s']:.1f} s. Load average before/after: "
          f"{' '.join(load_before)} / {' '.join(load_after)} (2 cores).")
    print("Baseline: `panel convert --to pyodide-worker` output; CDN URLs rewritten to a local mirror of the same "
          "files (gzip, immutable caching); same wheels as the site, installed by micropip with deps=False; "
          "app + model as Panel's data archive. Times from navigation start; first paint = BokehJS has "
          "rendered a document; interactive = live document linked. Bytes = what the server sent.")
    if res["external"]:
        print("Requests to other origins (they fail here: no network):")
        for u in res["external"]:
            print("  ", u)
    else:
        print("No request left 127.0.0.1 on either site.")
    if args.keep:
        print("sites kept in", res["work"])
    if args.json:
        args.json.write_text(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
