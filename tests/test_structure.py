"""How the code is put together: no import cycles in model/, app/ or buildsupport/, a light start
for the browser, the app's run-time needs outside the benchmark, small functions, and the house's
plan (app/ by role, a section a folder, no long file, no colour written by value)."""

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MODEL = ROOT / "model"


def module_name(path: Path) -> str:
    """app/sections/batch/view.py -> app.sections.batch.view; app/state/__init__.py -> app.state."""
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path, package: str = "model") -> set[str]:
    """The modules of its own package a file imports, at the top or inside functions (dotted, as
    `module_name` names them; `from . import x` counts as the module x when x is one)."""
    here = module_name(path).split(".")
    if path.stem != "__init__":
        here = here[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = here[: len(here) - node.level + 1] + (node.module.split(".") if node.module else [])
            found.add(".".join(base))
            found |= {".".join(base + [a.name]) for a in node.names}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith(package + "."):
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith(package + ".")}
    return found


def import_graph(package: str) -> dict[str, set[str]]:
    """module -> the package's modules it imports (only those that exist as files)."""
    files = {module_name(p): p for p in (ROOT / package).rglob("*.py") if "__pycache__" not in p.parts}
    return {m: {x for x in imports_of(p, package) if x in files and x != m} for m, p in files.items()}


@pytest.mark.parametrize("package", ["model", "app", "buildsupport"])
def test_no_import_cycles(package):
    graph = import_graph(package)
    if package == "model":
        assert "model.checkpoint" in graph["model.gpt"] and "model.gpt" not in graph["model.checkpoint"]
    if package == "app":
        assert (
            "app.state.explorer" in graph["app.state.session"]
            and "app.state.session" not in graph["app.state.explorer"]
        )

    def reaches(start, node, seen):
        for nxt in graph.get(node, ()):
            if nxt == start or (nxt not in seen and reaches(start, nxt, seen | {nxt})):
                return True
        return False

    assert [m for m in graph if reaches(m, m, {m})] == []


def loaded_after(code: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", code + "\nimport sys\nprint(' '.join(sys.modules))"],
        capture_output=True,
        text=True,
        check=True,
        cwd=MODEL.parent,
    ).stdout
    return {m for m in out.split() if m.startswith("model")}


def test_the_package_starts_light():
    """What the page does not need at start stays out of `import model`."""
    loaded = loaded_after("import model; model.MiniGPT.load()")
    assert loaded.isdisjoint(
        {
            "model.quantize",
            "model.batch",
            "model.speculative",
            "model.timing",
            "model.bench",
            "model.bench_extras",
            "model.train",
        }
    ), loaded


def test_the_app_needs_nothing_from_the_benchmark():
    loaded = loaded_after("import app.state.explorer, app.sections.lab.logic, app.sections")
    assert "model.timing" in loaded and "model.bench" not in loaded


def test_no_function_over_60_lines():
    long = [
        f"{p.name}:{n.name} ({n.end_lineno - n.lineno + 1} lines)"
        for p in MODEL.glob("*.py")
        for n in ast.walk(ast.parse(p.read_text(encoding="utf-8")))
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.end_lineno - n.lineno + 1 > 60
    ]
    assert long == []


APP = ROOT / "app"


def test_the_app_shows_its_plan():
    """Entry points and a few subpackages at the top of app/ (issue 18): the reader's state, the
    figure's parts, the page's own components, the code sandbox, the texts, the look, the sections."""
    top = sorted(p.name for p in APP.iterdir() if p.name != "__pycache__" and p.name != "checkpoints.json")
    assert len(top) <= 16, top
    for package in ("state", "figure", "components", "sandbox", "sections", "i18n", "style"):
        assert (APP / package / "__init__.py").is_file(), package


def test_a_section_is_a_folder_and_the_page_lists_them_once():
    from app.sections import SECTIONS

    folders = sorted(p.name for p in (APP / "sections").iterdir() if p.is_dir() and p.name != "__pycache__")
    assert sorted(s.key for s in SECTIONS) == folders
    for section in SECTIONS:
        folder = APP / "sections" / section.key
        assert (folder / "view.py").is_file() and (folder / "logic.py").is_file(), folder
        assert section.__module__ == f"app.sections.{section.key}.view"
        assert section.title_key.endswith("_title")
    from app.sections.base import MeasuringSection, Section, SteppedSection

    assert all(issubclass(s, Section) for s in SECTIONS)
    assert {b for s in SECTIONS for b in s.__mro__} >= {MeasuringSection, SteppedSection}


