#!/usr/bin/env python3
"""Build the explorable as a static site in dist/ (issue 4); the work is done in buildsupport/.

    python build.py                 # self-contained site in dist/
    python build.py --cdn           # smaller: Pyodide runtime + its packages from the Pyodide CDN
    python build.py serve           # build, serve dist/ on 127.0.0.1 and open the browser
    python build.py serve --no-open --port 8000 --csp
    python build.py dev             # no build: the app under Panel's own server (development)
    python build.py scorm           # build, then dist/scorm/*.zip: SCORM 1.2 and 2004 packages (LMSs)
    python build.py --update-lock   # record sha256 of new wheel/pyodide versions in build.lock.json

What ends up in dist/ (self-contained), in the order build() makes it:
    panel/<version>/dist/                     Panel's stylesheets, which the app's models reference
    assets/js/                                BokehJS and Panel's JavaScript
    assets/states-<hash>/LANG-MODE-T.html     the first paint: the HTML preview of every state a URL can
                                              ask for (the default one is also inline in index.html),
    assets/grid.*.png                         and the grid image they share
    pyodide/<version>/                        the Pyodide runtime and its (slimmed) standard library
    packages/<hash>/*.whl                     numpy, pyyaml, markupsafe, packaging, nh3 (compiled by
                                              Pyodide) and the slimmed pure wheels; assets/pyodide-lock.*.json
    packages/<hash>/*-lazy.zip                the modules of each wheel the app does not import at
                                              start-up; assets/lazy-modules.*.json indexes them
    assets/app.*.zip                          app/ + model/ + the checkpoint
    index.html, embed.html, _headers          from static/, with the worker, loader and CSS in assets/
    build-info.json                           versions, the CSP, every file's sha256
Names in assets/ and packages/ carry content hashes (cached forever; the pages are no-cache).
Text files and the runtime have precompressed .gz (and .zst) copies beside them.

Inputs are checked: the Pyodide npm tarball and every pure wheel against the sha256 recorded in
build.lock.json, the compiled Pyodide wheels against Pyodide's own lock file. They are kept in a
cache folder outside the repository (--cache DIR, or $KV_EXPLORABLE_CACHE, default
~/.cache/kv-explorable), so the second build runs offline. The compiled wheels cannot be fetched
with pip or npm: the build downloads them from the Pyodide CDN (checked against Pyodide's lock, as
the reader's browser would), or takes them from <cache>/pyodide-<version>/ or the folders given by
--pyodide-wheels / $KV_EXPLORABLE_PYODIDE_WHEELS; without them it stops and names every missing
file. $KV_EXPLORABLE_OFFLINE=1 skips the download.

Speed: the build runs the page's start-up (app/wasm.py, as static/worker.js calls it) in Pyodide
under Node.js and records which modules it imports. Those ship compiled to bytecode by Pyodide's
own CPython, as sourceless .pyc; every other module of the wheels and the standard library goes
to a *-lazy.zip fetched only if something imports it later (app/lazyimport.py). Derived files
are cached by the hashes of their inputs.

Needs: Node.js and npm (Pyodide's npm package, bytecode), pip (wheels), the venv's panel/bokeh
(their JS/CSS, and the prerender). Optional: zstd (smaller precompressed copies).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from buildsupport.common import CSP, DEFAULT_CACHE, DEFAULT_DIST, LOCK_PATH, BuildError, log
from buildsupport.derive import derive
from buildsupport.inputs import Inputs, wheel_dirs
from buildsupport.lockfile import check_pins, load_lock, update_lock
from buildsupport.output import write_dist
from buildsupport.packages import fetch_packages, unpack_runtime
from buildsupport.prerender import Prerender
from buildsupport.scorm import write_packages
from buildsupport.serve import serve_in_thread, serve_until_stopped
from buildsupport.site import (
    Site,
    add_app,
    add_lazy_modules,
    add_packages,
    add_page_scripts,
    add_pages,
    add_panel_styles,
    add_runtime,
    add_sandbox,
    add_snapshots,
)

__all__ = ["build", "main", "BuildError", "CSP", "DEFAULT_CACHE", "LOCK_PATH", "serve_in_thread"]


def build(out: Path = DEFAULT_DIST, cache: Path = DEFAULT_CACHE, cdn: bool = False, pyodide_wheels=()) -> Path:
    """Build the site into out; see the module's docstring for what it holds."""
    started, out, lock = time.time(), Path(out).resolve(), load_lock()
    with Prerender() as prerender:  # CPython, in parallel with fetching
        inputs = Inputs(cache, lock["pyodide"]["version"], wheel_dirs(pyodide_wheels))
        log(f"cache: {inputs.cache}")
        runtime = unpack_runtime(inputs, lock["pyodide"]["sha256"])
        packages = fetch_packages(inputs, runtime, lock["wheels"], cdn)
        pre = check_pins(prerender.result(), lock)
    derived = derive(inputs, runtime, packages, pre["modules"], [f"?lang={lang}" for lang in pre["langs"]], cdn)
    cdn_url = inputs.cdn if cdn else None
    site = Site(pre["panel_version"])
    add_panel_styles(site)
    add_page_scripts(site, pre)
    add_snapshots(site, pre)
    add_runtime(site, runtime, derived, inputs.version, cdn_url)
    add_packages(site, derived, runtime.lock, cdn_url)
    add_lazy_modules(site, derived, inputs.version)
    add_app(site, derived)
    add_sandbox(site)
    add_pages(site)
    info = {
        "pyodide": inputs.version,
        "panel": pre["panel_version"],
        "bokeh": pre["bokeh_version"],
        "cdn": cdn,
        "csp": CSP + (f" (add {cdn_url} to script-src and connect-src)" if cdn else ""),
    }
    size = write_dist(site, out, inputs.derived, info)
    log(
        f"wrote {out} ({len(site.files)} files, {size / 1e6:.1f} MB) in {time.time() - started:.1f}s"
        f"{' [--cdn]' if cdn else ''}"
    )
    return out


