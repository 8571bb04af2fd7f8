"""Wheels as the page gets them: slimmed (no tests, no JS the page loads as files, no tools), the
modules the app imports at start-up compiled, the others moved to a *-lazy.zip fetched on first
import (app/lazyimport.py), and repacked with a valid, empty RECORD."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

from .zips import extract, write_zip

DROP_ALWAYS = re.compile(r"(^|/)(tests?|__pycache__)/|\.(ts|tsx|map|less|pyc|pyi)$|^typings/")
DROP = {
    "panel": re.compile(
        r"^panel/dist/|^panel/models/.*\.(ts|tsx|js|css)$|^panel/.*\.ts$|^panel/(package-lock\.json|eslint\.config\.js)$"
    ),
    "bokeh": re.compile(r"^bokeh/server/static/|^bokeh/sampledata/|^bokeh/sphinxext/"),
    "numpy": re.compile(r"^numpy/(f2py|_pyinstaller|doc)/|^numpy/_core/include/"),
    # Pyodide's standard library: the REPL, docs data, tools and network clients the page never uses,
    # and the codecs nobody decodes with here.
    "stdlib": re.compile(
        r"^(_pyrepl|pydoc_data|idlelib|turtledemo|ensurepip|venv|lib2to3|tkinter|xmlrpc|"
        r"wsgiref)/|^(imaplib|mailbox|smtplib|ftplib|poplib|nntplib|telnetlib)\.py$|"
        r"^encodings/(?!(__init__|aliases|utf_8|utf_8_sig|utf_16|utf_16_le|utf_16_be|utf_32|"
        r"utf_32_le|utf_32_be|latin_1|ascii|cp1252|cp437|idna|punycode|raw_unicode_escape|"
        r"unicode_escape|charmap|base64_codec|hex_codec|undefined)\.py$)"
    ),
}
# Bytecode without docstrings and asserts (like python -OO) for the standard library, which
# CPython tests in that mode (saves ~0.35 MB), for param and Jinja2 (neither reads a docstring it
# needs at run time: param's class docstrings are built only for IPython's pager, and checked for
# None; their asserts are internal checks; 75 KB compressed) and for the app (app/ and model/ read no
# docstring and assert nothing at run time; with the model's tools left as source, 32 KB). NumPy is not safe this way (its add_newdoc needs
# the docstrings when sys.flags.optimize is 0: TypeError at import), nor Bokeh (its plotting API
# builds its docstrings from its models' at import), nor checked for the others.
OPTIMIZE = {"stdlib": 2, "param": 2, "jinja2": 2, "app": 2}
# Imported in the browser but not by the traced start-up (or only when the trace fails): compiled too.
EXTRA_IMPORTS = (
    "pyodide",
    "_pyodide",
    "pyodide_http",
    "panel.io.pyodide",
    "encodings",
    "zipimport",
    "importlib",
    "asyncio",
    "json",
    "ast",
    "inspect",
    "typing",
    "pathlib",
    "zipfile",
    "tarfile",
    "_colorize",
    "_opcode_metadata",
    "_sysconfigdata*",
    "numpy._core",
    "numpy.linalg",
    "packaging",
)


def module_name(rel: str) -> str:
    """numpy/linalg/__init__.py -> numpy.linalg"""
    name = rel[:-3].replace("/", ".")
    return name[: -len(".__init__")] if name.endswith(".__init__") else name


def imported(rel: str, modules: frozenset) -> bool:
    """Whether the page imports this file at start-up (traced, or listed in EXTRA_IMPORTS)."""
    name = module_name(rel)
    return name in modules or any(
        name == e or name.startswith(e + ".") or (e[-1] == "*" and name.startswith(e[:-1])) for e in EXTRA_IMPORTS
    )


def compile_list(tree: Path, modules: frozenset) -> list[str]:
    """The .py files of a tree to ship as bytecode: those the page imports at start-up."""
    return sorted(
        p.relative_to(tree).as_posix() for p in tree.rglob("*.py") if imported(p.relative_to(tree).as_posix(), modules)
    )


def unpack_slim(whl: Path, dest: Path, name: str) -> None:
    """Unpack a wheel (or the standard library) without what the page never uses. Bokeh keeps, of the
    subresource-integrity hashes of every release since 0.2 (56 KB compressed: hashes do not compress),
    its own release's, the only ones it reads (bokeh.resources, for links to its CDN)."""
    drop = DROP.get(name)

    def keep(fn: str) -> bool:
        if name == "bokeh" and fn.startswith("bokeh/_sri/"):
            return fn == f"bokeh/_sri/{whl.name.split('-')[1]}.json"  # bokeh-3.9.2-py3-none-any.whl
        return not (DROP_ALWAYS.search(fn) or (drop and drop.search(fn)))

    extract(whl, dest, keep)


def pack_wheel(src: Path, out: Path, deflate: bool = False) -> Path:
    """Zip a wheel tree with an empty RECORD: Pyodide does not read it (saves ~50 KB per visit).
    Stored, for the server to compress whole (buildsupport/zips.py), unless `deflate`."""
    record = next(src.glob("*.dist-info/RECORD"), None)
    if record is not None:
        buf = io.StringIO()
        csv.writer(buf, lineterminator="\n").writerow([record.relative_to(src).as_posix(), "", ""])
        record.write_text(buf.getvalue(), encoding="utf-8")
    return write_zip(src, out, deflate=deflate)


def lazy_path(out: Path) -> Path:
    """Where the lazy archive of a derived wheel (or stdlib) lives: numpy-2.2.5-...whl -> numpy-lazy.zip."""
    return out.with_name(out.name.split("-")[0].removesuffix(".zip") + "-lazy.zip")


def _is_metadata(tree: Path, p: Path) -> bool:
    return any(part.endswith((".dist-info", ".data")) for part in p.relative_to(tree).parts)


def lazy_files(tree: Path) -> list[Path]:
    """What the page does not need at start-up: every module left as source after compiling, and
    whole packages (data files and compiled extensions too) of which nothing was imported."""
    unimported = sorted(p.parent for p in tree.rglob("__init__.py") if not _is_metadata(tree, p))
    tops = [d for d in unimported if not any(o != d and o in d.parents for o in unimported)]
    files = {p for d in tops for p in d.rglob("*") if p.is_file() and "__pycache__" not in p.parts}
    files |= {p for p in tree.rglob("*.py") if not _is_metadata(tree, p)}
    return sorted(files)


def split_lazy(tree: Path, lazy_zip: Path) -> None:
    """Move the lazy files out of the tree into lazy_zip, with its index of modules beside it
    (module -> [path in the archive, is a package])."""
    files = lazy_files(tree)
    if not files:
        return
    index = {
        module_name(p.relative_to(tree).as_posix()): [p.relative_to(tree).as_posix(), p.name == "__init__.py"]
        for p in files
        if p.suffix == ".py"
    }
    write_zip(tree, lazy_zip, files)
    lazy_zip.with_suffix(".json").write_text(json.dumps(index, sort_keys=True), encoding="utf-8")
    for p in files:
        p.unlink()
