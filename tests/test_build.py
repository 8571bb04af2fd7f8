"""build.py: output layout, URLs, hashes, cache checks, failure messages, the server."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
import subprocess
import sys
import urllib.request
import zipfile
from html.parser import HTMLParser
from pathlib import Path

import pytest

import build
from buildsupport.common import PYODIDE_CDN, SENTINEL_CDN, sha256_bytes, sha256_file
from buildsupport.in_pyodide.compile_pyc import compile_jobs
from buildsupport.inputs import Inputs
from buildsupport.loader import CLASSIC, MODULES, bundle
from buildsupport.zips import write_zip
from tests.site_fixtures import REQUIRED, ROOT, site_cdn

PYC_MAGIC_313 = bytes.fromhex("f30d0d0a")  # CPython 3.13 (Pyodide 0.29)


@pytest.fixture(scope="module")
def cdn() -> Path:
    return site_cdn()


def info(dist: Path) -> dict:
    return json.loads((dist / "build-info.json").read_text())


def site_lock(dist: Path) -> dict:
    (lock,) = (dist / "assets").glob("pyodide-lock.*.json")
    return json.loads(lock.read_text())


# ---------------------------------------------------------------- layout


def test_layout_self_contained(site):
    for rel in ("index.html", "embed.html", "_headers", "build-info.json"):
        assert (site / rel).is_file(), rel
    version = info(site)["pyodide"]
    for f in ("pyodide.js", "pyodide.asm.js", "pyodide.asm.wasm"):
        assert (site / "pyodide" / version / f).is_file(), f
    assert len(list((site / "pyodide" / version).glob("python_stdlib.*.zip"))) == 1
    for pattern in (
        "boot.*.js",
        "loader.*.js",
        "worker.*.js",
        "style.*.css",
        "app.*.zip",
        "grid.*.png",
        "lazy-modules.*.json",
        "pyodide-lock.*.json",
        "favicon.*.svg",
        "js/bokeh.*.min.js",
        "js/panel.*.min.js",
        "states-*/es-cache-2.html",
        "states-*/pt-full-64.html",
    ):
        assert len(list((site / "assets").glob(pattern))) == 1, pattern
    # a preview of every state a URL can ask for: 3 languages, 2 modes, t = 2 ... 64
    assert len(list((site / "assets").glob("states-*/*.html"))) == 3 * 2 * 63
    wheels = {p.name.split("-")[0] for p in (site / "packages").glob("*/*.whl")}
    assert {"numpy", "pyyaml", "markupsafe", "packaging", "panel", "bokeh", "param"} <= wheels
    assert (site / "panel" / info(site)["panel"] / "dist" / "css" / "markdown.css").is_file()
    # precompressed copies for the big text/wasm files
    assert (site / "pyodide" / version / "pyodide.asm.wasm.gz").is_file()
    assert list((site / "assets" / "js").glob("bokeh.*.min.js.gz"))


def test_the_shell_declares_the_palette_light_and_dark(site):
    """The page's one declaration of the palette (app/style theme_css): the app's shadow roots inherit it."""
    from app.style import theme_css

    (css,) = (site / "assets").glob("style.*.css")
    assert css.read_text(encoding="utf-8").startswith(theme_css())
    assert css.name in (site / "index.html").read_text(encoding="utf-8")


def test_pyodide_version_is_panels_pin(site):
    from panel.io.convert import PYODIDE_VERSION

    assert info(site)["pyodide"] == PYODIDE_VERSION.lstrip("v")
    assert json.loads(build.LOCK_PATH.read_text())["pyodide"]["version"] == PYODIDE_VERSION.lstrip("v")


def test_cdn_build_has_no_runtime(cdn):
    assert not (cdn / "pyodide").exists()
    names = {p.name.split("-")[0] for p in (cdn / "packages").glob("*/*.whl")}
    assert "numpy" not in names and "panel" in names
    lock = site_lock(cdn)
    assert lock["packages"]["numpy"]["file_name"].startswith(PYODIDE_CDN.format(version=info(cdn)["pyodide"]))


def test_self_contained_is_complete_and_hashes_match(site):
    lock = site_lock(site)
    assert set(lock["packages"]) >= {
        "numpy",
        "pyyaml",
        "markupsafe",
        "packaging",
        "panel",
        "bokeh",
        "param",
        "pyviz-comms",
        "jinja2",
        "pyodide-http",
    }
    for name, entry in lock["packages"].items():
        path = site / entry["file_name"]
        assert path.is_file(), entry["file_name"]
        assert sha256_file(path) == entry["sha256"], name
    for rel, sha in info(site)["files"].items():
        assert sha256_file(site / rel) == sha, rel
    config = page_config(site)
    for key in ("pyodide", "stdlib", "lock", "app", "worker"):
        assert (site / config[key]).is_file(), key


def test_hashed_names_change_with_content(site):
    (states,) = (site / "assets").glob("states-*")  # the previews: their folder's name
    texts = {p.name: p.read_text(encoding="utf-8") for p in sorted(states.glob("*.html"))}
    assert sha256_bytes(json.dumps(texts).encode()).startswith(states.name.split("-")[1])
    for p in (site / "assets").rglob("*"):
        if p.is_file() and p.suffix not in (".gz", ".zst") and p.parent != states:
            m = re.search(r"\.([0-9a-f]{10})\.", p.name)
            assert m, p.name
            assert sha256_file(p).startswith(m.group(1)), p.name


def test_wheels_are_slim_and_precompiled(site):
    (panel_whl,) = (site / "packages").glob("*/panel-*.whl")
    (bokeh_whl,) = (site / "packages").glob("*/bokeh-*.whl")
    with zipfile.ZipFile(panel_whl) as z:
        names = z.namelist()
        assert not any(n.startswith("panel/dist/") or "/tests/" in n for n in names)
        assert "panel/__init__.pyc" in names and "panel/__init__.py" not in names
        assert z.read("panel/__init__.pyc")[:4] == PYC_MAGIC_313
        assert not any(n.endswith(".py") for n in names)  # the rest went to panel-lazy.zip
    (panel_lazy,) = (site / "packages").glob("*/panel-lazy.zip")
    with zipfile.ZipFile(panel_lazy) as z:
        assert z.namelist() and all(not n.endswith(".pyc") for n in z.namelist())
    assert panel_whl.stat().st_size < 3e6
    # npm's and eslint's files are not read; package.json is (panel/io/resources.py, at import)
    assert "panel/package.json" in names and not {"panel/package-lock.json", "panel/eslint.config.js"} & set(names)
    with zipfile.ZipFile(bokeh_whl) as z:
        assert not any(n.startswith(("bokeh/server/static/", "bokeh/sampledata/")) for n in z.namelist())
        version = bokeh_whl.name.split("-")[1]  # of every release's hashes, its own
        assert [n for n in z.namelist() if n.startswith("bokeh/_sri/")] == [f"bokeh/_sri/{version}.json"]
    # bytecode without docstrings where that is safe (buildsupport/wheels.py OPTIMIZE): param's, the app's
    (param_whl,) = (site / "packages").glob("*/param-*.whl")
    with zipfile.ZipFile(param_whl) as z:
        assert b"adding support for scheduling" not in z.read("param/parameterized.pyc")  # _m_caller's docstring
    (app_zip,) = (site / "assets").glob("app.*.zip")
    with zipfile.ZipFile(app_zip) as z:
        names = set(z.namelist())
        assert {"app/main.py", "model/weights/minigpt.npz", "model/weights/tokenizer.json"} <= names
        assert "app/__pycache__/main.cpython-313.pyc" in names
        docstring = b"The innermost line of app/ on the stack"  # where_in_the_app's: in the source, kept for tracebacks
        assert docstring in z.read("app/main.py") and docstring not in z.read("app/__pycache__/main.cpython-313.pyc")
        # the model's command-line tools: source only (the sandbox's `import model` sees them)
        assert "model/train.py" in names and not any(n.startswith("model/__pycache__/train.") for n in names)
        assert "model/__pycache__/gpt.cpython-313.pyc" in names
        assert {"app/i18n/es.po", "app/i18n/en.po", "app/i18n/pt.po"} <= names  # the texts, a catalog each


def test_the_real_nh3_is_shipped(site):
    """Panel sanitizes with nh3.clean: the site ships Pyodide's compiled nh3 (no stand-in)."""
    entry = site_lock(site)["packages"]["nh3"]
    assert entry["imports"] == ["nh3"]
    with zipfile.ZipFile(site / entry["file_name"]) as z:
        assert "nh3/nh3.abi3.so" in z.namelist()  # the Rust extension
        assert z.read("nh3/nh3.abi3.so")[:4] == b"\0asm"  # compiled to WebAssembly
    (app_zip,) = (site / "assets").glob("app.*.zip")
    assert not [n for n in zipfile.ZipFile(app_zip).namelist() if "nh3" in n]
    assert not (ROOT / "buildsupport" / "nh3.py").exists()