def test_logic_knows_nothing_of_panel():
    """A section's logic, the reader's state and the sandbox's checks are plain Python: testable
    without a browser."""
    for path in [*APP.glob("sections/*/logic.py"), *APP.glob("state/*.py"), APP / "sections" / "stepwise.py"]:
        imported = {
            n.module.split(".")[0] if isinstance(n, ast.ImportFrom) and n.module else a.name.split(".")[0]
            for n in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(n, (ast.Import, ast.ImportFrom))
            for a in n.names
        }
        assert not imported & {"panel", "bokeh"}, path


def test_no_long_file_in_app():
    long = {
        str(p.relative_to(ROOT)): n
        for p in APP.rglob("*.py")
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > 600
    }
    assert long == {}


STATIC = ROOT / "static"
# A function of the page's JavaScript, as the house writes it: `function`, an arrow function with a body
# or a class method, its body opened at its line's end and closed by the first "}" at its line's indentation.
JS_FUNCTION = re.compile(
    r"(\bfunction\b[^{]*\{|=>\s*\{|^\s+(?:async\s+)?(?!(?:if|for|while|switch|catch)\b)[A-Za-z_$][\w$]*\s*\([^()]*\)\s*\{)"
    r"\s*(//.*)?$"
)


def js_functions(text: str) -> list[tuple[int, int]]:
    """(first line, lines) of every function of a JavaScript file, nested ones included (and counted in
    the one that holds them). A classic script's wrapper, `(function (...) {` in the first column, is the
    file's scope, as a module's top level is: not a function here."""
    lines = text.splitlines()
    found = []
    for i, line in enumerate(lines):
        if not JS_FUNCTION.search(line) or line.startswith("(function"):
            continue
        indent = len(line) - len(line.lstrip())
        end = next(
            j for j in range(i + 1, len(lines)) if lines[j].startswith(" " * indent + "}") and len(lines[j]) > indent
        )
        found.append((i + 1, end - i + 1))
    return found


def test_the_page_s_javascript_is_short():
    """static/ (the page's shell: the loader's classic scripts and modules, the workers): no file over
    400 lines, no function over 60 (counted with the functions it holds)."""
    files = sorted(STATIC.rglob("*.js"))
    assert len(files) > 15 and STATIC / "loader" / "main.js" in files
    long = {str(p.relative_to(ROOT)): n for p in files if (n := len(p.read_text(encoding="utf-8").splitlines())) > 400}
    assert long == {}
    functions = {p: js_functions(p.read_text(encoding="utf-8")) for p in files}
    assert len(functions[STATIC / "loader" / "slices.js"]) > 15  # the pattern sees the house's functions
    assert [
        f"{p.relative_to(ROOT)}:{at} ({n} lines)" for p, found in functions.items() for at, n in found if n > 60
    ] == []


def test_no_colour_written_by_value():
    """Every colour is a role of app/style's PALETTE: the figures read it, the stylesheets read its
    custom properties (var(--kv-...)). Only the palette itself writes colours by value."""
    import re

    written = [
        f"{p.relative_to(ROOT)}: {m}"
        for p in [*APP.rglob("*.py"), *APP.rglob("*.css"), ROOT / "static" / "style.css"]
        if p != APP / "style" / "__init__.py" and "i18n" not in p.parts
        for m in re.findall(r"#[0-9a-fA-F]{6}\b|#[0-9a-fA-F]{3}\b(?![-\w])", p.read_text(encoding="utf-8"))
    ]
    assert written == []
    from app.style import PALETTE

    used = {
        m
        for p in [*APP.rglob("*.py"), *APP.rglob("*.css"), ROOT / "static" / "style.css"]
        for m in re.findall(r'var\(--kv-([a-z0-9-]+)\)|PALETTE\["([a-z0-9-]+)"\]', p.read_text(encoding="utf-8"))
    }
    used = {a or b for a, b in used}
    assert used <= set(PALETTE), used - set(PALETTE)
