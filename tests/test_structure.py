"""How model/ is put together: no import cycles, a light start for the browser, the app's
run-time needs outside the benchmark, small functions."""
import ast
import subprocess
import sys
from pathlib import Path

MODEL = Path(__file__).resolve().parents[1] / "model"


def imports_of(path: Path) -> set[str]:
    """The model modules a file imports, at the top or inside functions."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            found |= {node.module} if node.module else {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("model."):
            found.add(node.module.split(".")[1])
    return found


def test_no_import_cycles_in_model():
    graph = {p.stem: imports_of(p) - {p.stem} for p in MODEL.glob("*.py") if p.stem != "__init__"}
    assert "checkpoint" in graph["gpt"] and "gpt" not in graph["checkpoint"]

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
