#!/usr/bin/env python3
"""Build the explorable as a static site in dist/ (issue 4).

    python build.py                 # self-contained site in dist/
    python build.py --cdn           # smaller: Pyodide runtime + its packages from the Pyodide CDN
    python build.py serve           # build, serve dist/ on 127.0.0.1 and open the browser
    python build.py serve --no-open --port 8000 --csp
    python build.py --update-lock   # record sha256 of new wheel/pyodide versions in build.lock.json

What ends up in dist/ (self-contained):
    index.html, embed.html, _headers          (no-cache; everything else is immutable)
    assets/   loader, worker, CSS, BokehJS + Panel JS, HTML previews of every state a URL can ask for
              (states-<hash>/LANG-MODE-T.html and their grid image; the default one is also inline in
              index.html), the site's
              Pyodide lock file, the lazy-module index, the app archive (app/ + model/ + checkpoint);
              names carry content hashes
    packages/<hash>/*.whl                     numpy, pyyaml, markupsafe, packaging and slimmed pure wheels
    packages/<hash>/*-lazy.zip                the modules of each wheel the app does not import at start-up
    pyodide/<version>/                        the Pyodide runtime and its (slimmed) standard library
    panel/<version>/dist/                     Panel's stylesheets, which the app's models reference
Text files and the runtime have precompressed .gz (and .zst) copies beside them.

Inputs are checked: the Pyodide npm tarball and every pure wheel against the sha256
recorded in build.lock.json, the compiled Pyodide wheels against Pyodide's own lock file.
They are kept in a cache folder outside the repository (--cache DIR, or $KV_EXPLORABLE_CACHE,
default ~/.cache/kv-explorable), so the second build runs offline. The compiled wheels
cannot be fetched with pip or npm: the build downloads them from the Pyodide CDN (checked
against Pyodide's lock, as the reader's browser would), or, offline, takes them from
<cache>/pyodide-<version>/ (or --pyodide-wheels / $KV_EXPLORABLE_PYODIDE_WHEELS).
$KV_EXPLORABLE_OFFLINE=1 skips that download.

Speed: the build runs the app once in Pyodide under Node.js (create_app + write_doc for es
and en) and records which modules it imports. Those ship compiled to bytecode by Pyodide's
own CPython (same magic number as the browser), as sourceless .pyc; every other module of
the wheels and the standard library goes to a *-lazy.zip that the worker fetches (and checks)
only if something imports it later. Derived files are cached by the hashes of their inputs.

Needs: Node.js and npm (Pyodide's npm package, bytecode), pip (wheels), the venv's panel/bokeh
(their JS/CSS, and the prerender). Optional: zstd (smaller precompressed copies).
"""
from __future__ import annotations

import argparse
import base64
import csv
import gzip
import hashlib
import io
import json
import mimetypes
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent
STATIC = ROOT / "static"
LOCK_PATH = ROOT / "build.lock.json"
DEFAULT_DIST = ROOT / "dist"
DEFAULT_CACHE = Path(os.environ.get("KV_EXPLORABLE_CACHE") or Path.home() / ".cache" / "kv-explorable")
# Panel builds stylesheet URLs from PANEL_CDN_ROOT; at build time it points here and every
# occurrence is rewritten to the site's own relative path.
SENTINEL_CDN = "https://panel-cdn.invalid/"
PYODIDE_CDN = "https://cdn.jsdelivr.net/pyodide/v{version}/full/"
# Bumped whenever the slimming/compiling recipe changes (invalidates derived cache entries).
RECIPE = "9"
COMPILED_PACKAGES = ("numpy", "pyyaml", "markupsafe", "packaging")
# Page scripts Panel lists that this app does not use (the e2e tests run without them):
# BokehJS's WebGL backend (the figures draw on a canvas) and es-module-shims (for Panel's
# ESM components; the app has none). -70 kB compressed, and no blob: in the CSP.
UNNEEDED_SCRIPTS = ("bokeh-gl", "es-module-shims")
# Compiled wheels used when present; otherwise a pure-Python stand-in from buildsupport/ is shipped.
OPTIONAL_COMPILED = ("nh3",)
GZIP_SUFFIXES = {".js", ".css", ".json", ".html", ".wasm", ".svg", ".map", ".txt", ".mjs", ".zip"}

# Recommended Content-Security-Policy, found with headless Chromium (tests/test_site_e2e.py::
# test_page_works_under_csp; docs/embedding.md has the evidence):
#   'wasm-unsafe-eval'  Pyodide compiles WebAssembly (worker)
#   'unsafe-eval'       Panel's ReactiveHTML (pn.FlexBox, the app's own components) builds its
#                       scripts with new Function(); Pyodide's run_js (used by Panel) evaluates JS
#   style 'unsafe-inline'  Bokeh and Panel inject <style> elements into their shadow roots
CSP = ("default-src 'self'; script-src 'self' 'wasm-unsafe-eval' 'unsafe-eval'; "
       "style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; font-src 'self' data:; "
       "connect-src 'self'; worker-src 'self'; object-src 'none'; base-uri 'self'; form-action 'none'")


class BuildError(RuntimeError):
    """A file is missing or does not match its recorded hash; the message says how to fix it."""


def log(msg: str) -> None:
    print(f"[build] {msg}", flush=True)


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def hashed_name(name: str, data: bytes, n: int = 10) -> str:
    stem, dot, ext = name.partition(".")
    return f"{stem}.{sha256_bytes(data)[:n]}.{ext}" if dot else f"{name}.{sha256_bytes(data)[:n]}"


def load_lock() -> dict:
    return json.loads(LOCK_PATH.read_text(encoding="utf-8"))


# --------------------------------------------------------------------------------------
# Inputs: fetch into the cache, check hashes
# --------------------------------------------------------------------------------------

