"""The page's loader in the site: one classic script and one module, each named by its content.

- The classic script acts while index.html is parsed (static/boot.js says what, and why): CLASSIC's
  files, in their order, joined into assets/boot.<hash>.js, which index.html runs in its <head>.
- The modules (static/loader/*.js, main.js their entry) run once the page is parsed, from one file,
  assets/loader.<hash>.js, a module script: one request, not one a module (on a slow network each is a
  round trip, and each module a first paint shares its connections with). Each module is a scope of its
  own in it, run in ES modules' order (its imports first, depth first, in the order it names them), its
  exports handed to the modules that import them. No import map (the Content-Security-Policy has no
  'unsafe-inline': build.CSP).

What a module may write, so that its scope can stand for it: `import { a, b as c } from "./x.js";` of a
module of the same folder (its names may span lines), and `export` before a top-level `function`, `async
function`, `const` or `class`. Anything else (a re-export, a default, `export let`, a dynamic import,
import.meta, a statement not at a line's start), or a cycle, stops the build."""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from pathlib import Path

from .common import STATIC, BuildError

# index.html's one classic script, in this order: the URL's rules, the preview's diff and keys (which
# the modules take up too), the LMS (its resume changes the URL), what acts before the first paint, early input.
CLASSIC = ("urlquery.js", "diff.js", "keys.js", "lms.js", "boot.js", "early.js")
MODULES = STATIC / "loader"
ENTRY = "main.js"
NAME = re.compile(r"[a-z][a-z0-9_-]*\.js")
IMPORT = re.compile(r"""^import\s*\{(?P<names>[^}]*)\}\s*from\s*(?P<q>["'])\./(?P<file>[^"']*)(?P=q)\s*;?""", re.M)
EXPORT = re.compile(r"^export\s+(?=(?:async\s+function\b|function\b|const\b|class\b)\s*\*?\s*(?P<name>[\w$]+))", re.M)
# a statement the bundle cannot stand for: any other import or export, import.meta, one not at a line's start
UNSUPPORTED = re.compile(r"^(?:import|export)\b|\bimport\s*\(|\bimport\.meta\b|^[ \t]+(?:import|export)\s", re.M)


@dataclass(frozen=True)
class Loader:
    boot: str  # the classic script's URL
    entry: str  # the modules' one file's URL

    def tags(self) -> str:
        """index.html's module tag, fetched at a low priority: it runs once the page is parsed, so what the
        first paint needs (the page, its stylesheet, the classic script) comes first."""
        return f'<script type="module" src="{html.escape(self.entry)}" fetchpriority="low"></script>'


def classic_script() -> bytes:
    parts = []
    for name in CLASSIC:
        text = (STATIC / name).read_text(encoding="utf-8")
        if not text.rstrip().endswith(";"):
            raise BuildError(f"static/{name} must end with a statement's semicolon: it is joined to the next file")
        parts.append(text)
    return "\n".join(parts).encode()


def scope_name(file: str) -> str:
    return "__kv_" + file.removesuffix(".js").replace("-", "_")


def module_imports(name: str, text: str, names: set[str]) -> list[str]:
    """The modules (of `names`, the folder's) that a module imports, in its order (file names)."""
    found = []
    for m in IMPORT.finditer(text):
        if not NAME.fullmatch(m.group("file")) or m.group("file") not in names:
            raise BuildError(f"static/loader/{name}: imports {m.group('file')!r}, not a module of static/loader/")
        found.append(m.group("file"))
    rest = EXPORT.sub("", IMPORT.sub("", text))
    if bad := UNSUPPORTED.search(rest):
        line = rest[bad.start() :].splitlines()[0].strip()
        raise BuildError(f"static/loader/{name}: the build cannot bundle {line!r}")
    return found


def evaluation_order(entry: str, graph: dict[str, list[str]]) -> list[str]:
    """ES modules' order: a module after its imports, depth first, in the order it names them; a cycle
    stops the build."""
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

    visit(entry, ())
    return order


def scoped(name: str, text: str) -> str:
    """A module as a scope of the bundle: each import a destructuring of the imported module's exports,
    `export` dropped; the scope returns its exports."""

    def take(m: re.Match) -> str:
        names = [n.split(" as ") for n in (" ".join(m.group("names").split())).split(",") if n.strip()]
        pairs = ", ".join(n[0].strip() if len(n) == 1 else f"{n[0].strip()}: {n[1].strip()}" for n in names)
        return f"const {{ {pairs} }} = {scope_name(m.group('file'))};"

    exports = [m.group("name") for m in EXPORT.finditer(text)]
    inner = EXPORT.sub("", IMPORT.sub(take, text)).rstrip()
    return f"// static/loader/{name}\nconst {scope_name(name)} = (() => {{\n{inner}\nreturn {{ {', '.join(exports)} }};\n}})();\n"


def bundle(folder: Path = MODULES) -> bytes:
    """Every module of the folder in one module script (see the docstring). Every module is one the entry
    imports, directly or not: none is shipped for nothing."""
    texts = {p.name: p.read_text(encoding="utf-8") for p in sorted(folder.glob("*.js"))}
    if ENTRY not in texts:
        raise BuildError(f"static/loader/{ENTRY} not found")
    graph = {name: module_imports(name, text, set(texts)) for name, text in texts.items()}
    order = evaluation_order(ENTRY, graph)
    if unused := sorted(set(graph) - set(order)):
        raise BuildError(f"static/loader/: {', '.join(unused)} not imported by {ENTRY} (directly or not)")
    return "\n".join(scoped(name, texts[name]) for name in order).encode()


def add_loader(site) -> Loader:
    """The classic script and the modules' bundle into the site (a Site of buildsupport/site.py)."""
    boot = site.add_hashed("assets", "boot.js", classic_script())
    return Loader(boot=boot, entry=site.add_hashed("assets", "loader.js", bundle()))