def parse_args(argv):
    ap = argparse.ArgumentParser(description="Build the KV-cache explorable as a static site in dist/.")
    ap.add_argument(
        "command",
        nargs="?",
        choices=["build", "serve", "dev", "scorm"],
        default="build",
        help="build dist/; serve it; scorm: also its SCORM packages; or dev: the app under Panel's server, no build",
    )
    ap.add_argument("--out", type=Path, default=DEFAULT_DIST, help="output folder (default: dist/)")
    ap.add_argument(
        "--cache",
        type=Path,
        default=DEFAULT_CACHE,
        help="download cache (default: $KV_EXPLORABLE_CACHE or ~/.cache/kv-explorable)",
    )
    ap.add_argument(
        "--pyodide-wheels",
        action="append",
        default=[],
        metavar="DIR",
        help="another folder to look in for the compiled Pyodide wheels (numpy, nh3, ...)",
    )
    ap.add_argument("--cdn", action="store_true", help="load the Pyodide runtime and its packages from the Pyodide CDN")
    ap.add_argument("--update-lock", action="store_true", help="download and record new hashes in build.lock.json")
    ap.add_argument("--port", type=int, default=8000, help="serve: port (default 8000; 0 = any free port)")
    ap.add_argument("--no-open", action="store_true", help="serve: do not open the browser")
    ap.add_argument("--no-build", action="store_true", help="serve: serve the existing dist/ as it is")
    ap.add_argument(
        "--csp",
        nargs="?",
        const=CSP,
        default=None,
        metavar="POLICY",
        help="serve: send a Content-Security-Policy header (default: the recommended policy)",
    )
    return ap.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.command == "dev":
        from buildsupport import paneldev

        port = args.port if args.port != 8000 else 5006
        return paneldev.run(port, not args.no_open, args.cache, wheel_dirs(args.pyodide_wheels))
    try:
        if args.update_lock:
            update_lock(args.cache)
            return 0
        if not (args.command == "serve" and args.no_build):
            build(args.out, args.cache, args.cdn, args.pyodide_wheels)
        if args.command == "scorm":
            write_packages(args.out)  # buildsupport/scorm.py
    except BuildError as e:
        print(f"build failed: {e}", file=sys.stderr)
        return 1
    return serve_until_stopped(args.out, args.port, args.csp, not args.no_open) if args.command == "serve" else 0


if __name__ == "__main__":
    sys.exit(main())
