"""The page's loader in the site: one classic script and the ES modules, each named by its content.

- The classic script acts while index.html is parsed (static/boot.js says what, and why): CLASSIC's
  files, in their order, joined into assets/boot.<hash>.js, which index.html runs in its <head>.
- The modules (static/loader/*.js, main.js their entry) run once the page is parsed: each is written
  to assets/loader/<name>.<hash>.js with its import specifiers ("./x.js") rewritten to the hashed names.
  A module's hash is taken after its rewrite, in dependency order, so it changes when a module it
  imports (or one they import) changes, and every name can be cached forever. No import map (the
  Content-Security-Policy has no 'unsafe-inline': build.CSP); index.html preloads every module
  (<link rel="modulepreload">) so that the browser fetches them all at once, not import by import.

Only static imports with a relative specifier of the same folder are allowed (`import {a} from
"./x.js";`, `export {a} from "./x.js";`); anything else, or a cycle, stops the build."""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from pathlib import Path

from .common import STATIC, BuildError, hashed_name

# index.html's one classic script, in this order: the URL's rules, the preview's diff and keys (which
# the modules take up too), what acts before the first paint, early input.
CLASSIC = ("urlquery.js", "diff.js", "keys.js", "boot.js", "early.js")
MODULES = STATIC / "loader"
ENTRY = "main.js"
FOLDER = "assets/loader"

# A static import or re-export, at a line's start (its names may span lines): group "spec" is the specifier.
STATEMENT = re.compile(
    r"""^(?P<head>(?:import|export)\b[^;'"`]*?\bfrom\s*|import\s*)(?P<q>["'])(?P<spec>[^"']*)(?P=q)""", re.M
)
SPECIFIER = re.compile(r"\./([a-z][a-z0-9_-]*\.js)")
# what the build does not rewrite: a dynamic import, import.meta, a statement not at a line's start
UNSUPPORTED = re.compile(r"\bimport\s*\(|\bimport\.meta\b|^[ \t]+(?:import|export)\b[^;]*?\bfrom\b", re.M)


@dataclass(frozen=True)
class Loader:
    boot: str  # the classic script's URL
    entry: str  # main.js's
    modules: tuple[str, ...]  # every module's, in dependency order (the entry last)

    def tags(self) -> str:
        """index.html's module tags: every module preloaded, then the entry."""
        preload = "".join(f'<link rel="modulepreload" href="{html.escape(url)}">\n' for url in self.modules)
        return f'{preload}<script type="module" src="{html.escape(self.entry)}"></script>'


def classic_script() -> bytes:
    parts = []
    for name in CLASSIC:
        text = (STATIC / name).read_text(encoding="utf-8")
        if not text.rstrip().endswith(";"):
            raise BuildError(f"static/{name} must end with a statement's semicolon: it is joined to the next file")
        parts.append(text)
    return "\n".join(parts).encode()


def module_imports(name: str, text: str, names: set[str]) -> list[str]:
    """The modules (of `names`, the folder's) that a module imports, in its order (file names)."""
    if bad := UNSUPPORTED.search(text):
        raise BuildError(f"static/loader/{name}: the build cannot rewrite {bad.group(0).strip()!r}")
    found = []
    for m in STATEMENT.finditer(text):
        spec = SPECIFIER.fullmatch(m.group("spec"))
        if not spec or spec.group(1) not in names:
            raise BuildError(f"static/loader/{name}: imports {m.group('spec')!r}, not a module of static/loader/")
        found.append(spec.group(1))
    statements = len(re.findall(r"^import\b", text, re.M)) + len(re.findall(r"^export\b[^;]*?\bfrom\b", text, re.M))
    if statements != len(found):
        raise BuildError(
            f"static/loader/{name}: an import the build does not read ({statements} statements, read {len(found)})"
        )
    return found


def dependency_order(graph: dict[str, list[str]]) -> list[str]:
    """Every module after the ones it imports; a cycle stops the build (its hashes could not be taken)."""
    order, state = [], {}

    def visit(name: str, path: tuple[str, ...]) -> None:
        if state.get(name) == "done":
            return
        if state.get(name) == "visiting":
            raise BuildError("static/loader/: an import cycle, " + " -> ".join((*path, name)))
        state[name] = "visiting"
        for dep in graph[name]:
            visit(dep, (*path, name))
        state[name] = "done"
        order.append(name)

    for name in sorted(graph):
        visit(name, ())
    return order


def reached(entry: str, graph: dict[str, list[str]]) -> set[str]:
    seen, todo = set(), [entry]
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo += graph[name]
    return seen


def hashed_modules(folder: Path = MODULES) -> dict[str, tuple[str, bytes]]:
    """name -> (hashed name, rewritten text), for every module of the folder, in dependency order. Every
    module is one the entry imports (directly or not): none is shipped, and preloaded, for nothing."""
    texts = {p.name: p.read_text(encoding="utf-8") for p in sorted(folder.glob("*.js"))}
    if ENTRY not in texts:
        raise BuildError(f"static/loader/{ENTRY} not found")
    graph = {name: module_imports(name, text, set(texts)) for name, text in texts.items()}
    if unused := sorted(set(graph) - reached(ENTRY, graph)):
        raise BuildError(f"static/loader/: {', '.join(unused)} not imported by {ENTRY} (directly or not)")
    out: dict[str, tuple[str, bytes]] = {}
    for name in dependency_order(graph):

        def rewrite(m: re.Match) -> str:
            dep = SPECIFIER.fullmatch(m.group("spec")).group(1)
            return f"{m.group('head')}{m.group('q')}./{out[dep][0]}{m.group('q')}"

        data = STATEMENT.sub(rewrite, texts[name]).encode()
        out[name] = (hashed_name(name, data), data)
    return out


def add_loader(site) -> Loader:
    """The classic script and the modules into the site (a Site of buildsupport/site.py)."""
    boot = site.add_hashed("assets", "boot.js", classic_script())
    urls = {name: site.add(f"{FOLDER}/{hashed}", data) for name, (hashed, data) in hashed_modules().items()}
    return Loader(boot=boot, entry=urls[ENTRY], modules=tuple(urls.values()))