def test_zip_writer_is_deterministic(tmp_path):
    """The same tree gives the same bytes (so the same hashed names), whatever the files' times."""
    tree = tmp_path / "tree"
    (tree / "pkg").mkdir(parents=True)
    (tree / "pkg" / "b.py").write_text("B = 2\n")
    (tree / "a.txt").write_text("a\n")
    first = write_zip(tree, tmp_path / "one.zip").read_bytes()
    os.utime(tree / "a.txt", (0, 0))
    second = write_zip(tree, tmp_path / "two.zip").read_bytes()
    assert first == second
    assert zipfile.ZipFile(tmp_path / "one.zip").namelist() == ["a.txt", "pkg/b.py"]


def test_builds_sharing_a_cache_never_write_one_file(tmp_path):
    """Two builds at once on one cache (the tests with -n 2, a benchmark beside a build) write the same
    entries: each writes its own part and renames it, so none finds its part gone (a shared `.part`
    name failed a parallel run with FileNotFoundError)."""
    from concurrent.futures import ThreadPoolExecutor

    from buildsupport.common import write_atomic

    target, data = tmp_path / "derived" / "entry.zst", os.urandom(1 << 20)
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "a.txt").write_bytes(data)
    with ThreadPoolExecutor(8) as pool:
        done = [pool.submit(write_atomic, target, data) for _ in range(16)]
        done += [pool.submit(write_zip, tree, tmp_path / "app.zip") for _ in range(16)]
        for job in done:
            job.result()  # raises what a write raised
    assert target.read_bytes() == data and zipfile.ZipFile(tmp_path / "app.zip").read("a.txt") == data
    assert sorted(p.name for p in tmp_path.rglob("*.part")) == []