class Inputs:
    def __init__(self, cache: Path, pyodide_version: str, extra_wheel_dirs=()):
        self.cache = Path(cache).expanduser().resolve()
        self.version = pyodide_version
        self.downloads = self.cache / "downloads"
        self.compiled_dir = self.cache / f"pyodide-{pyodide_version}"
        self.derived = self.cache / "derived"
        self.extra_wheel_dirs = [Path(d).expanduser() for d in extra_wheel_dirs if d]

    def _check(self, path: Path, expected: str, how: str) -> Path:
        actual = sha256_file(path)
        if actual != expected:
            raise BuildError(
                f"{path.name}: sha256 mismatch for {path}\n"
                f"  expected {expected}\n  found    {actual}\n"
                f"  The cached file is corrupt or not the recorded one. {how}")
        return path

    def npm_tarball(self, expected_sha: str) -> Path:
        name = f"pyodide-{self.version}.tgz"
        path = self.downloads / name
        how = f"Delete {path} and build again to download it with `npm pack pyodide@{self.version}`."
        if path.is_file():
            return self._check(path, expected_sha, how)
        log(f"fetching {name} with npm pack")
        self.downloads.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=self.downloads) as tmp:
            try:
                subprocess.run(["npm", "pack", f"pyodide@{self.version}", "--silent"], cwd=tmp,
                               check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            except (OSError, subprocess.CalledProcessError) as e:
                err = getattr(e, "stderr", "") or e
                raise BuildError(f"{name}: not in {self.downloads} and `npm pack pyodide@{self.version}` "
                                 f"failed ({str(err).strip()[-300:]}). Install Node.js/npm or copy the "
                                 f"tarball to {path}.") from e
            got = Path(tmp) / name
            self._check(got, expected_sha, f"npm returned a different file for pyodide@{self.version}; "
                        "if the version is meant to change, run `python build.py --update-lock`.")
            os.replace(got, path)
        return path

    def pure_wheel(self, filename: str, expected_sha: str | None) -> Path:
        path = self.downloads / filename
        how = f"Delete {path} and build again to download it with pip."
        if path.is_file():
            return self._check(path, expected_sha, how) if expected_sha else path
        name, version = filename.split("-")[:2]
        log(f"fetching {filename} with pip download")
        self.downloads.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=self.downloads) as tmp:
            cmd = pip_command() + ["download", "--no-deps", "--only-binary=:all:", "--disable-pip-version-check",
                                   "-q", "-d", tmp, f"{name}=={version}"]
            try:
                subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            except (OSError, subprocess.CalledProcessError) as e:
                err = getattr(e, "stderr", "") or e
                raise BuildError(f"{filename}: not in {self.downloads} and `pip download {name}=={version}` "
                                 f"failed ({str(err).strip()[-300:]}). Copy the wheel to {path}.") from e
            got = Path(tmp) / filename
            if not got.is_file():
                raise BuildError(f"{filename}: pip downloaded {sorted(os.listdir(tmp))} instead; "
                                 f"copy the wheel to {path}.")
            if expected_sha:
                self._check(got, expected_sha, "pip returned a different file; if the version is meant "
                            "to change, run `python build.py --update-lock`.")
            os.replace(got, path)
        return path

    def compiled_wheel(self, filename: str, expected_sha: str) -> Path:
        places = [self.compiled_dir, *self.extra_wheel_dirs]
        for place in places:
            path = place / filename
            if path.is_file():
                self._check(path, expected_sha,
                            f"Replace it with the official file from {PYODIDE_CDN.format(version=self.version)}"
                            f"{filename} (sha256 {expected_sha}).")
                if place != self.compiled_dir:
                    self.compiled_dir.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(path, self.compiled_dir / filename)
                    path = self.compiled_dir / filename
                return path
        url = PYODIDE_CDN.format(version=self.version) + filename
        tried = self._download_compiled(url, filename, expected_sha)
        if isinstance(tried, Path):
            return tried
        looked = "\n".join(f"  {p / filename}" for p in places)
        raise BuildError(
            f"{filename}: missing. It is built by Pyodide and cannot be fetched with pip or npm"
            f"{'; downloading it from the Pyodide CDN failed (' + tried + ')' if tried else ''}.\n"
            f"Looked in:\n{looked}\n"
            f"Supply it: download {PYODIDE_CDN.format(version=self.version)}{filename} (sha256 {expected_sha}) "
            f"into {self.compiled_dir}/, or pass --pyodide-wheels DIR (or set KV_EXPLORABLE_PYODIDE_WHEELS) "
            f"to a folder that holds it. Or build with --cdn, which loads it from the Pyodide CDN.")


    def _download_compiled(self, url: str, filename: str, expected_sha: str) -> Path | str | None:
        """Fetch a compiled wheel from the Pyodide CDN, as readers' browsers do, and check it
        against Pyodide's lock file. The Path on success, else why not (None: not tried)."""
        if os.environ.get("KV_EXPLORABLE_OFFLINE"):
            return None
        import urllib.request
        log(f"fetching {filename} from the Pyodide CDN")
        try:
            with urllib.request.urlopen(url, timeout=20) as r:
                data = r.read()
        except OSError as e:
            return f"{type(e).__name__}: {e}"
        if sha256_bytes(data) != expected_sha:
            return f"{url} is not the file in Pyodide's lock (sha256 mismatch)"
        self.compiled_dir.mkdir(parents=True, exist_ok=True)
        path = self.compiled_dir / filename
        tmp = path.with_suffix(".part")
        tmp.write_bytes(data)
        os.replace(tmp, path)
        return path


def pip_command() -> list[str]:
    """pip to download wheels with: the running interpreter's, else `pip` on PATH."""
    try:
        import pip  # noqa: F401
        return [sys.executable, "-m", "pip"]
    except ImportError:
        pass
    for exe in ("pip3", "pip"):
        if shutil.which(exe):
            return [exe]
    if shutil.which("uv"):
        return ["uv", "run", "--no-project", "--with", "pip", "python", "-m", "pip"]
    raise BuildError("pip not found: install pip (python -m ensurepip) to let the build download wheels.")


# --------------------------------------------------------------------------------------
# Bytecode: Pyodide's CPython under Node.js compiles our Python files
# --------------------------------------------------------------------------------------

NODE_COMPILER = r"""
const { loadPyodide } = require(process.argv[2]);
(async () => {
  const py = await loadPyodide({ indexURL: process.argv[3] });
  py.FS.mkdir("/host");
  py.FS.mount(py.FS.filesystems.NODEFS, { root: process.argv[4] }, "/host");
  py.globals.set("JOBS", require("fs").readFileSync(process.argv[5], "utf8"));
  const out = py.runPython(`
import json, os, py_compile, importlib.util
mode = py_compile.PycInvalidationMode.UNCHECKED_HASH
report = {}
for job in json.loads(JOBS):
    root = "/host/" + job["dir"]
    ok = failed = 0
    for dirpath, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for f in files:
            if not f.endswith(".py"):
                continue
            path = os.path.join(dirpath, f)
            rel = os.path.relpath(path, root)
            if job.get("only") is not None and rel not in job["only"]:
                continue
            cfile = path + "c" if job["sourceless"] else importlib.util.cache_from_source(path)
            try:
                py_compile.compile(path, cfile=cfile, dfile=job["prefix"] + rel, doraise=True,
                                   invalidation_mode=mode, optimize=job.get("optimize", 0))
            except Exception:
                failed += 1
                continue
            ok += 1
            if job["sourceless"]:
                os.remove(path)
    report[job["dir"]] = [ok, failed]
json.dumps(report)
`);
  console.log(out);
})().catch((e) => { console.error(e); process.exit(1); });
"""


