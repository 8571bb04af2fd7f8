"""The reader's code runs in the reader's browser, in a sandbox of its own.

`CodeSandbox` is a small Panel component: its browser side (app/sandbox/host.js) owns a
Web Worker with its own Pyodide and NumPy (static/sandbox.js) and runs there the code the
reader types, on copies of the numbers it needs. Never on the server under `panel serve`,
never in the app's own interpreter on the static site: whatever the code does (loop
forever, sleep, recurse until the interpreter dies, allocate gigabytes, import the
model and zero it, post messages) happens to that worker, which the page throws away
after `limit_s` seconds or a crash and replaces with a fresh one.

What comes back is plain data, and `read_answer` trusts nothing of it beyond the shape it
expects: any other message is reported as garbled. The app then checks the numbers
against the model's own output, computed in its own interpreter.

    sandbox.warm()                                  # when the reader opens a section with code
    sandbox.submit(request, on_answer, key=...)     # on_answer(Answer, run number), once

One run at a time, each in an interpreter of its own (app/sandbox/host.js): a run asked for while
another runs waits in line (`queued`), one per key (a section's newer request replaces its own
older one), and starts when the other ends (at the latest at its time limit).
"""

from __future__ import annotations

import base64
import json
import math
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import param
from panel.reactive import ReactiveHTML

HERE = Path(__file__).resolve().parent
APP = HERE.parent
ROOT = APP.parent
LIMIT_S = 5  # seconds a reader's run may take (stated on the page)
MAX_OUTPUT_LINES = 200
MAX_NUMBERS = 65_536
MAX_TEXT = 2000


@dataclass
class Answer:
    """What the sandbox said about one run, checked."""

    status: str  # ok | error | problem | timeout | crashed | unavailable | busy | garbled
    value: np.ndarray | None = None  # what the reader's function returned
    error_type: str = ""
    message: str = ""
    line: int | None = None
    problem: str = ""  # no_function | not_numbers | too_big
    shape: tuple | None = None
    output: list[str] = field(default_factory=list)
    more: int = 0  # printed lines beyond those kept
    limit_s: float | None = None
    url: str = ""


def _text(x, limit: int = MAX_TEXT) -> str:
    s = x if isinstance(x, str) else ""
    return s if len(s) <= limit else s[:limit] + " …"


def _count(x) -> int:
    return x if isinstance(x, int) and not isinstance(x, bool) and 0 <= x < 10**12 else 0


def _number(x) -> float:
    if isinstance(x, bool) or not isinstance(x, (int, float, str)):
        raise ValueError("not a number")
    if isinstance(x, str):
        return {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}[x]
    return float(x)


def read_array(spec) -> np.ndarray:
    """{"shape": [...], "data": [...]} from the sandbox -> an array, or ValueError."""
    if not isinstance(spec, dict):
        raise ValueError("not an array")
    shape, data = spec.get("shape"), spec.get("data")
    if (
        not isinstance(shape, list)
        or len(shape) > 8
        or not all(isinstance(n, int) and not isinstance(n, bool) and 0 <= n <= MAX_NUMBERS for n in shape)
    ):
        raise ValueError("bad shape")
    if not isinstance(data, list) or len(data) != math.prod(shape) or len(data) > MAX_NUMBERS:
        raise ValueError("bad data")
    return np.array([_number(x) for x in data], dtype=np.float64).reshape(shape)


def _read_result(result, base: Answer) -> Answer:
    """The runner's own answer (app/sandbox/runner.py), inside a 'done' message."""
    status = result.get("status") if isinstance(result, dict) else None
    if status == "ok":
        value = result.get("value")
        base.status, base.value = "ok", None if value is None else read_array(value)
    elif status == "error" and isinstance(result.get("error"), dict):
        err = result["error"]
        line = err.get("line")
        base.status, base.error_type, base.message = "error", _text(err.get("type"), 100), _text(err.get("message"))
        base.line = line if isinstance(line, int) and not isinstance(line, bool) and line > 0 else None
    elif status == "problem" and result.get("problem") in ("no_function", "not_numbers", "too_big"):
        base.status, base.problem = "problem", result["problem"]
        shape = result.get("shape")
        base.shape = tuple(shape) if isinstance(shape, list) and all(isinstance(n, int) for n in shape) else None
        err = result.get("error") if isinstance(result.get("error"), dict) else {}
        base.error_type, base.message = _text(err.get("type"), 100), _text(err.get("message"))
    else:
        raise ValueError("unexpected answer")
    return base