def test_compile_pyc_ships_sourceless_bytecode(tmp_path):
    """in_pyodide/compile_pyc.py (here in CPython): only the listed modules become .pyc, in place
    of their source; a file that does not compile stays as source and is counted."""
    root = tmp_path / "w"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("X = 1\n")
    (root / "pkg" / "later.py").write_text("Y = 2\n")
    (root / "pkg" / "broken.py").write_text("def (:\n")
    job = {"root": str(root), "prefix": "/lib/site/", "sourceless": True, "only": ["pkg/__init__.py", "pkg/broken.py"]}
    report = json.loads(compile_jobs(json.dumps([job])))
    assert report == {str(root): [1, 1]}
    assert sorted(p.name for p in (root / "pkg").iterdir()) == ["__init__.pyc", "broken.py", "later.py"]


# ---------------------------------------------------------------- URLs


class _Refs(HTMLParser):
    def __init__(self):
        super().__init__()
        self.urls, self.json = [], []
        self._json = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for key in ("src", "href"):
            if a.get(key):
                self.urls.append(a[key])
        self._json = tag == "script" and a.get("type") in ("application/json", "esms-options")

    def handle_data(self, data):
        if self._json:
            self.json.append(data)


def page_config(dist: Path) -> dict:
    refs = _Refs()
    refs.feed((dist / "index.html").read_text())
    return next(json.loads(j) for j in refs.json if '"worker"' in j)