NODE_TRACER = r"""
// Run the app once in Pyodide under Node.js and list the modules it imports (as the worker does).
const { loadPyodide } = require(process.argv[2]);
globalThis.XMLHttpRequest = class { open() {} send() {} setRequestHeader() {} };
(async () => {
  const py = await loadPyodide({ indexURL: process.argv[3],
                                 env: { PANEL_CDN_ROOT: process.argv[6], BOKEH_RESOURCES: "cdn" } });
  py.FS.mkdir("/host");
  py.FS.mount(py.FS.filesystems.NODEFS, { root: process.argv[4] }, "/host");
  py.globals.set("TREES", process.argv[5]);
  const out = await py.runPythonAsync(`
import json, sys
for tree in json.loads(TREES):
    sys.path.append("/host/" + tree)
attempted = set()  # imports that fail (ImportError caught by the library) count too
class _Record:
    @staticmethod
    def find_spec(name, path=None, target=None):
        attempted.add(name)
sys.meta_path.insert(0, _Record)
from panel.io.pyodide import init_doc, write_doc
from app.main import create_app
from panel.io.pyodide import _link_docs_worker
from panel.io.state import state
for query in ("?lang=es", "?lang=en"):
    init_doc()
    create_app(query).servable()
    await write_doc()
    _link_docs_worker(state.curdoc, lambda *args: None, setter="js")
    if state.location:  # as the page's "location" message does
        from panel.util import edit_readonly
        loc = {"href": "http://127.0.0.1/index.html" + query, "hostname": "127.0.0.1", "protocol": "http:",
               "port": "", "pathname": "/index.html", "search": query, "hash": "", "reload": False}
        with edit_readonly(state.location):
            state.location.param.update({k: v for k, v in loc.items() if k in state.location.param})
    import asyncio
    await asyncio.sleep(0.3)  # on-load callbacks run as tasks
json.dumps(sorted(set(sys.modules) | attempted))
`);
  console.log("@@MODULES@@" + out);
})().catch((e) => { console.error(String(e)); process.exit(1); });
"""


def trace_imports(inputs: Inputs, runtime_dir: Path, sources: list, app_src: Path) -> list[str] | None:
    """Modules imported by create_app() + write_doc() in Pyodide (Node.js), cached by inputs."""
    key = sha256_bytes("|".join([RECIPE, inputs.version, dir_digest(app_src), NODE_TRACER]
                                + sorted(sha256_file(src) for _, src, _, _, _ in sources if src)).encode())[:16]
    cached = inputs.derived / "trace" / f"{key}.json"
    if cached.is_file():
        return json.loads(cached.read_text())
    inputs.derived.mkdir(parents=True, exist_ok=True)
    t = time.time()
    with tempfile.TemporaryDirectory(dir=inputs.derived) as tmp:
        work = Path(tmp)
        trees = ["app"]
        shutil.copytree(app_src, work / "app")
        for i, (name, src, rule, _, _) in enumerate(sources):
            if src is not None:
                unpack_slim(src, work / f"t{i}", rule)
                trees.append(f"t{i}")
        script = work / "trace.js"
        script.write_text(NODE_TRACER, encoding="utf-8")
        proc = subprocess.run(["node", str(script), str(runtime_dir / "pyodide.js"), str(runtime_dir) + "/",
                               str(work), json.dumps(trees), SENTINEL_CDN], capture_output=True, text=True)
    line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("@@MODULES@@")), None)
    if proc.returncode != 0 or line is None:
        log("warning: running the app in Pyodide under Node.js failed; precompiling what CPython imports "
            f"instead:\n{(proc.stderr or proc.stdout)[-1500:]}")
        return None
    modules = json.loads(line[len("@@MODULES@@"):])
    cached.parent.mkdir(parents=True, exist_ok=True)
    cached.write_text(json.dumps(modules), encoding="utf-8")
    log(f"traced the app's imports in Pyodide under Node.js: {len(modules)} modules ({time.time() - t:.1f}s)")
    return modules


