"""Entry point shared by `panel serve app/explorable.py` and the static site.

create_app(query) -> a Panel viewable; `query` is the page's URL query
("?lang=en&t=12") or a dict of lists as Panel's session_args gives it.
(Temporary stand-in while the real explorable is written.)
"""
from __future__ import annotations

import numpy as np
import panel as pn
from bokeh.models import ColumnDataSource
from bokeh.plotting import figure

from model import MiniGPT, cost


def create_app(query=None):
    gpt = MiniGPT.load()
    ids = gpt.tokenizer.encode("La Nela")
    state = {"ids": list(ids)}
    logits, cache = gpt.llenar(ids)
    state["cache"], state["z"] = cache, logits[-1]
    src = ColumnDataSource({"t": [1, 2], "c": [cost.c_cached(gpt.config, 1), cost.c_cached(gpt.config, 2)]})
    fig = figure(height=200, sizing_mode="stretch_width", title="c(t)")
    fig.vbar(x="t", top="c", width=0.8, source=src)
    text = pn.pane.Markdown("La Nela")
    button = pn.widgets.Button(name="Avanzar")

    def step(_):
        tok = int(np.argmax(state["z"]))
        try:
            state["z"] = gpt.avanzar(tok, state["cache"])
        except IndexError as e:
            text.object = f"IndexError: {e}"
            return
        state["ids"].append(tok)
        t = len(state["ids"])
        src.stream({"t": [t], "c": [cost.c_cached(gpt.config, t)]})
        text.object = gpt.tokenizer.decode(state["ids"]) + f"  (t = {t} / 64)"

    button.on_click(step)
    return pn.Column(text, button, fig, sizing_mode="stretch_width")