def all_strings(obj):
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for k, v in obj.items():
            yield from all_strings(k)
            yield from all_strings(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from all_strings(v)


URL = re.compile(r"""(?:^|(?<=[\s"'(=,]))(?:https?:)?//[^\s"'()<>]+""")
NAMESPACES = ("http://www.w3.org/",)


def absolute_urls(text: str) -> list[str]:
    return [u for u in URL.findall(text) if u.startswith(("http", "//")) and not u.startswith(NAMESPACES)]


@pytest.mark.parametrize("kind", ["self-contained", "cdn"])
def test_every_url_is_relative_or_the_cdn(kind, site, cdn):
    dist = site if kind == "self-contained" else cdn
    allowed = () if kind == "self-contained" else (PYODIDE_CDN.format(version=info(dist)["pyodide"]),)
    bad = []
    for page in ("index.html", "embed.html"):
        refs = _Refs()
        text = (dist / page).read_text()
        refs.feed(text)
        bad += [(page, u) for u in refs.urls if "//" in u and not u.startswith(allowed)]
        bad += [(page, u) for u in absolute_urls(text) if not u.startswith(allowed)]
    files = [
        *(dist / "assets").glob("*.json"),
        *(dist / "assets").glob("boot.*.js"),
        *(dist / "assets" / "loader").glob("*.js"),
        *(dist / "assets").glob("worker.*.js"),
        *(dist / "assets").glob("style.*.css"),
        *(dist / "panel").rglob("*.css"),
    ]
    for f in files:
        text = f.read_text()
        if f.suffix == ".json":
            strings = list(all_strings(json.loads(text)))
            bad += [(f.name, s) for s in strings for u in absolute_urls(s) if not u.startswith(allowed)]
        else:
            bad += [(f.name, u) for u in absolute_urls(text) if not u.startswith(allowed)]
    assert not bad, bad
    # the first paint is plain HTML: the default state's preview is in index.html itself, the same as
    # its file (around the loading progress), with the initial state (t = 2, the prompt's two columns
    # computed in one pass, the totals) and the grid image's address
    page = (dist / "index.html").read_text()
    snap = next((dist / "assets").glob("states-*/es-cache-2.html")).read_text()
    grid = next((dist / "assets").glob("grid.*.png")).name
    top, bottom = snap.split("<!--kv-progress-->")
    assert top in page and bottom in page and page.index(top) < page.index('id="kv-loader"') < page.index(bottom)
    assert SENTINEL_CDN not in snap and "<script" not in snap and f"url(assets/{grid})" in snap
    assert "t = 2 / 64" in snap and snap.count("class='now' style='left:0.000%;width:3.125%'") == 4
    assert "262\u202f912" in snap
    # and the states one action from it (Avanzar, Sin caché), inert, as their files are: a click on the first
    # paint is answered without a fetch
    ahead = re.findall(r'<template data-kv-ahead="([\w-]+)">', page)
    assert ahead == ["es-cache-3", "es-full-2"], ahead
    for name in ahead:
        state = next((dist / "assets").glob(f"states-*/{name}.html")).read_text()
        assert f'<template data-kv-ahead="{name}">{state}</template>' in page
    assert page.index('id="kv-loader"') < page.index("<template data-kv-ahead")  # after the first paint's own HTML
    # and their first parts (the title, the controls and the text) right after the preview's own, before the
    # loading card and the figures: a click before the document's end is drawn there at once
    first = re.findall(r'<template data-kv-first="([\w-]+)">', page)
    assert first == ahead, first
    for name in ahead:
        state = next((dist / "assets").glob(f"states-*/{name}.html")).read_text()
        part = f'<template data-kv-first="{name}">{state.split("<!--kv-progress-->")[0]}</template>'
        assert page.count(part) == 1 and page.index(top) < page.index(part) < page.index('id="kv-loader"')
    # and, inert for the loader to lay out after the first paint, every font the states will ask for
    # (app/figure/font_samples.py): after the preview, outside it (the loader's selectors never meet it),
    # before the live page's place
    from app.figure.font_samples import samples

    states = {f.stem: f.read_text() for f in sorted((dist / "assets").glob("states-*/*.html"))}
    fonts = samples(states.values(), snap, [states[name] for name in ahead])  # as the build
    assert "<span class='tok current'>" in fonts and "<p class='kv-sr'>" in fonts  # a sampled token, the live region
    fonts = f'<template id="kv-fonts">{fonts}</template>'
    assert page.count(fonts) == 1 and page.index(bottom) < page.index(fonts) < page.index('id="kv-live"')


# ---------------------------------------------------------------- cache checks and failures


def _link_downloads(tmp_cache: Path, corrupt: str | None = None) -> None:
    src = build.DEFAULT_CACHE / "downloads"
    dst = tmp_cache / "downloads"
    dst.mkdir(parents=True)
    for p in src.iterdir():
        if p.is_file():
            if p.name == corrupt:
                data = bytearray(p.read_bytes())
                data[len(data) // 2] ^= 0xFF
                (dst / p.name).write_bytes(bytes(data))
            else:
                (dst / p.name).symlink_to(p)


@pytest.fixture(scope="module")
def warm_cache(cdn):  # noqa: ARG001
    """The cdn build above has filled DEFAULT_CACHE/downloads with every fetchable input."""
    return build.DEFAULT_CACHE


# ---------------------------------------------------------------- the loader (buildsupport/loader.py)


@pytest.mark.parametrize("kind", ["self-contained", "cdn"])
def test_the_loader_is_one_classic_script_and_one_module_by_their_hashed_names(kind, site, cdn):
    """index.html runs one classic script in its <head> (the files that act while it is parsed) and one
    module script, every module of static/loader/ in it as a scope of its own, in ES modules' order, the
    source as written but for its imports and exports; no inline script but the configuration (the CSP
    has no 'unsafe-inline'); the bundle parses as a module (Node's check)."""
    dist = site if kind == "self-contained" else cdn
    page = (dist / "index.html").read_text()
    scripts = re.findall(r"<script\b([^>]*)>", page)
    assert [a for a in scripts if "src=" not in a] == [' type="application/json" id="kv-config"']
    (boot,) = (dist / "assets").glob("boot.*.js")
    (entry,) = (dist / "assets").glob("loader.*.js")
    assert scripts[1:] == [
        f' src="assets/{boot.name}"',
        f' type="module" src="assets/{entry.name}" fetchpriority="low"',
    ]
    assert '<script type="importmap"' not in page and "modulepreload" not in page
    assert sha256_file(entry).startswith(entry.name.split(".")[1])
    # the classic script: its files, in their order
    assert boot.read_text() == "\n".join((ROOT / "static" / name).read_text() for name in CLASSIC)
    text = entry.read_text()
    scopes = re.findall(r"^// static/loader/([a-z]+\.js)\nconst (__kv_[a-z]+) = \(\(\) => \{$", text, re.M)
    assert sorted(n for n, _ in scopes) == sorted(p.name for p in MODULES.glob("*.js"))
    assert scopes[0][0] == "state.js" and scopes[-1][0] == "main.js"  # main's first import first, main last
    for name, scope in scopes:
        source = (MODULES / name).read_text()
        body = text.split(f"const {scope} = (() => {{\n", 1)[1].split("\n})();\n", 1)[0]
        lines = [l for l in source.splitlines() if not l.startswith(("import ", "export "))]
        assert all(l in body.splitlines() for l in lines), name  # every other line as written
        for imported in re.findall(r'from "\./([a-z]+)\.js"', source):  # what it imports, run before it
            assert text.index(f"const __kv_{imported} = ") < text.index(f"const {scope} = "), (name, imported)
    node_checks(entry)


def node_checks(path: Path) -> None:
    module = path.with_suffix(".mjs")
    module.write_bytes(path.read_bytes())
    try:
        done = subprocess.run(["node", "--check", str(module)], capture_output=True, text=True)
    finally:
        module.unlink()
    assert done.returncode == 0, done.stderr


def module_folder(tmp_path: Path, modules: dict[str, str]) -> Path:
    folder = tmp_path / "loader"
    folder.mkdir(exist_ok=True)
    for old in folder.glob("*.js"):
        old.unlink()
    for name, text in modules.items():
        (folder / name).write_text(text)
    return folder


def test_the_bundle_runs_the_modules_as_node_runs_them(tmp_path):
    """The same modules, run by Node as modules and as the bundle: the same lines printed in the same
    order (each module's top level after its imports', depth first in the order named), aliases, imports
    over several lines, an async function and a class exported, a name two modules keep to themselves."""
    modules = {
        "main.js": 'import { a } from "./a.js";\nimport {\n  b as bee,\n  K,\n} from "./b.js";\n'
        'const own = "main";\nconsole.log(own, a(bee), new K().k);\n',
        "a.js": 'import { c } from "./c.js";\nconst own = "a";\nconsole.log(own);\n'
        "export const a = (x) => c(x) + 1;\nexport async function later() {}\n",
        "b.js": 'import { c } from "./c.js";\nconsole.log("b", c(1));\nexport const b = 2;\n'
        "export class K { k = 3; }\n",
        "c.js": 'console.log("c");\nexport function c(x) {\n  return x * 10;\n}\n',
    }
    folder = module_folder(tmp_path, modules)
    one = tmp_path / "bundle.mjs"
    one.write_bytes(bundle(folder))
    for name in modules:  # Node runs .js as CommonJS here: the same files as .mjs
        (folder / name).with_suffix(".mjs").write_text(modules[name].replace('.js"', '.mjs"'))
    run = lambda path: subprocess.run(["node", str(path)], capture_output=True, text=True, check=True).stdout  # noqa: E731
    assert run(one) == run(folder / "main.mjs") == "c\na\nb 10\nmain 21 3\n"


@pytest.mark.parametrize(
    "modules, message",
    [
        ({"main.js": 'import { a } from "./a.js";\n', "a.js": 'import { m } from "./main.js";\n'}, "import cycle"),
        ({"main.js": 'const m = import("./a.js");\n', "a.js": ""}, "cannot bundle"),
        ({"main.js": 'import { x } from "https://example.org/x.js";\n'}, "cannot bundle"),
        ({"main.js": 'import { x } from "./nowhere.js";\n'}, "not a module of static/loader"),
        ({"main.js": "export const x = 1;\n", "a.js": "export const y = 2;\n"}, "not imported by main.js"),
        ({"main.js": '  import { a } from "./a.js";\n', "a.js": ""}, "cannot bundle"),
        (
            {"main.js": 'import { a } from "./a.js";\n', "a.js": 'export { c as a } from "./c.js";\n', "c.js": ""},
            "cannot bundle",
        ),
        ({"main.js": 'import { a } from "./a.js";\n', "a.js": "export let a = 1;\n"}, "cannot bundle"),
        ({"main.js": 'import "./a.js";\n', "a.js": ""}, "cannot bundle"),
    ],
)
def test_the_build_stops_at_an_import_it_cannot_bundle(tmp_path, modules, message):
    with pytest.raises(build.BuildError, match=message):
        bundle(module_folder(tmp_path, modules))


def test_corrupted_cached_wheel_is_detected(tmp_path, warm_cache):
    wheel = next(f for f in json.loads(build.LOCK_PATH.read_text())["wheels"] if f.startswith("mdurl"))
    _link_downloads(tmp_path / "cache", corrupt=wheel)
    out = tmp_path / "dist"
    with pytest.raises(build.BuildError) as e:
        build.build(out, tmp_path / "cache", cdn=True)
    msg = str(e.value)
    assert wheel in msg and "sha256 mismatch" in msg and str(tmp_path / "cache" / "downloads" / wheel) in msg
    assert not out.exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".dist")]


