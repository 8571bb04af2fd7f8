"""The challenge: the reader's own attention of one token against the cache.

The reader writes `atencion(q, K, V)` (or `attention`, `atencao`); the page runs
it on the real q_t, K and V of one block and head at the current position and
compares the result with the model's own attention output. Whatever the code
does wrong comes back as its real Python error, with the line; a runaway loop
is stopped after a budget of executed lines. Nothing is stored.
"""
from __future__ import annotations

import sys
import traceback
from dataclasses import dataclass

import numpy as np

FILENAME = "<challenge>"
NAMES = ("atencion", "attention", "atencao")
LINE_BUDGET = 200_000

TEMPLATE = {
    "es": '''import numpy as np

def atencion(q, K, V):
    """q: (16,) consulta del token actual; K, V: (t, 16) la caché de una cabeza.
    Devuelve la salida de la atención: (16,)."""
    # tu código aquí
    return np.zeros(16)
''',
    "en": '''import numpy as np

def attention(q, K, V):
    """q: (16,) the current token's query; K, V: (t, 16) one head's cache.
    Return the attention output: (16,)."""
    # your code here
    return np.zeros(16)
''',
    "pt": '''import numpy as np

def atencao(q, K, V):
    """q: (16,) a consulta do token atual; K, V: (t, 16) a cache de uma cabeça.
    Devolve a saída da atenção: (16,)."""
    # o seu código aqui
    return np.zeros(16)
''',
}

SOLUTION = '''import numpy as np

def atencion(q, K, V):
    s = K @ q / np.sqrt(q.shape[0])      # (t,) one score per cached key
    w = np.exp(s - s.max())
    w = w / w.sum()                      # softmax
    return w @ V                         # (16,) the mix of the cached values
'''


class TooLong(BaseException):
    """The reader's code ran more lines than the budget (probably an endless loop). Not an
    Exception, so the reader's own `except Exception` cannot swallow it."""


@dataclass
class Result:
    ok: bool
    diff: float | None = None          # largest |yours - model's|
    error_type: str | None = None
    error_message: str | None = None
    line: int | None = None            # line of the reader's code where it failed
    problem: str | None = None         # a key for a message of ours (no function, wrong shape)
    shape: tuple | None = None


def _budget_tracer(limit: int):
    count = 0

    def tracer(frame, event, arg):
        nonlocal count
        if frame.f_code.co_filename != FILENAME:
            return None                 # only the reader's own lines count (not NumPy's)
        if event == "line":
            count += 1
            if count > limit:
                raise TooLong(f"more than {limit:,} lines executed")
        return tracer
    return tracer


def _error(e: BaseException) -> Result:
    line = None
    if isinstance(e, SyntaxError) and e.filename == FILENAME:
        line = e.lineno
    else:
        for frame in traceback.extract_tb(e.__traceback__):
            if frame.filename == FILENAME:
                line = frame.lineno
    message = e.msg if isinstance(e, SyntaxError) else str(e)
    return Result(False, error_type=type(e).__name__, error_message=message, line=line)


def run(code: str, q, K, V, expected, tolerance: float = 1e-10, line_budget: int = LINE_BUDGET) -> Result:
    """Run the reader's code and compare atencion(q, K, V) with the model's output."""
    namespace = {"np": np, "numpy": np, "__name__": "challenge"}
    previous = sys.gettrace()
    sys.settrace(_budget_tracer(line_budget))
    try:
        exec(compile(code, FILENAME, "exec"), namespace)
        fn = next((namespace[n] for n in NAMES if callable(namespace.get(n))), None)
        if fn is None:
            return Result(False, problem="no_function")
        out = fn(np.array(q), np.array(K), np.array(V))     # copies: the cache is not theirs to change
    except (Exception, SystemExit, TooLong) as e:           # SystemExit: exit() in the code
        return _error(e)
    finally:
        sys.settrace(previous)
    try:
        out = np.asarray(out, dtype=np.float64)
    except (TypeError, ValueError) as e:
        return Result(False, problem="not_numbers", error_type=type(e).__name__, error_message=str(e))
    if out.shape != np.shape(expected):
        return Result(False, problem="wrong_shape", shape=tuple(out.shape))
    diff = float(np.abs(out - expected).max())
    return Result(bool(diff <= tolerance), diff=diff)