def read_answer(response) -> Answer:
    """Check a response from the page's sandbox host; anything unexpected is 'garbled'."""
    if not isinstance(response, dict):
        return Answer("garbled")
    status = response.get("status")
    if status in ("timeout", "crashed", "unavailable", "busy"):
        limit = response.get("limit_s")
        return Answer(
            status,
            message=_text(response.get("message")),
            url=_text(response.get("url"), 500),
            limit_s=float(limit) if isinstance(limit, (int, float)) and not isinstance(limit, bool) else None,
        )
    if status != "done" or not isinstance(response.get("answer"), str):
        return Answer("garbled")
    output = response.get("output")
    base = Answer(
        "ok",
        output=[_text(s, 600) for s in output[:MAX_OUTPUT_LINES]] if isinstance(output, list) else [],
        more=_count(response.get("more")) + max(0, len(output) - MAX_OUTPUT_LINES if isinstance(output, list) else 0),
    )
    try:
        return _read_result(json.loads(response["answer"]), base)
    except (ValueError, TypeError, KeyError, RecursionError):
        return Answer("garbled", output=base.output, more=base.more)


def encode_array(a) -> dict:
    a = np.asarray(a, dtype=np.float64)
    return {"shape": list(a.shape), "data": [float(x) for x in a.ravel()]}


def encode_files(paths: dict[str, Path]) -> dict[str, str]:
    return {name: base64.b64encode(p.read_bytes()).decode("ascii") for name, p in paths.items() if p.is_file()}


def lazy_importer_files() -> dict[str, str]:
    """What the sandbox needs to fetch the modules the static site left out of its standard library
    (app/lazyimport.py, through app/wasm.py's fetch), as the app's own worker does."""
    return encode_files({f"app/{name}": APP / name for name in ("__init__.py", "lazyimport.py", "wasm.py")})


def model_files() -> dict[str, str]:
    """The model package and its checkpoint, base64, for cells that `import model` in the sandbox
    (the sandbox gets its own copy: nothing it does reaches the app's model)."""
    import model

    pkg = Path(model.__file__).resolve().parent
    paths = sorted(pkg.glob("*.py")) + [pkg / "weights" / n for n in ("minigpt.npz", "tokenizer.json", "metrics.json")]
    return encode_files({f"model/{p.relative_to(pkg).as_posix()}": p for p in paths})


def runtime_for_panel_serve() -> dict:
    """Where the sandbox finds Pyodide when the app runs under `panel serve`: what the
    development server set ($KV_SANDBOX_RUNTIME, local files), else the Pyodide CDN of the
    version Panel pins. (The static site's loader supplies its own files instead.)"""
    configured = os.environ.get("KV_SANDBOX_RUNTIME")
    if configured:
        return json.loads(configured)
    from panel.io.convert import PYODIDE_VERSION

    base = f"https://cdn.jsdelivr.net/pyodide/{PYODIDE_VERSION}/full/"
    return {"pyodide": base + "pyodide.js", "indexURL": base, "packages": ["numpy"]}


IN_BROWSER = sys.platform == "emscripten"