def test_corrupted_pyodide_tarball_is_detected(tmp_path, warm_cache):
    version = json.loads(build.LOCK_PATH.read_text())["pyodide"]["version"]
    _link_downloads(tmp_path / "cache", corrupt=f"pyodide-{version}.tgz")
    with pytest.raises(build.BuildError, match=rf"pyodide-{re.escape(version)}\.tgz: sha256 mismatch"):
        build.build(tmp_path / "dist", tmp_path / "cache", cdn=True)
    assert not (tmp_path / "dist").exists()


def test_corrupted_compiled_wheel_is_detected(tmp_path, warm_cache):
    _link_downloads(tmp_path / "cache")
    fake = tmp_path / "wheels"
    fake.mkdir()
    name = "numpy-2.2.5-cp313-cp313-pyodide_2025_0_wasm32.whl"
    (fake / name).write_bytes(b"not the official wheel")
    with pytest.raises(build.BuildError) as e:
        build.build(tmp_path / "dist", tmp_path / "cache", pyodide_wheels=[fake])
    assert name in str(e.value) and "sha256 mismatch" in str(e.value) and str(fake / name) in str(e.value)
    assert not (tmp_path / "dist").exists()


def test_missing_compiled_wheels_stop_with_one_message_naming_them_all(tmp_path, warm_cache):
    _link_downloads(tmp_path / "cache")
    out = tmp_path / "dist"
    env = {k: v for k, v in os.environ.items() if k != "KV_EXPLORABLE_PYODIDE_WHEELS"}
    env["KV_EXPLORABLE_OFFLINE"] = "1"  # no attempt at the Pyodide CDN (see the next test)
    proc = subprocess.run(
        [sys.executable, str(ROOT / "build.py"), "--out", str(out), "--cache", str(tmp_path / "cache")],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 1
    err = proc.stderr
    assert err.count("build failed:") == 1 and f"{len(REQUIRED)} compiled Pyodide wheel(s) missing" in err
    for name in REQUIRED:  # every one, nh3 too
        assert f"{name}: missing" in err, (name, err)
    assert str(tmp_path / "cache" / "pyodide-0.29.3") in err  # where it looked, where to put them
    assert "--pyodide-wheels" in err and "KV_EXPLORABLE_PYODIDE_WHEELS" in err and "--cdn" in err
    assert not out.exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".dist")]


