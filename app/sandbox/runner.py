"""Runs the reader's code inside the sandbox worker's own Pyodide (static/sandbox.js).

This file is sent as text to that worker and executed there; nothing here runs in
the app's interpreter or on a server. It only turns the reader's code and the
copies of the numbers it receives into plain data: what the code returned, the
error it raised with its line, or a problem ("no function", "not numbers").
Printed output is captured by the worker itself (capped there), so nothing the
code does to `sys.stdout` matters.

    run(code, entry=("atencion",), args=[{"shape": [16], "data": [...]}, ...])
        -> {"status": "ok", "value": {"shape": [16], "data": [...]}}
         | {"status": "error", "error": {"type": ..., "message": ..., "line": ...}}
         | {"status": "problem", "problem": "no_function" | "not_numbers" | "too_big", ...}

Plain data in, plain data out (JSON): the page checks every field it reads.
"""

from __future__ import annotations

import json
import math
import traceback

import numpy as np

FILENAME = "<code>"
MAX_MESSAGE = 2000  # characters of an error message sent back
MAX_NUMBERS = 65_536  # numbers of a returned array sent back


def to_array(spec: dict) -> np.ndarray:
    """{"shape": [...], "data": [...]} -> a fresh float64 array (the reader's own copy)."""
    return np.array(spec["data"], dtype=np.float64).reshape(spec["shape"])


def encode_number(x: float):
    """JSON has no NaN or infinity: they travel as strings."""
    if math.isfinite(x):
        return x
    return "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")


def to_plain(value) -> dict:
    """What the reader's function returned -> {"status": "ok", "value": {...}} or a problem."""
    try:
        out = np.asarray(value, dtype=np.float64)
    except BaseException as e:  # anything: a ragged list, an object whose __array__ raises
        return {"status": "problem", "problem": "not_numbers", "error": describe(e)}
    if out.size > MAX_NUMBERS:
        return {"status": "problem", "problem": "too_big", "shape": list(out.shape)}
    return {"status": "ok", "value": {"shape": list(out.shape), "data": [encode_number(float(x)) for x in out.ravel()]}}


def safe_str(e: BaseException) -> str:
    """str(e), even when the exception's own __str__ fails."""
    try:
        text = e.msg if isinstance(e, SyntaxError) and e.msg else str(e)
    except BaseException:
        text = "(the message of this exception could not be printed)"
    return text if len(text) <= MAX_MESSAGE else text[:MAX_MESSAGE] + " …"


def error_line(e: BaseException) -> int | None:
    """The line of the reader's code where it failed (the deepest one in their code)."""
    if isinstance(e, SyntaxError) and e.filename == FILENAME:
        return e.lineno
    line = None
    for frame in traceback.extract_tb(e.__traceback__):
        if frame.filename == FILENAME:
            line = frame.lineno
    return line


def describe(e: BaseException) -> dict:
    return {"type": type(e).__name__, "message": safe_str(e), "line": error_line(e)}


def find_entry(namespace: dict, names) -> object | None:
    return next((namespace[n] for n in names if callable(namespace.get(n))), None)


# The lesson's names for the model's three passes, in each language of the page.
LESSON_NAMES = {
    "es": ("llenar", "avanzar", "adelante"),
    "en": ("prefill", "step", "forward"),
    "pt": ("preencher", "avancar", "adiante"),
}


def lesson_namespace(seed: int, lang: str) -> dict:
    """What the lesson's first cell runs on: the model (a fresh copy of the checkpoint, loaded
    here in the sandbox), its tokenizer, the sampler and a generator with the page's seed."""
    from model import MiniGPT, sample

    gpt = MiniGPT.load()
    fill, step, forward = LESSON_NAMES.get(lang, LESSON_NAMES["es"])
    return {
        "gpt": gpt,
        "tokenizer": gpt.tokenizer,
        "sample": sample,
        "rng": np.random.default_rng(seed),
        fill: gpt.llenar,
        step: gpt.avanzar,
        forward: gpt.forward,
    }


def run(code: str, entry=(), args=(), lesson: dict | None = None) -> dict:
    """Run the reader's code in a fresh namespace (with `lesson`, the lesson's model and names);
    with `entry`, call the first of those functions it defines on copies of `args`. Every
    exception, BaseException included (SystemExit, KeyboardInterrupt, the reader's own
    subclasses), comes back as data."""
    namespace = {"__name__": "__reader__", "np": np, "numpy": np}
    try:
        if lesson:
            namespace.update(lesson_namespace(int(lesson.get("seed", 0)), str(lesson.get("lang", "es"))))
        exec(compile(code, FILENAME, "exec"), namespace)
        if not entry:
            return {"status": "ok", "value": None}
        fn = find_entry(namespace, entry)
        if fn is None:
            return {"status": "problem", "problem": "no_function"}
        value = fn(*[to_array(a) for a in args])
        return to_plain(value)
    except BaseException as e:
        return {"status": "error", "error": describe(e)}


def run_json(request_json: str) -> str:
    """The worker's entry point: a JSON request in, a JSON answer out."""
    request = json.loads(request_json)
    answer = run(
        request.get("code", ""), tuple(request.get("entry") or ()), request.get("args") or (), request.get("lesson")
    )
    try:
        return json.dumps(answer, allow_nan=False)
    except BaseException as e:  # should not happen: every field above is plain data
        return json.dumps(
            {"status": "error", "error": {"type": type(e).__name__, "message": safe_str(e), "line": None}}
        )
