"""How the code is put together: no import cycles in model/, app/ or buildsupport/, a light start
for the browser, the app's run-time needs outside the benchmark, small functions (Python and
JavaScript, 60 lines at most) and short files in static/, and the house's plan (app/ by role, a
section a folder, no long file, no colour written by value)."""

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
    loaded = loaded_after("import app.state.explorer, app.sections.timing.logic, app.sections")
    assert "model.timing" in loaded and "model.bench" not in loaded


LONGEST_FUNCTION = 60  # lines, from its `def` (or `function`) to its last line
LONGEST_STATIC_FILE = 400  # lines of a file of the page's shell (static/)
PYTHON_CODE = [
    *(p for folder in ("app", "model", "buildsupport") for p in (ROOT / folder).rglob("*.py")),
    ROOT / "build.py",
]


def long_python_functions(paths) -> list[str]:
    """'path:name (n lines)' for every function or method longer than LONGEST_FUNCTION (the AST's span)."""
    return [
        f"{p.relative_to(ROOT) if p.is_relative_to(ROOT) else p.name}:{n.name} ({n.end_lineno - n.lineno + 1} lines)"
        for p in paths
        for n in ast.walk(ast.parse(p.read_text(encoding="utf-8")))
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.end_lineno - n.lineno + 1 > LONGEST_FUNCTION
    ]


def test_no_function_over_60_lines():
    assert len(PYTHON_CODE) > 50 and "__pycache__" not in {part for p in PYTHON_CODE for part in p.parts}
    assert long_python_functions(PYTHON_CODE) == []


def test_the_python_check_sees_a_long_function(tmp_path):
    (tmp_path / "long.py").write_text("def f():\n" + "    x = 1\n" * 60, encoding="utf-8")
    (tmp_path / "short.py").write_text("def g():\n" + "    x = 1\n" * 59, encoding="utf-8")
    assert long_python_functions([tmp_path / "long.py", tmp_path / "short.py"]) == ["long.py:f (61 lines)"]


# -- JavaScript: a function's length, with a scanner that knows strings, comments and regular expressions

REGEX_AFTER = set("(,=:[!&|?{};+-*%<>~^")  # a / after one of these starts a regular expression
REGEX_AFTER_WORDS = {"return", "typeof", "case", "do", "else", "in", "of", "new", "delete", "void", "throw", "yield"}
REGEX_AFTER_WORDS |= {"await", ""}  # "": at the start of the text
JS_FUNCTION = re.compile(
    r"^[ \t]*(?:export\s+)?(?:(?:async\s+)?function\s*\*?\s*(?P<fn>[\w$]+)\s*\("
    r"|(?:(?:const|let|var)\s+)?(?P<arrow>[\w$.]+)\s*=\s*(?:async\s*)?(?:\([^()]*(?:\([^()]*\)[^()]*)*\)|[\w$]+)\s*=>\s*\{"
    r"|(?:(?:const|let|var)\s+)?(?P<expr>[\w$.]+)\s*=\s*(?:async\s+)?function\b[^(]*\("
    r"|(?:static\s+)?(?:async\s+)?(?!(?:if|for|while|switch|catch|function|return)\b)(?P<method>[\w$]+)\s*\([^()]*\)\s*\{)",
    re.M,
)


