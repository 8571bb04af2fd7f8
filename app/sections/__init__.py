"""The sections below the figure, in the page's order: one folder each.

A section's folder holds its logic (logic.py, and any module of its own: plain Python, no Panel),
its view (view.py: a base.Section, whose widgets are built when it first opens), its stylesheet
(style.css, if it has one) and, in the catalogs (app/i18n/*.po), its texts. What only a section
needs of the model (model/batch.py, model/speculative.py, model/quantize.py, model/wquant.py, another checkpoint)
is imported or fetched when it first opens, not before (tests/test_beyond.py, tests/test_smaller.py).
What sections share: base.py (plain, measuring, stepped), drawing.py (tables, plots, grids of
cells), code.py (running the reader's code), stepwise.py (a measurement in parts). Adding one:
docs/design.md.
"""

from __future__ import annotations

from .batch.view import BatchSection
from .cell.view import CellSection
from .context.view import ContextSection
from .continuous.view import ContinuousSection
from .paged.view import PagedSection
from .quantized.view import QuantizedSection
from .quiz.view import QuizSection
from .smaller.view import SmallerSection
from .speculative.view import SpeculativeSection
from .timing.view import TimingSection

SECTIONS = (
    TimingSection,  # Tus milisegundos: the lesson's timing table, measured here
    CellSection,  # Pruébalo: the lesson's first cell, and the IndexError at 65
    QuizSection,  # Comprueba tu intuición: five questions and the challenge
    ContextSection,  # ¿Cuánto contexto cabe?: the calculator
    SmallerSection,  # beyond the lesson: a smaller cache
    BatchSection,  # beyond the lesson: batching
    ContinuousSection,  # beyond the lesson: continuous batching, the slots over time
    SpeculativeSection,  # beyond the lesson: speculative decoding
    PagedSection,  # beyond the lesson: a paged cache (PagedAttention)
    QuantizedSection,  # beyond the lesson: quantized weights (8 and 4 bits, NF4)
)
