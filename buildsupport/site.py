"""The assembly of dist/, one named step per part of the page. Each step adds its files to a Site
(relative path -> bytes or a file to copy) and its URLs to the page's configuration, the JSON
the page's loader reads from index.html (static/boot.js, static/loader/)."""

from __future__ import annotations

import base64
import html
import importlib.util
import json
import re
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from .bokehjs import page_bundle
from .common import PYTHON_IN_PYODIDE, SENTINEL_CDN, STATIC, BuildError, hashed_name, sha256_bytes
from .derive import Derived, checkpoint_assets
from .loader import add_loader
from .packages import Runtime
from .wheels import lazy_path

# Page scripts Panel lists that this app does not use (the e2e tests run without them):
# BokehJS's WebGL backend (the figures draw on a canvas) and es-module-shims (for Panel's
# ESM components; the app has none). -70 kB compressed, and no blob: in the CSP.
UNNEEDED_SCRIPTS = ("bokeh-gl", "es-module-shims")
# Page scripts run only when a document asks for one of their models (buildsupport/bokehjs.py
# defer_tables): not prefetched, not run before.
ON_DEMAND_SCRIPTS = ("bokeh-tables",)
RUNTIME_FILES = ("pyodide.js", "pyodide.asm.js", "pyodide.asm.wasm")


@dataclass
class Site:
    """What dist/ will hold, and the page's configuration, before anything is written."""

    panel_version: str
    files: dict[str, bytes | Path] = field(default_factory=dict)
    config: dict = field(default_factory=dict)
    inline_snapshot: tuple[str, str] = ("", "")  # the default state's preview, around the progress
    inline_ahead: str = ""  # the states one action from it, as inert <template>s (the first click's answer)
    inline_ahead_first: str = ""  # their first parts, inert, right after the preview's own (drawn before the end)
    inline_fonts: str = ""  # every font the states ask for, inert, laid out after the first paint (font_samples.py)

    def add(self, rel: str, data: bytes | Path) -> str:
        self.files[rel] = data
        return rel

    def add_hashed(self, folder: str, name: str, data: bytes) -> str:
        return self.add(f"{folder}/{hashed_name(name, data)}", data)

    def add_by_hash(self, folder: str, path: Path) -> tuple[str, str]:
        """folder/<sha256 prefix>/<name>, keeping the file's name (wheels need theirs); (url, sha256)."""
        sha = sha256_bytes(path.read_bytes())
        return self.add(f"{folder}/{sha[:16]}/{path.name}", path), sha

    @property
    def panel_prefix(self) -> str:
        return f"panel/{self.panel_version}/dist/"

    @property
    def panel_sentinel(self) -> str:
        return f"{SENTINEL_CDN}{self.panel_version}/dist/"

    def rewrite(self, text: str) -> str:
        """The prerender's Panel URLs (sentinel CDN) as the site's own relative ones."""
        return text.replace(self.panel_sentinel, self.panel_prefix).replace(SENTINEL_CDN, "panel/")


def package_dir(name: str) -> Path:
    """An installed package's folder, without importing it."""
    return Path(importlib.util.find_spec(name).origin).parent


def add_panel_styles(site: Site) -> None:
    """Panel's stylesheets and their assets, which the app's models reference at run time."""
    dist = package_dir("panel") / "dist"
    for sub in ("css", "bundled/theme", "assets"):
        for p in sorted((dist / sub).rglob("*")):
            if p.is_file():
                site.add(site.panel_prefix + p.relative_to(dist).as_posix(), p)


def page_script_file(site: Site, url: str) -> Path:
    """The installed file behind a page script URL of the prerender (Panel's or BokehJS's)."""
    if url.startswith(site.panel_sentinel):
        src = package_dir("panel") / "dist" / url[len(site.panel_sentinel) :]
    elif "/bokeh/release/" in url:
        name = re.sub(r"-\d+\.\d+\.\d+(\S*?)\.min\.js$", ".min.js", url.rsplit("/", 1)[1])
        src = package_dir("bokeh") / "server" / "static" / "js" / name
    else:
        raise BuildError(f"unexpected page script {url}: add a rule for it in buildsupport/site.py")
    if not src.is_file():
        raise BuildError(f"page script {url} not found at {src}")
    return src


