"""Every repository path a comment or a docstring names exists: a file or a folder (app/figure/grid.py,
buildsupport/in_pyodide/), or a module as a dotted name (app.sections.cell.view, model.gpt, perhaps
followed by an attribute its source names: model.MiniGPT). Read: the comments and docstrings of the
Python files, the // and /* */ comments of the JavaScript, the /* */ of the stylesheets and the
<!-- --> of the HTML, in app/, model/, buildsupport/, static/, tests/ and build.py. A name is a
repository path when it starts with one of the repository's top-level folders (or is build.py) and
ends in a file suffix or a slash; an upper-case part is a placeholder (app/i18n/LANG.po) and a * a
glob: some file must match."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("app", "model", "static", "tests", "docs", "buildsupport")
SCANNED = [
    p
    for folder in ("app", "model", "buildsupport", "static", "tests")
    for p in sorted((ROOT / folder).rglob("*"))
    if p.suffix in (".py", ".js", ".mjs", ".css", ".html") and "__pycache__" not in p.parts
] + [ROOT / "build.py"]
# app/figure/grid.py, docs/, build.py (not after a letter, a dot or a slash: not dist/app/x.js, a URL's tail)
PATH = re.compile(r"(?<![\w./$-])((?:" + "|".join(FOLDERS) + r")/[\w./*-]*|build\.py\b)")
DOTTED = re.compile(r"(?<![\w./$-])((?:app|model|tests|buildsupport)(?:\.[A-Za-z_]\w*)+)")  # app.sections.cell.view
PLACEHOLDER = re.compile(r"^[A-Z][A-Z0-9_]*(?=\.|$)")  # a name that stands for any: LANG in app/i18n/LANG.po


def python_notes(text: str) -> list[tuple[int, str]]:
    """(line, text) of every comment and docstring of a Python file."""
    notes = [
        (tok.start[0], tok.string)
        for tok in tokenize.generate_tokens(io.StringIO(text).readline)
        if tok.type == tokenize.COMMENT
    ]
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                if isinstance(first.value.value, str):
                    notes.append((first.lineno, first.value.value))
    return notes


def block_notes(text: str, pattern: str) -> list[tuple[int, str]]:
    """(line, text) of every match of a comment pattern (JavaScript, CSS, HTML)."""
    return [(text.count("\n", 0, m.start()) + 1, m.group()) for m in re.finditer(pattern, text, re.S)]


def notes_of(path: Path) -> list[tuple[int, str]]:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".py":
        return python_notes(text)
    if path.suffix in (".js", ".mjs"):
        # a // comment, but not inside a string or a URL (http://): at a line's start or after code and a space
        return block_notes(text, r"/\*.*?\*/") + block_notes(text, r"(?:^|(?<=\s))//[^\n]*")
    if path.suffix == ".css":
        return block_notes(text, r"/\*.*?\*/")
    return block_notes(text, r"<!--.*?-->")


def path_exists(name: str) -> bool:
    """A file or a folder of the repository; a placeholder part or a * matches any name."""
    name = name.rstrip(".")
    if not (name.endswith("/") or re.search(r"\.\w+$", name)):
        return True  # not a path: a folder's name in a sentence ("app/ logic"), a URL's tail
    parts = [PLACEHOLDER.sub("*", part) for part in name.rstrip("/").split("/")]
    pattern = "/".join(parts)
    if "*" in pattern:
        return any(True for _ in ROOT.glob(pattern))
    return (ROOT / pattern).exists()


def module_source(parts: list[str]) -> tuple[bool, str | None]:
    """(is a module or package, its source text if it has one) for a dotted name's parts."""
    base = ROOT.joinpath(*parts)
    if base.with_suffix(".py").is_file():
        return True, base.with_suffix(".py").read_text(encoding="utf-8")
    if (base / "__init__.py").is_file():
        return True, (base / "__init__.py").read_text(encoding="utf-8")
    return base.is_dir(), None


def module_exists(name: str) -> bool:
    """A dotted module path (app.sections.cell.view), perhaps followed by an attribute its source names
    (model.MiniGPT, app.wasm.apply_patch): the longest prefix that is a module, then the first name after
    it as a word of that module's source."""
    parts = name.split(".")
    for k in range(len(parts), 0, -1):
        found, source = module_source(parts[:k])
        if found:
            return k == len(parts) or (source is not None and re.search(rf"\b{parts[k]}\b", source) is not None)
    return False


def dead_references(paths) -> list[str]:
    dead = []
    for path in paths:
        for line, note in notes_of(path):
            for m in PATH.finditer(note):
                if not path_exists(m.group(1)):
                    dead.append(f"{path.relative_to(ROOT)}:{line + note.count(chr(10), 0, m.start())}: {m.group(1)}")
            for m in DOTTED.finditer(note):
                if not module_exists(m.group(1)):
                    dead.append(f"{path.relative_to(ROOT)}:{line + note.count(chr(10), 0, m.start())}: {m.group(1)}")
    return dead


def test_every_path_a_comment_names_exists():
    assert len(SCANNED) > 150
    assert dead_references(SCANNED) == []


def test_the_check_sees_a_dead_path(tmp_path):
    probe = ROOT / "tests" / f"_reference_probe_{tmp_path.name}.py"
    probe.write_text(
        '"""See app/figure/grid.py, app/i18n/LANG.po, app/sections/*/view.py, docs/, build.py,\n'
        'model.gpt, model.MiniGPT, app.sections.cell.view, app/nothing_here.py and app.nowhere."""\n'
        "# and tests/none/ and model.gpt.no_such_name\n",
        encoding="utf-8",
    )
    try:
        dead = [r.split(": ", 1)[1] for r in dead_references([probe])]
    finally:
        probe.unlink()
    assert sorted(dead) == ["app.nowhere", "app/nothing_here.py", "model.gpt.no_such_name", "tests/none/"]