class CodeSandbox(ReactiveHTML):
    """Runs the reader's code in the reader's browser; see the module's docstring."""

    wanted = param.Boolean(default=False, doc="Start the sandbox (the reader opened a section with code).")
    runtime = param.Dict(default={}, doc="Where Pyodide is, under panel serve.")
    # program text goes in a Dict: Panel passes a ReactiveHTML's string parameters through an HTML
    # sanitizer (nh3), which would escape the code's < and >.
    sources = param.Dict(default={}, doc="runner: app/sandbox/runner.py; worker: static/sandbox.js (panel serve).")
    files = param.Dict(default={}, doc="Files the sandbox writes before running code (path -> base64).")
    request = param.Dict(default={}, doc="The run asked for: id, payload (JSON), limit_s.")
    response = param.Dict(default={}, doc="Set by the browser: the answer to the request.")
    status = param.String(default="off", doc="Set by the browser: off | starting | ready | running | failed.")

    _from_browser = ("response", "status")  # app/intake.py
    _template = '<div id="sandbox" class="kv-sandbox" aria-hidden="true"></div>'
    _scripts = {
        "render": (HERE / "host.js").read_text(encoding="utf-8"),
        "wanted": "if (data.wanted) window.__kvSandboxHost.want();",
        "files": "window.__kvSandboxHost.setFiles(data.files);",
        "request": "window.__kvSandboxHost.run(data.request);",
    }

    def __init__(self, **params):
        super().__init__(**params)
        self._next = 1
        self._waiting: dict[int, object] = {}
        self._queue: list[tuple] = []  # (key, run, payload, on_answer, limit_s, on_start)
        self.limit_in_flight = LIMIT_S  # the time limit of the run in flight
        self.param.watch(self._on_response, "response")

    def warm(self, with_model: bool = False) -> None:
        """Start the sandbox now, so it is ready by the time the reader has typed."""
        if not self.sources:
            sources = {"runner": (HERE / "runner.py").read_text(encoding="utf-8")}
            updates = {}
            if IN_BROWSER:  # the static site's standard library is slimmed: the lazy importer fills it in
                updates["files"] = lazy_importer_files()
            else:
                updates["runtime"] = runtime_for_panel_serve()
                sources["worker"] = (ROOT / "static" / "sandbox.js").read_text(encoding="utf-8")
            self.param.update(updates, sources=sources)
        if with_model and "model/gpt.py" not in self.files:
            self.files = {**self.files, **model_files()}
        self.wanted = True

    @property
    def busy(self) -> bool:
        return bool(self._waiting)

    @property
    def next_run(self) -> int:
        """The number the next run will get (1, 2, ...): pages mark their results with it."""
        return self._next

    def queued(self, run: int) -> bool:
        """The run waits for another to end."""
        return any(q[1] == run for q in self._queue)

    def submit(self, payload: dict, on_answer, limit_s: float = LIMIT_S, key: str = "", on_start=None) -> int:
        """Run `payload` (for app.sandbox.runner.run_json) in the sandbox; on_answer(Answer, run number)
        when it ends. While another run is in flight it waits in line (`queued`), replacing the request
        of the same `key` that was waiting; on_start(run number) when it leaves the line. Returns the
        run's number."""
        self.warm()
        rid, self._next = self._next, self._next + 1
        payload_json = json.dumps(payload, allow_nan=False)
        if self._waiting:
            self._queue = [q for q in self._queue if q[0] != key] + [
                (key, rid, payload_json, on_answer, limit_s, on_start)
            ]
        else:
            self._start(rid, payload_json, on_answer, limit_s)
        return rid

    def _start(self, rid: int, payload_json: str, on_answer, limit_s: float) -> None:
        self._waiting[rid] = on_answer
        self.limit_in_flight = limit_s
        self.request = {"id": rid, "payload": payload_json, "limit_s": limit_s}

    def _on_response(self, event) -> None:
        response = event.new
        rid = response.get("id") if isinstance(response, dict) else None
        on_answer = self._waiting.pop(rid, None) if isinstance(rid, int) else None
        if on_answer is None:
            return
        if self._queue and not self._waiting:  # the next in line, before this answer is shown
            _key, nid, payload_json, next_answer, limit_s, on_start = self._queue.pop(0)
            self._start(nid, payload_json, next_answer, limit_s)
            if on_start is not None:
                on_start(nid)
        on_answer(read_answer(response), rid)