def add_page_scripts(site: Site, pre: dict) -> None:
    """BokehJS and Panel's JavaScript: prefetched by the page's loader once it has loaded and painted
    (they download while Python boots, after what the first paint needs), run by the loader in this order
    once Python builds the app (config "scripts"), each staged (buildsupport/bokehjs.py): its modules run
    a few at a time in the main thread's idle time. bokeh-tables only when a document needs it (config
    "onDemand": its script, then the Panel models that need it)."""
    site.config["scripts"] = []
    site.config["onDemand"] = {"scripts": [], "models": []}
    for url in pre["js"]:
        if not any(name in url for name in UNNEEDED_SCRIPTS):
            src = page_script_file(site, url)
            staged, models = page_bundle(src.name, src.read_bytes())
            site.config["onDemand"]["models"] += models
            url = site.add_hashed("assets/js", src.name, staged)
            on_demand = any(name in url for name in ON_DEMAND_SCRIPTS)
            (site.config["onDemand"]["scripts"] if on_demand else site.config["scripts"]).append(url)
    if not site.config["onDemand"]["models"] or not site.config["onDemand"]["scripts"]:
        raise BuildError(f"expected panel.min.js and bokeh-tables among the page scripts, found {pre['js']}")
    unexpected = [url for url in pre["css"] if not url.startswith(site.panel_sentinel)]
    if unexpected:
        raise BuildError(f"unexpected page stylesheets {unexpected}: add a rule for them in buildsupport/site.py")


def add_snapshots(site: Site, pre: dict) -> None:
    """First paint: the HTML preview (app/figure/snapshot.py) of every state a URL can ask for with the
    default seed and top-p (language, mode, t), in one folder named by their hash, and the grid image
    they share; the default state's is also written into index.html (it shows before any script
    runs), the page's loader fetches the one a URL asks for (static/boot.js). The URL's rules go with them."""
    from app.figure.font_samples import samples as font_samples

    grid = site.add_hashed("assets", "grid.png", base64.b64decode(pre["grid"]))
    states = {
        name: site.rewrite(doc).replace(pre["grid_placeholder"], grid) for name, doc in sorted(pre["states"].items())
    }
    folder = "assets/states-" + sha256_bytes(json.dumps(states).encode())[:10] + "/"
    for name, doc in states.items():
        site.add(folder + name, doc.encode())
    prompt = pre["query"]["params"]["t"]["bounds"][0]
    inline = f"{pre['default_lang']}-cache-{prompt}"
    site.config.update(
        states=folder,
        defaultLang=pre["default_lang"],
        inlineState=inline,
        progressMarker=pre["progress_marker"],
        query=pre["query"],
    )
    top, bottom = states[inline + ".html"].split(pre["progress_marker"])
    site.inline_snapshot = (pre["snapshot_style"] + top, bottom)
    # A click on the first paint's Avanzar or Sin caché is answered from the page itself (static/loader/
    # reads these), not from a fetch queued behind Pyodide's downloads.
    ahead = (f"{pre['default_lang']}-cache-{prompt + 1}", f"{pre['default_lang']}-full-{prompt}")
    site.inline_ahead = "".join(
        f'<template data-kv-ahead="{name}">{states[name + ".html"]}</template>' for name in ahead
    )
    # ... and their first parts (the title, the controls and the text: what a phone shows) right after the
    # preview's own, so that a click made before the document's end is drawn there at once
    site.inline_ahead_first = "".join(
        f'<template data-kv-first="{name}">{states[name + ".html"].split(pre["progress_marker"])[0]}</template>'
        for name in ahead
    )
    # ... and a click's layout does not wait for a font the first paint did not need: the loader lays out,
    # after the first paint, a sample of every kind of text of the states, those the first click shows first
    # (app/figure/font_samples.py)
    fonts = font_samples(states.values(), states[inline + ".html"], [states[name + ".html"] for name in ahead])
    site.inline_fonts = f'<template id="kv-fonts">{fonts}</template>' if fonts else ""