class JsCode:
    """A JavaScript text with every comment, string, template literal's text and regular expression
    blanked (newlines kept, so lines still count): what is left is code, where brackets can be matched.
    The code inside a template literal's ${...} stays code."""

    def __init__(self, text: str):
        self.text, self.out = text, list(text)
        self.holes = []  # for each open ${ of a template literal: the depth of braces inside it
        self.last = ""  # the last code character or word, to tell a regular expression from a division
        i = 0
        while i < len(text):
            i = self.step(i)
        self.code = "".join(self.out)

    def step(self, i: int) -> int:
        """Read what starts at i; return where the next thing starts."""
        text, c = self.text, self.text[i]
        if text.startswith("//", i):
            return self.blank(i, self.find("\n", i), 0, "")
        if text.startswith("/*", i):
            return self.blank(i, self.find("*/", i) + 2, 0, "")
        if c in "'\"":
            return self.blank(i + 1, self.string_end(i + 1, c), 1, "x")
        if c == "`" or (c == "}" and self.holes and self.holes[-1] == 0):
            return self.template(i)
        if c == "/" and self.last in REGEX_AFTER | REGEX_AFTER_WORDS:
            return self.blank(i + 1, self.regex_end(i + 1), 1, "x")
        if c.isalnum() or c in "_$":
            self.last = re.match(r"[\w$]+", text[i:]).group()
            return i + len(self.last)
        if c in "{}" and self.holes:
            self.holes[-1] += 1 if c == "{" else -1
        if not c.isspace():
            self.last = c
        return i + 1

    def find(self, what: str, i: int) -> int:
        j = self.text.find(what, i)
        return len(self.text) if j < 0 else j

    def blank(self, a: int, b: int, skip: int, last: str) -> int:
        """Blank a..b (not its newlines); the next thing starts `skip` after b."""
        for k in range(a, min(b, len(self.out))):
            if self.out[k] != "\n":
                self.out[k] = " "
        if last:
            self.last = last
        return b + skip

    def string_end(self, j: int, quote: str) -> int:
        while j < len(self.text) and self.text[j] not in (quote, "\n"):
            j += 2 if self.text[j] == "\\" else 1
        return j

    def regex_end(self, j: int) -> int:
        in_class = False
        while j < len(self.text) and self.text[j] != "\n" and (in_class or self.text[j] != "/"):
            in_class = (in_class or self.text[j] == "[") and self.text[j] != "]"
            j += 2 if self.text[j] == "\\" else 1
        return j

    def template(self, i: int) -> int:
        """A template literal's text, from its ` or the } that closes one of its ${...}, up to its end
        or its next ${ (whose code is read as code)."""
        if self.text[i] == "}":
            self.holes.pop()
        j = i + 1
        while j < len(self.text) and self.text[j] != "`" and not self.text.startswith("${", j):
            j += 2 if self.text[j] == "\\" else 1
        if self.text.startswith("${", j):
            self.holes.append(0)
            return self.blank(i + 1, j, 2, "(")
        return self.blank(i + 1, j, 1, "x")


def js_functions(text: str) -> list[tuple[str, int, int]]:
    """(name, first line, lines) of every named function: `function name(`, `async function name(`,
    `name = (...) => {`, `name = function (`; from its first line to its matching closing brace."""
    code = JsCode(text).code
    found = []
    for m in JS_FUNCTION.finditer(code):
        name = m.group("fn") or m.group("arrow") or m.group("expr") or m.group("method")
        start = m.end() - 1 if m.group("arrow") else code.index("{", matching(code, code.index("(", m.start())))
        end = matching(code, start)
        first = code.count("\n", 0, m.start() + (len(m.group()) - len(m.group().lstrip()))) + 1
        found.append((name, first, code.count("\n", 0, end) + 2 - first))
    return found


def matching(code: str, at: int) -> int:
    """The index of the bracket that closes the one at `at` (in JsCode's code)."""
    pairs = {"(": ")", "{": "}", "[": "]"}
    depth, close = 0, pairs[code[at]]
    for k in range(at, len(code)):
        if code[k] == code[at]:
            depth += 1
        elif code[k] == close:
            depth -= 1
            if depth == 0:
                return k
    raise ValueError(f"unclosed {code[at]} at {at}")


def long_static_files_and_js_functions(folder: Path) -> list[str]:
    """Files of `folder` over LONGEST_STATIC_FILE lines, and JavaScript functions over LONGEST_FUNCTION."""
    found = []
    for p in sorted(f for f in folder.rglob("*") if f.is_file()):
        text = p.read_text(encoding="utf-8", errors="replace")
        if (lines := len(text.splitlines())) > LONGEST_STATIC_FILE:
            found.append(f"{p.relative_to(ROOT)} ({lines} lines)")
        if p.suffix in (".js", ".mjs"):
            found += [
                f"{p.relative_to(ROOT)}:{name} ({n} lines)" for name, _, n in js_functions(text) if n > LONGEST_FUNCTION
            ]
    return found


def test_the_javascript_scanner_finds_functions_and_their_ends():
    text = """const re = /[{]/g, s = "{", t = '}' // {
/* { */
async function first(a, b = {x: 1}) {
  const u = `a ${b.x + `${"{"}`} {`
  if (a / 2 > 1) return { y: a }
}
const second = async (p, {q}) => {
  return p.replace(/\\}/g, "")
}
obj.third = function (z) { return z }
items.map((x) => { return x })
class Slices {
  async paint(view) {
    if (view) { return 1 }
  }
}
"""
    assert js_functions(text) == [("first", 3, 4), ("second", 7, 3), ("obj.third", 10, 1), ("paint", 13, 3)]


def test_no_js_function_over_60_lines_in_app():
    """The app's own components and the sandbox's host (app/**/*.js) keep to the same length."""
    assert [
        f"{p.relative_to(ROOT)}:{name} ({n} lines)"
        for p in sorted(APP.rglob("*.js"))
        for name, _, n in js_functions(p.read_text(encoding="utf-8"))
        if n > LONGEST_FUNCTION
    ] == []


def test_no_long_file_or_js_function_in_static():
    """The page's shell (static/) keeps files to 400 lines and functions to 60."""
    assert long_static_files_and_js_functions(ROOT / "static") == []


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
