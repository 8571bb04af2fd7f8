"""The challenge: the reader's own attention of one token against the cache.

The reader writes `atencion(q, K, V)` (or `attention`, `atencao`); the page runs it in the
reader's browser, in the code sandbox (app/sandbox), on copies of the real q_t, K and V
of one block and head at the current position, and compares what comes back with the
model's own attention output, computed here. No Panel here, and no reader code either:
this module only builds the request and judges the answer.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...sandbox import Answer, encode_array

NAMES = ("atencion", "attention", "atencao")
TOLERANCE = 1e-10

TEMPLATE = {
    "es": '''import numpy as np

def atencion(q, K, V):
    """q: ({dk},) consulta del token actual; K, V: (t, {dk}) la caché de una cabeza.
    Devuelve la salida de la atención: ({dk},)."""
    # tu código aquí
    return np.zeros({dk})
''',
    "en": '''import numpy as np

def attention(q, K, V):
    """q: ({dk},) the current token's query; K, V: (t, {dk}) one head's cache.
    Return the attention output: ({dk},)."""
    # your code here
    return np.zeros({dk})
''',
    "pt": '''import numpy as np

def atencao(q, K, V):
    """q: ({dk},) a consulta do token actual; K, V: (t, {dk}) a cache de uma cabeça.
    Devolve a saída da atenção: ({dk},)."""
    # o seu código aqui
    return np.zeros({dk})
''',
}

SOLUTION = {
    "es": """import numpy as np

def atencion(q, K, V):
    s = K @ q / np.sqrt(q.shape[0])      # (t,) una puntuación por clave guardada
    w = np.exp(s - s.max())
    w = w / w.sum()                      # softmax
    return w @ V                         # (d_k,) la mezcla de los valores guardados
""",
    "en": """import numpy as np

def attention(q, K, V):
    s = K @ q / np.sqrt(q.shape[0])      # (t,) one score per cached key
    w = np.exp(s - s.max())
    w = w / w.sum()                      # softmax
    return w @ V                         # (d_k,) the mix of the cached values
""",
    "pt": """import numpy as np

def atencao(q, K, V):
    s = K @ q / np.sqrt(q.shape[0])      # (t,) uma pontuação por chave guardada
    w = np.exp(s - s.max())
    w = w / w.sum()                      # softmax
    return w @ V                         # (d_k,) a mistura dos valores guardados
""",
}


def template(lang: str, d_head: int) -> str:
    """The starting code in the page's language, for heads of d_head numbers."""
    return TEMPLATE.get(lang, TEMPLATE["es"]).format(dk=d_head)


def payload(code: str, q, K, V) -> dict:
    """The sandbox's request (app.sandbox.runner.run_json): the code, the functions it may
    define, and copies of the numbers."""
    return {"code": code, "entry": list(NAMES), "args": [encode_array(q), encode_array(K), encode_array(V)]}


@dataclass
class Verdict:
    """What the page tells the reader about one check."""

    kind: str  # right | wrong | error | problem | stopped | crashed | unavailable | busy | garbled
    diff: float | None = None  # largest |yours - model's|
    answer: Answer | None = None
    shape: tuple | None = None  # what their function returned, when it is not (d_k,)
    problem: str = ""  # no_function | not_numbers | too_big | wrong_shape


def judge(answer: Answer, expected) -> Verdict:
    """Compare the sandbox's answer with the model's own output."""
    expected = np.asarray(expected, dtype=np.float64)
    simple = {
        "timeout": "stopped",
        "crashed": "crashed",
        "unavailable": "unavailable",
        "busy": "busy",
        "garbled": "garbled",
        "error": "error",
        "problem": "problem",
    }
    if answer.status in simple:
        return Verdict(simple[answer.status], answer=answer, shape=answer.shape, problem=answer.problem)
    value = answer.value
    if value is None or value.shape != expected.shape:
        return Verdict(
            "problem", answer=answer, shape=None if value is None else tuple(value.shape), problem="wrong_shape"
        )
    with np.errstate(invalid="ignore"):
        diff = float(np.max(np.abs(value - expected)))
    if not np.isfinite(diff):
        diff = float("inf")
    return Verdict("right" if diff <= TOLERANCE else "wrong", diff=diff, answer=answer)