def add_runtime(site: Site, runtime: Runtime, derived: Derived, version: str, cdn: str | None) -> None:
    """Pyodide's runtime and its slimmed standard library (or, with --cdn, their CDN address)."""
    if cdn:
        site.config.update(pyodide=cdn + "pyodide.js", indexURL=cdn, stdlib=None)
        return
    folder = f"pyodide/{version}"
    for f in RUNTIME_FILES:
        site.add(f"{folder}/{f}", runtime.dir / f)
    stdlib = site.add_hashed(folder, "python_stdlib.zip", derived.stdlib.read_bytes())
    site.config.update(pyodide=f"{folder}/pyodide.js", indexURL=f"{folder}/", stdlib=stdlib)


def wheel_imports(path: Path) -> list[str]:
    """The top-level names a wheel installs (Pyodide's lock lists them)."""
    with zipfile.ZipFile(path) as z:
        tops = {n.split("/")[0] for n in z.namelist() if "/" in n}
    return sorted(t for t in tops if not t.endswith((".dist-info", ".data")))


def lock_entry(site: Site, package, path: Path | None, cdn: str | None) -> dict:
    """The site's lock entry of a package: its derived wheel, or with --cdn Pyodide's own file."""
    if path is None:
        entry = package.entry
        file_name, sha, version, imports = cdn + entry["file_name"], entry["sha256"], entry["version"], entry["imports"]
    else:
        file_name, sha = site.add_by_hash("packages", path)
        version = path.name.split("-")[1]
        imports = package.entry["imports"] if package.entry else wheel_imports(path)
    return {
        "name": package.name,
        "version": version,
        "file_name": file_name,
        "install_dir": "site",
        "sha256": sha,
        "package_type": "package",
        "imports": imports,
        "depends": [],
        "unvendored_tests": False,
        "shared_library": False,
    }


def add_packages(site: Site, derived: Derived, pyodide_lock: dict, cdn: str | None) -> None:
    """The wheels and the site's own Pyodide lock file, which loadPyodide installs them from."""
    packages = {package.name: lock_entry(site, package, path, cdn) for package, path in derived.wheels}
    lock = {"info": pyodide_lock["info"], "packages": packages}
    site.config.update(
        lock=site.add_hashed("assets", "pyodide-lock.json", json.dumps(lock, indent=1).encode()),
        packageBaseUrl="./",
        packages=sorted(packages),
    )


def add_lazy_modules(site: Site, derived: Derived, version: str) -> None:
    """The *-lazy.zip archives and their index: fetched on first import (app/lazyimport.py)."""
    lazy = {"archives": [], "modules": {}}
    places = [
        (lazy_path(path), f"/lib/{PYTHON_IN_PYODIDE}/site-packages", "packages")
        for _, path in derived.wheels
        if path is not None
    ]
    if derived.stdlib is not None:
        places.append((lazy_path(derived.stdlib), f"/lib/{PYTHON_IN_PYODIDE}/kv-lazy-stdlib", f"pyodide/{version}"))
    for archive, root, folder in places:
        if archive.is_file():
            url, sha = site.add_by_hash(folder, archive)
            lazy["archives"].append({"url": url, "sha256": sha, "root": root})
            n = len(lazy["archives"]) - 1
            for module, (rel, is_pkg) in json.loads(archive.with_suffix(".json").read_text()).items():
                lazy["modules"].setdefault(module, [n, rel, is_pkg])
    index = json.dumps(lazy, separators=(",", ":")).encode()
    site.config["lazy"] = site.add_hashed("assets", "lazy-modules.json", index)


def add_app(site: Site, derived: Derived) -> None:
    """The app archive: app/ and model/ with their bytecode, and the lesson's checkpoint; the other
    checkpoints as files of their own, fetched only when a reader picks one (app/state/checkpoints.py)."""
    site.config["app"] = site.add_hashed("assets", "app.zip", derived.app.read_bytes())
    for files in checkpoint_assets().values():
        for name, data in files.values():
            site.add(f"assets/{name}", data)