def test_missing_compiled_wheel_is_downloaded_and_checked(tmp_path, monkeypatch):
    """With a network, the build fetches a missing compiled wheel from the Pyodide CDN (here a
    local server standing in for it) and keeps it only if its sha256 is the lock's."""
    served = tmp_path / "cdn" / "v0.29.3" / "full"
    served.mkdir(parents=True)
    (served / "good.whl").write_bytes(b"the official bytes")
    (served / "bad.whl").write_bytes(b"something else")
    server = build.serve_in_thread(tmp_path / "cdn", 0)
    try:
        monkeypatch.delenv("KV_EXPLORABLE_OFFLINE", raising=False)
        inputs = Inputs(tmp_path / "cache", "0.29.3", [], cdn=server.url + "v{version}/full/")
        good_sha = hashlib.sha256(b"the official bytes").hexdigest()
        good = {"file_name": "good.whl", "sha256": good_sha}
        path = inputs.compiled_wheels({"good": good})["good"]
        assert path == tmp_path / "cache" / "pyodide-0.29.3" / "good.whl" and path.read_bytes() == b"the official bytes"
        with pytest.raises(build.BuildError, match="bad.whl: missing.*sha256 mismatch"):
            inputs.compiled_wheels({"good": good, "bad": {"file_name": "bad.whl", "sha256": good_sha}})
        assert not (tmp_path / "cache" / "pyodide-0.29.3" / "bad.whl").exists()
    finally:
        server.shutdown()
        server.server_close()