def compile_dirs(runtime_dir: Path, work: Path, jobs: list[dict]) -> dict:
    """Compile .py files under work/<job.dir> with Pyodide's Python (same bytecode as the browser)."""
    if not jobs:
        return {}
    if not shutil.which("node"):
        raise BuildError("node (Node.js) not found: the build runs Pyodide under Node.js to compile "
                         "Python files to the browser's bytecode. Install Node.js (>= 18).")
    script = work / "compile_pyc.js"
    script.write_text(NODE_COMPILER, encoding="utf-8")
    (work / "jobs.json").write_text(json.dumps(jobs), encoding="utf-8")
    proc = subprocess.run(["node", str(script), str(runtime_dir / "pyodide.js"), str(runtime_dir) + "/",
                           str(work), str(work / "jobs.json")], capture_output=True, text=True)
    if proc.returncode != 0:
        raise BuildError(f"compiling Python files with Pyodide under Node.js failed:\n{proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


# --------------------------------------------------------------------------------------
# Wheels: slim, compile, repack
# --------------------------------------------------------------------------------------

DROP_ALWAYS = re.compile(r"(^|/)(tests?|__pycache__)/|\.(ts|tsx|map|less|pyc|pyi)$|^typings/")
DROP = {
    "panel": re.compile(r"^panel/dist/|^panel/models/.*\.(ts|tsx|js|css)$|^panel/.*\.ts$"),
    "bokeh": re.compile(r"^bokeh/server/static/|^bokeh/sampledata/|^bokeh/sphinxext/"),
    "numpy": re.compile(r"^numpy/(f2py|_pyinstaller|doc)/|^numpy/_core/include/"),
    # Pyodide's standard library: the REPL, docs data, tools and network clients the page never uses,
    # and the codecs nobody decodes with here.
    "stdlib": re.compile(r"^(_pyrepl|pydoc_data|idlelib|turtledemo|ensurepip|venv|lib2to3|tkinter|xmlrpc|"
                         r"wsgiref)/|^(imaplib|mailbox|smtplib|ftplib|poplib|nntplib|telnetlib)\.py$|"
                         r"^encodings/(?!(__init__|aliases|utf_8|utf_8_sig|utf_16|utf_16_le|utf_16_be|utf_32|"
                         r"utf_32_le|utf_32_be|latin_1|ascii|cp1252|cp437|idna|punycode|raw_unicode_escape|"
                         r"unicode_escape|charmap|base64_codec|hex_codec|undefined)\.py$)"),
}
# Bytecode without docstrings and asserts (like python -OO) for the standard library, which
# CPython tests in that mode (saves ~0.35 MB). NumPy is not safe this way (its add_newdoc needs
# the docstrings when sys.flags.optimize is 0: TypeError at import), nor checked for the others.
OPTIMIZE = {"stdlib": 2}
# Imported in the browser but not in the CPython prerender: compiled as well.
EXTRA_IMPORTS = ("pyodide", "_pyodide", "pyodide_http", "panel.io.pyodide", "encodings", "zipimport",
                 "importlib", "asyncio", "json", "ast", "inspect", "typing", "pathlib", "zipfile", "tarfile",
                 "_colorize", "_opcode_metadata", "_sysconfigdata*", "numpy._core", "numpy.linalg", "packaging")


def module_name(rel: str) -> str:
    name = rel[:-3].replace("/", ".")
    return name[: -len(".__init__")] if name.endswith(".__init__") else name


def imported(rel: str, modules: frozenset) -> bool:
    name = module_name(rel)
    return name in modules or any(name == e or name.startswith(e + ".") or (e[-1] == "*" and name.startswith(e[:-1]))
                                  for e in EXTRA_IMPORTS)


def unpack_slim(whl: Path, dest: Path, name: str) -> None:
    drop = DROP.get(name)
    with zipfile.ZipFile(whl) as z:
        for info in z.infolist():
            fn = info.filename
            if info.is_dir() or DROP_ALWAYS.search(fn) or (drop and drop.search(fn)):
                continue
            target = dest / fn
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(z.read(info))


def pack_wheel(src: Path, out: Path) -> None:
    """Zip a wheel tree with a fresh RECORD (deterministic order and timestamps)."""
    files = sorted(p for p in src.rglob("*") if p.is_file())
    record = next((p for p in files if p.parent.name.endswith(".dist-info") and p.name == "RECORD"), None)
    rows = []
    for p in files:
        if p == record:
            continue
        data = p.read_bytes()
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        rows.append([p.relative_to(src).as_posix(), f"sha256={digest}", str(len(data))])
    if record is not None:
        # Pyodide does not read RECORD: keep it as a valid, empty list (saves ~50 KB per visit).
        buf = io.StringIO()
        csv.writer(buf, lineterminator="\n").writerow([record.relative_to(src).as_posix(), "", ""])
        record.write_text(buf.getvalue(), encoding="utf-8")
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        for p in files:
            info = zipfile.ZipInfo(p.relative_to(src).as_posix(), date_time=(2020, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            z.writestr(info, p.read_bytes())


def top_level_imports(tree: Path) -> list[str]:
    names = set()
    for p in tree.iterdir():
        if p.name.endswith((".dist-info", ".data")) or p.name == "__pycache__":
            continue
        if p.is_dir() and ((p / "__init__.py").exists() or (p / "__init__.pyc").exists()):
            names.add(p.name)
        elif p.suffix in (".py", ".pyc") or p.name.endswith(".so"):
            names.add(p.name.split(".")[0])
    return sorted(names)


# --------------------------------------------------------------------------------------
# Prerender (in a fresh CPython process, PANEL_CDN_ROOT set before panel is imported)
# --------------------------------------------------------------------------------------

PRERENDER = r"""
import base64, json, os, re, sys
os.environ["PANEL_CDN_ROOT"] = sys.argv[2]
os.environ.setdefault("BOKEH_RESOURCES", "cdn")
sys.path.insert(0, sys.argv[1])
import bokeh, panel
from bokeh.document import Document
from panel.io.convert import PYODIDE_VERSION
from panel.io.document import MockSessionContext
from panel.io.resources import Resources, bundle_resources
from panel.io.state import set_curdoc, state
from app.main import create_view, load_model, settings_for
from app.snapshot import GRID_URL, PROGRESS, render_states, style

try:  # the languages the app declares (app/i18n.py), else Spanish and English
    from app.i18n import LANGS
except ImportError:
    LANGS = ("es", "en")
try:
    from app.i18n import DEFAULT_LANG
except ImportError:
    DEFAULT_LANG = LANGS[0]
out = {"pyodide_version": PYODIDE_VERSION.lstrip("v"), "panel_version": panel.__version__,
       "bokeh_version": bokeh.__version__, "states": {}, "js": [], "css": [], "default_lang": DEFAULT_LANG,
       "snapshot_style": style(), "grid_placeholder": GRID_URL, "progress_marker": PROGRESS,
       "query": settings_for(None, load_model()).url_rules()}
for lang in LANGS:
    doc = Document()
    doc._session_context = lambda: MockSessionContext(document=doc)
    with set_curdoc(doc):
        view = create_view(f"?lang={lang}")
        view.layout.server_doc(doc)
        state._on_load(None)
        js, css = bundle_resources(doc.roots, Resources(mode="cdn"))
    # the first paint: every state a URL can ask for (default seed and top-p), as plain HTML (app/snapshot.py)
    for name, data in render_states(create_view, lang):
        if name == "grid":
            out["grid"] = base64.b64encode(data).decode()
        else:
            out["states"][name] = data
    for url in re.findall(r'<script[^>]*\bsrc="([^"]+)"', js):
        if url not in out["js"]:
            out["js"].append(url)
    for url in re.findall(r'<link[^>]*\bhref="([^"]+)"', css):
        if url not in out["css"]:
            out["css"].append(url)
out["modules"] = sorted(sys.modules)
print("@@PRERENDER@@" + json.dumps(out))
"""


def start_prerender() -> subprocess.Popen:
    env = dict(os.environ, PYTHONHASHSEED="0", BOKEH_SIMPLE_IDS="1")
    return subprocess.Popen([sys.executable, "-c", PRERENDER, str(ROOT), SENTINEL_CDN],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT)


def finish_prerender(proc: subprocess.Popen) -> dict:
    out, err = proc.communicate()
    if proc.returncode != 0:
        raise BuildError(f"prerendering create_app() in CPython failed:\n{err[-3000:]}")
    line = next(ln for ln in out.splitlines() if ln.startswith("@@PRERENDER@@"))
    return json.loads(line[len("@@PRERENDER@@"):])


# --------------------------------------------------------------------------------------
# The build
# --------------------------------------------------------------------------------------

class Site:
    """Collects output files (relative path -> bytes) before they are written."""

    def __init__(self):
        self.files: dict[str, bytes | Path] = {}

    def add(self, rel: str, data: bytes | Path) -> str:
        self.files[rel] = data
        return rel

    def add_hashed(self, folder: str, name: str, data: bytes) -> str:
        return self.add(f"{folder}/{hashed_name(name, data)}", data)


def derived_wheel(inputs: Inputs, src: Path, name: str, slim: bool, mods_key: str, pending: list) -> Path:
    """Return cache path of the slimmed+compiled wheel; if absent, queue its preparation."""
    key = sha256_bytes(f"{sha256_file(src)}|{RECIPE}|{inputs.version}|{slim}|{mods_key}".encode())[:16]
    out = inputs.derived / "wheels" / key / src.name
    if not out.is_file():
        pending.append((src, name, slim, out))
    return out


def compile_list(tree: Path, modules: frozenset) -> list[str]:
    return sorted(p.relative_to(tree).as_posix() for p in tree.rglob("*.py")
                  if imported(p.relative_to(tree).as_posix(), modules))


def prepare_pending(inputs: Inputs, runtime_dir: Path, pending: list, stdlib_job=None, app_job=None,
                    modules: frozenset = frozenset()) -> None:
    """Slim the wheels and the standard library; compile the modules the app imports (sourceless .pyc,
    the others stay .py and compile on first import); compile the app (.py kept, __pycache__ added)."""
    if not pending and not stdlib_job and not app_job:
        return
    inputs.derived.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=inputs.derived) as tmp:
        work = Path(tmp)
        jobs = []
        for i, (src, name, slim, out) in enumerate(pending):
            tree = work / f"w{i}"
            unpack_slim(src, tree, name)
            jobs.append({"dir": tree.name, "sourceless": True, "prefix": "/lib/python3.13/site-packages/",
                         "only": compile_list(tree, modules), "optimize": OPTIMIZE.get(name, 0)})
        if stdlib_job:
            src, out = stdlib_job
            unpack_slim(src, work / "stdlib", "stdlib")
            jobs.append({"dir": "stdlib", "sourceless": True, "prefix": "/lib/python3.13/", "optimize": OPTIMIZE["stdlib"],
                         "only": compile_list(work / "stdlib", modules)})
        if app_job:
            tree, out = app_job
            shutil.copytree(tree, work / "app")
            jobs.append({"dir": "app", "sourceless": False, "prefix": "/home/pyodide/kv/"})
        t = time.time()
        log(f"compiling {len(jobs)} trees to Python 3.13 bytecode with Pyodide under Node.js")
        report = compile_dirs(runtime_dir, work, jobs)
        log(f"  compiled in {time.time() - t:.1f}s: {report}")
        for i, (src, name, slim, out) in enumerate(pending):
            out.parent.mkdir(parents=True, exist_ok=True)
            split_rest(work / f"w{i}", rest_path(out))
            tmp_out = out.with_suffix(".part")
            pack_wheel(work / f"w{i}", tmp_out)
            os.replace(tmp_out, out)
        if stdlib_job:
            src, out = stdlib_job
            out.parent.mkdir(parents=True, exist_ok=True)
            split_rest(work / "stdlib", rest_path(out))
            tmp_out = out.with_suffix(".part")
            zip_tree(work / "stdlib", tmp_out)
            os.replace(tmp_out, out)
        if app_job:
            tree, out = app_job
            out.parent.mkdir(parents=True, exist_ok=True)
            tmp_out = out.with_suffix(".part")
            zip_tree(work / "app", tmp_out)
            os.replace(tmp_out, out)


def zip_tree(tree: Path, out: Path, files=None) -> None:
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        for p in sorted(files if files is not None else tree.rglob("*")):
            if p.is_file():
                info = zipfile.ZipInfo(p.relative_to(tree).as_posix(), (2020, 1, 1, 0, 0, 0))
                info.compress_type = zipfile.ZIP_DEFLATED
                info.external_attr = 0o644 << 16
                z.writestr(info, p.read_bytes())


def rest_path(out: Path) -> Path:
    return out.with_name(out.name.split("-")[0].removesuffix(".zip") + "-lazy.zip")


def split_rest(tree: Path, rest_zip: Path) -> None:
    """Move the modules the app does not import at start-up (still .py after compiling) out of the
    tree into rest_zip with an index; the worker fetches it only if one of them is imported later."""
    def meta(p: Path) -> bool:
        return any(part.endswith((".dist-info", ".data")) for part in p.relative_to(tree).parts)

    # Packages not imported at all go whole (data files and compiled extensions too).
    unimported = sorted(p.parent for p in tree.rglob("__init__.py") if not meta(p))
    tops = [d for d in unimported if not any(o != d and o in d.parents for o in unimported)]
    files = {p for d in tops for p in d.rglob("*") if p.is_file() and "__pycache__" not in p.parts}
    files |= {p for p in tree.rglob("*.py") if not meta(p)}
    files = sorted(files)
    index = {}
    for p in files:
        if p.suffix != ".py":
            continue
        rel = p.relative_to(tree).as_posix()
        index[module_name(rel)] = [rel, p.name == "__init__.py"]
    if not files:
        return
    zip_tree(tree, rest_zip, files)
    rest_zip.with_suffix(".json").write_text(json.dumps(index, sort_keys=True), encoding="utf-8")
    for p in files:
        p.unlink()


def app_tree(dest: Path, fallbacks=()) -> None:
    """app/ and model/ sources and the checkpoint, as create_app imports them (+ stand-in modules)."""
    for name in fallbacks:
        shutil.copy2(ROOT / "buildsupport" / f"{name}.py", dest / f"{name}.py")
    for pkg in ("app", "model"):
        for p in sorted((ROOT / pkg).rglob("*")):
            rel = p.relative_to(ROOT)
            if not p.is_file() or "__pycache__" in rel.parts or p.suffix in (".pyc",):
                continue
            if p.suffix not in (".py", ".js", ".css", ".html") and "weights" not in rel.parts:
                continue
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(p, dest / rel)


def dir_digest(tree: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(tree.rglob("*")):
        if p.is_file():
            h.update(p.relative_to(tree).as_posix().encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


def build(out: Path = DEFAULT_DIST, cache: Path = DEFAULT_CACHE, cdn: bool = False,
          pyodide_wheels=(), quiet: bool = False) -> Path:
    t_start = time.time()
    out = Path(out).resolve()
    lock = load_lock()
    prerender = start_prerender()  # runs in parallel with fetching/compiling
    try:
        return _build(out, cache, cdn, pyodide_wheels, lock, prerender, t_start)
    finally:
        if prerender.poll() is None:
            prerender.kill()
            prerender.wait()


def _build(out, cache, cdn, pyodide_wheels, lock, prerender, t_start) -> Path:
    version = lock["pyodide"]["version"]
    extra = list(pyodide_wheels) + [d for d in os.environ.get("KV_EXPLORABLE_PYODIDE_WHEELS", "").split(os.pathsep) if d]
    inputs = Inputs(cache, version, extra)
    log(f"cache: {inputs.cache}")

    # 1. Pyodide runtime (npm tarball, hash from build.lock.json) and its lock file.
    tarball = inputs.npm_tarball(lock["pyodide"]["sha256"])
    runtime_dir = inputs.derived / f"pyodide-{version}-{sha256_file(tarball)[:12]}"
    if not (runtime_dir / "pyodide-lock.json").is_file():
        tmp = Path(tempfile.mkdtemp(dir=inputs.cache))
        with tarfile.open(tarball) as tf:
            tf.extractall(tmp, filter="data")
        runtime_dir.parent.mkdir(parents=True, exist_ok=True)
        if runtime_dir.exists():
            shutil.rmtree(runtime_dir)
        os.replace(tmp / "package", runtime_dir)
        shutil.rmtree(tmp)
    pyodide_lock = json.loads((runtime_dir / "pyodide-lock.json").read_text(encoding="utf-8"))

    # 2. Wheels: compiled ones (hash from Pyodide's lock), pure ones (hash from build.lock.json).
    sources = []  # (canonical name, source wheel or None for --cdn, slim-rule name, imports, lock entry)
    for pkg in COMPILED_PACKAGES:
        entry = pyodide_lock["packages"][pkg]
        src = None if cdn else inputs.compiled_wheel(entry["file_name"], entry["sha256"])
        sources.append((pkg, src, pkg, entry["imports"], entry))
    fallbacks = []
    for pkg in OPTIONAL_COMPILED:
        entry = pyodide_lock["packages"][pkg]
        if cdn:
            sources.append((pkg, None, pkg, entry["imports"], entry))
            continue
        try:
            src = inputs.compiled_wheel(entry["file_name"], entry["sha256"])
        except BuildError as e:
            if "missing" not in str(e).split("\n")[0]:
                raise
            log(f"{entry['file_name']} not in the cache: shipping the pure-Python stand-in buildsupport/{pkg}.py")
            fallbacks.append(pkg)
            continue
        sources.append((pkg, src, pkg, entry["imports"], entry))
    for filename, sha in lock["wheels"].items():
        src = inputs.pure_wheel(filename, sha)
        name = canonical(filename.split("-")[0])
        sources.append((name, src, name.replace("-", "_"), None, None))

    # 3. Prerendered snapshots, the page's JS/CSS list and the modules the app imports (CPython process).
    pre = finish_prerender(prerender)
    if pre["pyodide_version"] != version:
        raise BuildError(f"Panel {pre['panel_version']} pins Pyodide {pre['pyodide_version']} but build.lock.json "
                         f"records Pyodide {version}: run `python build.py --update-lock`.")
    for pkg in ("panel", "bokeh"):
        want = pre[f"{pkg}_version"]
        if not any(f.startswith(f"{pkg}-{want}-") for f in lock["wheels"]):
            raise BuildError(f"the installed {pkg} is {want} but build.lock.json records another version; "
                             f"the page's JS must match the wheel: run `python build.py --update-lock`.")
    # 4. Slim + compile (cached by inputs and imported modules): wheels, standard library, app archive.
    app_src = Path(tempfile.mkdtemp(dir=inputs.cache.as_posix()))
    try:
        app_tree(app_src, fallbacks)
        traced = None if cdn else trace_imports(inputs, runtime_dir, sources, app_src)
        modules = frozenset(traced if traced is not None else pre["modules"])
        mods_key = sha256_bytes("\n".join(sorted(modules)).encode())[:12]
        pending: list = []
        wheels = [(name, None if src is None else derived_wheel(inputs, src, rule, True, mods_key, pending),
                   imports, entry) for name, src, rule, imports, entry in sources]
        stdlib_src = runtime_dir / "python_stdlib.zip"
        stdlib_out = (inputs.derived / "stdlib" / f"{sha256_file(stdlib_src)[:16]}-{RECIPE}-{mods_key}"
                      / "python_stdlib.zip")
        stdlib_job = None if (cdn or stdlib_out.is_file()) else (stdlib_src, stdlib_out)
        app_out = inputs.derived / "app" / f"{dir_digest(app_src)[:16]}-{RECIPE}" / "app.zip"
        app_job = None if app_out.is_file() else (app_src, app_out)
        prepare_pending(inputs, runtime_dir, pending, stdlib_job, app_job, modules)
    finally:
        shutil.rmtree(app_src, ignore_errors=True)

    site = Site()
    import bokeh
    import panel
    bokeh_js_dir = Path(bokeh.__file__).parent / "server" / "static" / "js"
    panel_dist = Path(panel.__file__).parent / "dist"
    panel_prefix = f"panel/{pre['panel_version']}/dist/"
    panel_sentinel = f"{SENTINEL_CDN}{pre['panel_version']}/dist/"

    def rewrite(text: str) -> str:
        return text.replace(panel_sentinel, panel_prefix).replace(SENTINEL_CDN, "panel/")

    # Panel's stylesheets (referenced by the models at run time) and their assets.
    for sub in ("css", "bundled/theme", "assets"):
        for p in sorted((panel_dist / sub).rglob("*")):
            if p.is_file():
                site.add(panel_prefix + p.relative_to(panel_dist).as_posix(), p)
    page_scripts = []
    for url in pre["js"]:
        if any(name in url for name in UNNEEDED_SCRIPTS):
            continue
        if url.startswith(panel_sentinel):
            src = panel_dist / url[len(panel_sentinel):]
        elif "/bokeh/release/" in url:
            src = bokeh_js_dir / re.sub(r"-\d+\.\d+\.\d+(\S*?)\.min\.js$", ".min.js", url.rsplit("/", 1)[1])
        else:
            raise BuildError(f"unexpected page script {url}: add a rule for it in build.py")
        if not src.is_file():
            raise BuildError(f"page script {url} not found at {src}")
        rel = site.add_hashed("assets/js", src.name, src.read_bytes())
        page_scripts.append(f'<script defer src="{rel}"></script>')
    for url in pre["css"]:
        if url.startswith(panel_sentinel):
            continue  # already copied under panel/<version>/dist/
        raise BuildError(f"unexpected page stylesheet {url}: add a rule for it in build.py")

    # First paint: the app's HTML preview (app/snapshot.py) of every state a URL can ask for with the
    # default seed and top-p (language, mode, t), in one folder named by their hash; the default one is
    # also written into index.html (it shows before any script runs), the others are fetched.
    grid_url = site.add_hashed("assets", "grid.png", base64.b64decode(pre["grid"]))
    states = {name: rewrite(doc).replace(pre["grid_placeholder"], grid_url) for name, doc in sorted(pre["states"].items())}
    folder = "assets/states-" + sha256_bytes(json.dumps(states).encode())[:10] + "/"
    for name, doc in states.items():
        site.add(folder + name, doc.encode())
    default_state = f"{pre['default_lang']}-cache-{pre['query']['params']['t']['bounds'][0]}"
    inline_top, inline_bottom = states[default_state + ".html"].split(pre["progress_marker"])

    # Runtime, packages and the site's own Pyodide lock file.
    if cdn:
        base = PYODIDE_CDN.format(version=version)
        pyodide_js, index_url, stdlib_url = base + "pyodide.js", base, None
    else:
        rdir = f"pyodide/{version}/"
        for f in ("pyodide.js", "pyodide.asm.js", "pyodide.asm.wasm"):
            site.add(rdir + f, runtime_dir / f)
        stdlib_url = site.add_hashed(rdir.rstrip("/"), "python_stdlib.zip", stdlib_out.read_bytes())
        pyodide_js, index_url = rdir + "pyodide.js", rdir
    packages = {}
    for name, path, imports, entry in wheels:
        if path is None:  # --cdn: compiled package straight from the Pyodide CDN, Pyodide's hash
            file_name, sha, version_ = PYODIDE_CDN.format(version=version) + entry["file_name"], entry["sha256"], entry["version"]
        else:
            data = path.read_bytes()
            sha = sha256_bytes(data)
            file_name = site.add(f"packages/{sha[:16]}/{path.name}", path)
            version_ = path.name.split("-")[1]
            if imports is None:
                with zipfile.ZipFile(path) as z:
                    tops = {n.split("/")[0] for n in z.namelist() if "/" in n}
                    imports = sorted(t for t in tops if not t.endswith((".dist-info", ".data")))
        packages[name] = {
            "name": name, "version": version_, "file_name": file_name, "install_dir": "site",
            "sha256": sha, "package_type": "package", "imports": imports, "depends": [],
            "unvendored_tests": False, "shared_library": False,
        }
    # Modules not imported at start-up, fetched by the worker on first import (see static/worker.js).
    lazy = {"archives": [], "modules": {}}

    def add_lazy(rest: Path, root: str, folder: str) -> None:
        if not rest.is_file():
            return
        data = rest.read_bytes()
        sha = sha256_bytes(data)
        url = site.add(f"{folder}/{sha[:16]}/{rest.name}", rest)
        lazy["archives"].append({"url": url, "sha256": sha, "root": root})
        n = len(lazy["archives"]) - 1
        for mod, (rel, is_pkg) in json.loads(rest.with_suffix(".json").read_text()).items():
            lazy["modules"].setdefault(mod, [n, rel, is_pkg])

    for name, path, imports, entry in wheels:
        if path is not None:
            add_lazy(rest_path(path), "/lib/python3.13/site-packages", "packages")
    if not cdn:
        add_lazy(rest_path(stdlib_out), "/lib/python3.13/kv-lazy-stdlib", "pyodide/" + version)
    lazy_url = site.add_hashed("assets", "lazy-modules.json", json.dumps(lazy, separators=(",", ":")).encode())
    site_lock = {"info": pyodide_lock["info"], "packages": packages}
    lock_url = site.add_hashed("assets", "pyodide-lock.json", json.dumps(site_lock, indent=1).encode())
    app_url = site.add_hashed("assets", "app.zip", app_out.read_bytes())

    # Front-end files from static/.
    worker_url = site.add_hashed("assets", "worker.js", (STATIC / "worker.js").read_bytes())
    # the reader's code sandbox: its own worker, on the same runtime files and NumPy wheel
    sandbox = {"worker": site.add_hashed("assets", "sandbox.js", (STATIC / "sandbox.js").read_bytes()),
               "pyodide": pyodide_js, "indexURL": index_url, "stdLibURL": stdlib_url, "lockFileURL": lock_url,
               "packageBaseUrl": "./", "packages": ["numpy"]}
    loader_url = site.add_hashed("assets", "loader.js", (STATIC / "loader.js").read_bytes())
    urlquery_url = site.add_hashed("assets", "urlquery.js", (STATIC / "urlquery.js").read_bytes())
    css_url = site.add_hashed("assets", "style.css", (STATIC / "style.css").read_bytes())
    icon_url = site.add_hashed("assets", "favicon.svg", (STATIC / "favicon.svg").read_bytes())
    config = {
        "pyodide": pyodide_js, "indexURL": index_url, "stdlib": stdlib_url, "lock": lock_url,
        "packageBaseUrl": "./", "packages": sorted(packages), "app": app_url, "worker": worker_url, "lazy": lazy_url,
        "panelCdnRoot": "panel/", "states": folder, "defaultLang": pre["default_lang"],
        "inlineState": default_state, "progressMarker": pre["progress_marker"], "query": pre["query"],
        "sandbox": sandbox,
    }
    html = (STATIC / "index.html").read_text(encoding="utf-8")
    html = (html.replace("{{CONFIG}}", json.dumps(config, indent=1).replace("</", "<\\/"))
                .replace("{{LOADER}}", loader_url).replace("{{CSS}}", css_url).replace("{{ICON}}", icon_url)
                .replace("{{PAGE_SCRIPTS}}", "\n".join(page_scripts))
                .replace("{{URLQUERY}}", urlquery_url).replace("{{SNAPSHOT_STATE}}", default_state)
                .replace("{{SNAPSHOT_TOP}}", pre["snapshot_style"] + inline_top)
                .replace("{{SNAPSHOT_BOTTOM}}", inline_bottom))
    site.add("index.html", html.encode())
    site.add("embed.html", STATIC / "embed.html")            # the documented snippet, src = this folder
    site.add("_headers", HEADERS_FILE.encode())
    info = {"pyodide": version, "panel": pre["panel_version"], "bokeh": pre["bokeh_version"], "cdn": cdn,
            "csp": CSP + ("" if not cdn else f" (add {PYODIDE_CDN.format(version=version)} to script-src and connect-src)"),
            "files": {}}

    # 5. Write into a temporary folder next to dist/, then swap it in.
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}-", dir=out.parent))
    try:
        for rel, data in site.files.items():
            target = staging / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(data, Path):
                shutil.copyfile(data, target)
            else:
                target.write_bytes(data)
            if rel != "_headers":
                info["files"][rel] = sha256_file(target)
            precompress(target, inputs)
        (staging / "build-info.json").write_text(json.dumps(info, indent=1), encoding="utf-8")
        old = None
        if out.exists():
            old = out.with_name(f".{out.name}-old-{os.getpid()}")
            os.replace(out, old)
        os.replace(staging, out)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file() and p.suffix not in (".gz", ".zst"))
    log(f"wrote {out} ({len(site.files)} files, {size / 1e6:.1f} MB) in {time.time() - t_start:.1f}s"
        f"{' [--cdn]' if cdn else ''}")
    return out


def precompress(path: Path, inputs: Inputs) -> None:
    """Write path.gz (and path.zst where the zstd tool exists) next to files worth compressing;
    `build.py serve` sends the smallest one the browser accepts (Content-Encoding)."""
    if path.suffix not in GZIP_SUFFIXES or path.suffix == ".zip" or path.stat().st_size < 1024:
        return  # zip archives are deflated already
    data = path.read_bytes()
    key = sha256_bytes(data)
    variants = [("gz", lambda: gzip.compress(data, compresslevel=9, mtime=0))]
    if shutil.which("zstd"):
        variants.append(("zst", lambda: subprocess.run(["zstd", "-19", "-q", "-c"], input=data, check=True,
                                                       capture_output=True).stdout))
    for ext, pack in variants:
        cached = inputs.derived / ext / f"{key}.{ext}"
        if not cached.is_file():
            cached.parent.mkdir(parents=True, exist_ok=True)
            tmp = cached.with_suffix(".part")
            tmp.write_bytes(pack())
            os.replace(tmp, cached)
        if cached.stat().st_size < 0.9 * len(data):
            shutil.copyfile(cached, path.with_name(f"{path.name}.{ext}"))


HEADERS_FILE = """# Caching rules for static hosts that read a _headers file (Netlify, Cloudflare Pages).
/index.html
  Cache-Control: no-cache
/embed.html
  Cache-Control: no-cache
/assets/*
  Cache-Control: public, max-age=31536000, immutable
/packages/*
  Cache-Control: public, max-age=31536000, immutable
/pyodide/*
  Cache-Control: public, max-age=31536000, immutable
/panel/*
  Cache-Control: public, max-age=31536000, immutable
"""


# --------------------------------------------------------------------------------------
# Updating build.lock.json
# --------------------------------------------------------------------------------------

def update_lock(cache: Path) -> None:
    """Record sha256 of the Pyodide tarball for Panel's pin and of the pure wheels (fresh downloads)."""
    proc = subprocess.run([sys.executable, "-c",
                           "import json, panel, bokeh; from panel.io.convert import PYODIDE_VERSION as v;"
                           "print(json.dumps([v.lstrip('v'), panel.__version__, bokeh.__version__]))"],
                          capture_output=True, text=True, check=True)
    pyodide_version, panel_version, bokeh_version = json.loads(proc.stdout.strip().splitlines()[-1])
    lock = load_lock()
    inputs = Inputs(cache, pyodide_version)
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["npm", "pack", f"pyodide@{pyodide_version}", "--silent"], cwd=tmp, check=True,
                       stdout=subprocess.DEVNULL)
        tgz = Path(tmp) / f"pyodide-{pyodide_version}.tgz"
        lock["pyodide"] = {"version": pyodide_version, "npm": f"pyodide@{pyodide_version}", "sha256": sha256_file(tgz)}
        inputs.downloads.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(tgz, inputs.downloads / tgz.name)
        wanted = []
        for filename in lock["wheels"]:
            name, version = filename.split("-")[:2]
            version = {"panel": panel_version, "bokeh": bokeh_version}.get(name, version)
            wanted.append(f"{name}=={version}")
        subprocess.run(pip_command() + ["download", "--no-deps", "--only-binary=:all:", "-q", "-d", tmp, *wanted],
                       check=True)
        lock["wheels"] = {p.name: sha256_file(p) for p in sorted(Path(tmp).glob("*.whl"))}
        for p in Path(tmp).glob("*.whl"):
            shutil.copyfile(p, inputs.downloads / p.name)
    LOCK_PATH.write_text(json.dumps(lock, indent=2) + "\n", encoding="utf-8")
    log(f"updated {LOCK_PATH.name}: pyodide {pyodide_version}, {len(lock['wheels'])} wheels")


# --------------------------------------------------------------------------------------
# Serving dist/
# --------------------------------------------------------------------------------------

MIME = {".wasm": "application/wasm", ".js": "text/javascript", ".mjs": "text/javascript",
        ".json": "application/json", ".css": "text/css", ".html": "text/html; charset=utf-8",
        ".svg": "image/svg+xml", ".whl": "application/octet-stream", ".zip": "application/zip",
        ".map": "application/json", ".txt": "text/plain; charset=utf-8", ".png": "image/png",
        ".woff2": "font/woff2", ".woff": "font/woff", ".ttf": "font/ttf", ".ico": "image/x-icon"}
IMMUTABLE = ("assets/", "packages/", "pyodide/", "panel/")


def make_server(dist: Path = DEFAULT_DIST, port: int = 0, csp: str | None = None, host: str = "127.0.0.1",
                on_response=None, immutable=IMMUTABLE):
    """A threaded HTTP server for dist/: MIME types (application/wasm), precompressed gzip,
    immutable caching for hashed/versioned folders, no-cache for pages, optional CSP header.
    on_response(path, status, body_bytes) is called for every response (benchmarks count bytes)."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    from urllib.parse import unquote, urlsplit

    root = Path(dist).resolve()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt, *args):  # quiet
            pass

        def do_HEAD(self):
            self.do_GET(head=True)

        def do_GET(self, head=False):
            path = unquote(urlsplit(self.path).path)
            if path.endswith("/"):
                path += "index.html"
            target = (root / path.lstrip("/")).resolve()
            if root not in target.parents and target != root or not target.is_file() or target.suffix in (".gz", ".zst"):
                body = b"not found\n"
                if on_response:
                    on_response(path.lstrip("/"), 404, len(body))
                self.send_response(404)
                self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if not head:
                    self.wfile.write(body)
                return
            rel = target.relative_to(root).as_posix()
            accepted = {e.split(";")[0].strip() for e in self.headers.get("Accept-Encoding", "").split(",")}
            encoding, body_path = None, target
            for enc, ext in (("zstd", ".zst"), ("gzip", ".gz")):
                candidate = target.with_name(target.name + ext)
                if enc in accepted and candidate.is_file():
                    encoding, body_path = enc, candidate
                    break
            st = body_path.stat()
            etag = f'"{int(st.st_mtime_ns):x}-{st.st_size:x}{"-" + encoding if encoding else ""}"'
            cache = ("public, max-age=31536000, immutable" if rel.startswith(immutable) else "no-cache")
            if self.headers.get("If-None-Match") == etag:
                if on_response:
                    on_response(rel, 304, 0)
                self.send_response(304)
                self.send_header("ETag", etag)
                self.send_header("Cache-Control", cache)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            data = body_path.read_bytes()
            self.send_response(200)
            self.send_header("Content-Type", MIME.get(target.suffix) or mimetypes.guess_type(target.name)[0]
                             or "application/octet-stream")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Cache-Control", cache)
            self.send_header("ETag", etag)
            self.send_header("Vary", "Accept-Encoding")
            self.send_header("X-Content-Type-Options", "nosniff")
            if encoding:
                self.send_header("Content-Encoding", encoding)
            if csp:  # on every response, as hosts with a global header do (the worker gets it too)
                self.send_header("Content-Security-Policy", csp)
            self.end_headers()
            if on_response:
                on_response(rel, 200, len(data))
            if not head:
                try:
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

    class Server(ThreadingHTTPServer):
        daemon_threads = True
        allow_reuse_address = True

        def handle_error(self, request, client_address):
            if not isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
                super().handle_error(request, client_address)

    server = Server((host, port), Handler)
    server.url = f"http://{host}:{server.server_address[1]}/"
    return server


def serve_in_thread(dist: Path = DEFAULT_DIST, port: int = 0, csp: str | None = None, **kw):
    server = make_server(dist, port, csp, **kw)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


# --------------------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------------------

def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="Build the KV-cache explorable as a static site in dist/.")
    ap.add_argument("command", nargs="?", choices=["build", "serve", "dev"], default="build",
                    help="build dist/; serve it; or dev: the app under Panel's server (no build)")
    ap.add_argument("--out", type=Path, default=DEFAULT_DIST, help="output folder (default: dist/)")
    ap.add_argument("--cache", type=Path, default=DEFAULT_CACHE,
                    help="download cache (default: $KV_EXPLORABLE_CACHE or ~/.cache/kv-explorable)")
    ap.add_argument("--pyodide-wheels", action="append", default=[], metavar="DIR",
                    help="another folder to look in for numpy/pyyaml/markupsafe/packaging wheels")
    ap.add_argument("--cdn", action="store_true", help="load the Pyodide runtime and its packages from the Pyodide CDN")
    ap.add_argument("--update-lock", action="store_true", help="download and record new hashes in build.lock.json")
    ap.add_argument("--port", type=int, default=8000, help="serve: port (default 8000; 0 = any free port)")
    ap.add_argument("--no-open", action="store_true", help="serve: do not open the browser")
    ap.add_argument("--no-build", action="store_true", help="serve: serve the existing dist/ as it is")
    ap.add_argument("--csp", nargs="?", const=CSP, default=None, metavar="POLICY",
                    help="serve: send a Content-Security-Policy header (default: the recommended policy)")
    args = ap.parse_args(argv)
    if args.command == "dev":
        from buildsupport import paneldev
        try:
            paneldev.serve(args.port if args.port != 8000 else 5006, not args.no_open, args.cache, args.pyodide_wheels)
        except BuildError as e:
            print(f"dev server failed: {e}", file=sys.stderr)
            return 1
        except KeyboardInterrupt:
            pass
        return 0
    try:
        if args.update_lock:
            update_lock(args.cache)
            return 0
        if not (args.command == "serve" and args.no_build):
            build(args.out, args.cache, args.cdn, args.pyodide_wheels)
    except BuildError as e:
        print(f"build failed: {e}", file=sys.stderr)
        return 1
    if args.command == "serve":
        try:
            server = make_server(args.out, args.port, args.csp)
        except OSError as e:
            print(f"cannot serve on 127.0.0.1:{args.port} ({e.strerror}); try --port 0 (any free port)",
                  file=sys.stderr)
            return 1
        print(f"serving {args.out} at {server.url}  (Ctrl+C to stop)"
              f"{'  with CSP: ' + args.csp if args.csp else ''}", flush=True)
        if not args.no_open:
            import webbrowser
            threading.Timer(0.5, webbrowser.open, [server.url]).start()
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
