"""How the code is put together: no import cycles in model/, app/ or buildsupport/, a light start
for the browser, the app's run-time needs outside the benchmark, small functions."""
import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MODEL = ROOT / "model"


def imports_of(path: Path, package: str = "model") -> set[str]:
    """The modules of its own package a file imports, at the top or inside functions."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            found |= {node.module.split(".")[0]} if node.module else {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith(package + "."):
            found.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            found |= {a.name.split(".")[1] for a in node.names if a.name.startswith(package + ".")}
    return found


def import_graph(package: str) -> dict[str, set[str]]:
    return {p.stem: imports_of(p, package) - {p.stem} for p in (ROOT / package).glob("*.py") if p.stem != "__init__"}


@pytest.mark.parametrize("package", ["model", "app", "buildsupport"])
def test_no_import_cycles(package):
    graph = import_graph(package)
    if package == "model":
        assert "checkpoint" in graph["gpt"] and "gpt" not in graph["checkpoint"]
    if package == "app":
        assert "state" in graph["session"] and "session" not in graph["state"]

    def reaches(start, node, seen):
        for nxt in graph.get(node, ()):
            if nxt == start or (nxt not in seen and reaches(start, nxt, seen | {nxt})):
                return True
        return False

    assert [m for m in graph if reaches(m, m, {m})] == []


def loaded_after(code: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", code + "\nimport sys\nprint(' '.join(sys.modules))"],
                         capture_output=True, text=True, check=True, cwd=MODEL.parent).stdout
    return {m for m in out.split() if m.startswith("model")}


def test_the_package_starts_light():
    """What the page does not need at start stays out of `import model`."""
    loaded = loaded_after("import model; model.MiniGPT.load()")
    assert loaded.isdisjoint({"model.quantize", "model.batch", "model.speculative", "model.timing",
                              "model.bench", "model.bench_extras", "model.train"}), loaded


def test_the_app_needs_nothing_from_the_benchmark():
    loaded = loaded_after("import app.state, app.lab, app.sections")
    assert "model.timing" in loaded and "model.bench" not in loaded


def test_no_function_over_60_lines():
    long = [f"{p.name}:{n.name} ({n.end_lineno - n.lineno + 1} lines)"
            for p in MODEL.glob("*.py")
            for n in ast.walk(ast.parse(p.read_text(encoding="utf-8")))
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.end_lineno - n.lineno + 1 > 60]
    assert long == []