def test_failed_build_keeps_previous_dist(tmp_path, warm_cache):
    out = tmp_path / "dist"
    out.mkdir()
    (out / "index.html").write_text("previous")
    _link_downloads(tmp_path / "cache", corrupt="mdurl-0.1.2-py3-none-any.whl")
    with pytest.raises(build.BuildError):
        build.build(out, tmp_path / "cache", cdn=True)
    assert (out / "index.html").read_text() == "previous"


# ---------------------------------------------------------------- server


def _get(url, headers=None):
    req = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(req) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


def test_server_types_compression_caching_csp(cdn):
    server = build.serve_in_thread(cdn, 0, csp=build.CSP)
    try:
        status, h, body = _get(server.url)
        assert status == 200 and h["Content-Type"].startswith("text/html")
        assert h["Cache-Control"] == "no-cache" and h["Content-Security-Policy"] == build.CSP
        loader = next((cdn / "assets").glob("boot.*.js")).name
        status, h, body = _get(server.url + "assets/" + loader, {"Accept-Encoding": "gzip"})
        assert h["Content-Type"] == "text/javascript" and "immutable" in h["Cache-Control"]
        if (cdn / "assets" / (loader + ".gz")).exists():
            assert h["Content-Encoding"] == "gzip"
            assert gzip.decompress(body) == (cdn / "assets" / loader).read_bytes()
        if (cdn / "assets" / (loader + ".zst")).exists():
            status, h, body = _get(server.url + "assets/" + loader, {"Accept-Encoding": "gzip, br, zstd"})
            assert h["Content-Encoding"] == "zstd" and body == (cdn / "assets" / (loader + ".zst")).read_bytes()
        status, h, body = _get(server.url + "assets/" + loader)
        assert "Content-Encoding" not in h and body == (cdn / "assets" / loader).read_bytes()
        etag = h["ETag"]
        status, h, body = _get(server.url + "assets/" + loader, {"If-None-Match": etag})
        assert status == 304
        assert _get(server.url + "nope.js")[0] == 404
        assert _get(server.url + "../build.py")[0] == 404
    finally:
        server.shutdown()
        server.server_close()