def add_sandbox(site: Site) -> None:
    """The reader's code sandbox (static/sandbox.js): its own worker, on the same runtime files and
    NumPy wheel as the app, and the lazy-import finder so its standard library is whole too."""
    cfg = site.config
    site.config["sandbox"] = {
        "worker": add_static(site, "sandbox.js"),
        "pyodide": cfg["pyodide"],
        "indexURL": cfg["indexURL"],
        "stdLibURL": cfg["stdlib"],
        "lockFileURL": cfg["lock"],
        "packageBaseUrl": cfg["packageBaseUrl"],
        "packages": ["numpy"],
        "lazy": {"index": cfg["lazy"], "base": cfg["packageBaseUrl"], "module": "app.wasm"},
        "folders": ["packages/"],  # its wheels and lazy archives: all the sandbox may read of the site's root
    }


def add_static(site: Site, name: str) -> str:
    return site.add_hashed("assets", name, (STATIC / name).read_bytes())


def add_shell_css(site: Site) -> str:
    """The shell's stylesheet, after the palette's roles, light and dark (--kv-*, from app/style: one
    palette for the app and its shell, declared once for the document; the app's shadow roots inherit it)."""
    from app.style import read_css, theme_css

    return site.add_hashed("assets", "style.css", (theme_css() + read_css(STATIC / "style.css")).encode())


def shell_fills() -> dict[str, str]:
    """index.html's texts (its {{shell_*}} markers) in the default language, from the catalogs
    (app/i18n); the noscript note in every language (without scripts, no other language is shown)."""
    from app.i18n import DEFAULT_LANG, LANGS, shell_text

    texts = shell_text()
    fills = {f"{{{{{key}}}}}": html.escape(text) for key, text in texts[DEFAULT_LANG].items()}
    notes = {}
    for lang in LANGS:
        notes.setdefault(texts[lang]["shell_noscript"], lang)
    fills["{{NOSCRIPT}}"] = " / ".join(
        f'<span lang="{lang}">{html.escape(text)}</span>' for text, lang in notes.items()
    )
    fills["{{LANG}}"] = DEFAULT_LANG
    return fills


def add_pages(site: Site) -> None:
    """The hand-written shell (static/): index.html with the configuration (and in it the shell's texts
    in every language, for the page's loader), the shell's texts, the inline snapshot and the page
    scripts; the worker, the loader (its classic script and its modules: buildsupport/loader.py),
    stylesheet and icon; embed.html and _headers as they are."""
    from app.i18n import shell_text

    site.config.update(worker=add_static(site, "worker.js"), panelCdnRoot="panel/", text=shell_text())
    loader = add_loader(site)
    fills = {
        **shell_fills(),
        "{{CONFIG}}": json.dumps(site.config, indent=1).replace("</", "<\\/"),
        "{{BOOT}}": loader.boot,
        "{{MODULES}}": loader.tags(),
        "{{CSS}}": add_shell_css(site),
        "{{ICON}}": add_static(site, "favicon.svg"),
        "{{SNAPSHOT_STATE}}": site.config["inlineState"],
        "{{SNAPSHOT_TOP}}": site.inline_snapshot[0],
        "{{SNAPSHOT_BOTTOM}}": site.inline_snapshot[1],
        "{{SNAPSHOT_AHEAD}}": site.inline_ahead,
        "{{SNAPSHOT_AHEAD_FIRST}}": site.inline_ahead_first,
        "{{SNAPSHOT_FONTS}}": site.inline_fonts,
    }
    page = (STATIC / "index.html").read_text(encoding="utf-8")
    unknown = sorted(set(re.findall(r"\{\{\w+\}\}", page)) - set(fills))
    if unknown:
        raise BuildError(f"static/index.html: nothing fills {unknown} (a shell_* key missing in app/i18n/es.po?)")
    for marker, value in fills.items():
        page = page.replace(marker, value)
    site.add("index.html", page.encode())
    for name in ("embed.html", "_headers"):
        site.add(name, STATIC / name)