def test_server_sends_wasm_mime_type(site):
    server = build.serve_in_thread(site, 0)
    try:
        status, h, body = _get(
            server.url + f"pyodide/{info(site)['pyodide']}/pyodide.asm.wasm", {"Accept-Encoding": "gzip, br"}
        )
        assert status == 200 and h["Content-Type"] == "application/wasm" and h["Content-Encoding"] == "gzip"
        assert gzip.decompress(body)[:4] == b"\0asm"
    finally:
        server.shutdown()
        server.server_close()


def test_the_shell_reads_the_catalogs(site):
    """index.html's own texts are the default language's, from app/i18n/es.po; every language's are in
    the configuration, for the page's loader; the noscript note is in every language."""
    from app.i18n import LANGS, shell_text

    page = (site / "index.html").read_text()
    assert "{{" not in page.split('id="kv-config"')[0] and '<html lang="es">' in page
    es = shell_text()["es"]
    for key in (
        "shell_title",
        "shell_loading",
        "shell_failed",
        "shell_files",
        "shell_hint",
        "shell_retry",
        "shell_dismiss",
    ):
        assert f">{es[key]}<" in page, key
    assert f'<meta name="description" content="{es["shell_description"]}">' in page
    assert all(f'<span lang="{lang}">{shell_text()[lang]["shell_noscript"]}</span>' in page for lang in LANGS)
    config = json.loads(re.search(r'id="kv-config">(.*?)</script>', page, re.S).group(1))
    assert config["text"] == shell_text() and config["defaultLang"] == "es"


def test_embed_example(site):
    html = (site / "embed.html").read_text()
    assert "<iframe" in html and 'src="./index.html?lang=es&embed=1"' in html
    assert 'sandbox="allow-scripts allow-same-origin' in html


def test_other_checkpoints_ship_apart_with_a_manifest_in_the_app(site):
    """The checkpoints a reader may pick (shared K/V heads, the draft) are files of their own in
    assets/, not in the app archive, which lists them with their sha256 (checkpoints.json, in its app/)."""
    (app_zip,) = (site / "assets").glob("app.*.zip")
    with zipfile.ZipFile(app_zip) as z:
        manifest = json.loads(z.read("app/checkpoints.json"))
        assert not [n for n in z.namelist() if n.startswith("model/checkpoints/")]
    assert set(manifest) == {"kv2", "kv1", "draft"}
    for name, files in manifest.items():
        assert set(files) == {"minigpt.npz", "metrics.json"}
        for f, where in files.items():
            data = (site / "assets" / where["url"]).read_bytes()
            assert hashlib.sha256(data).hexdigest() == where["sha256"]
            assert data == (ROOT / "model" / "checkpoints" / name / f).read_bytes()
