"""Entry point shared by `panel serve app/explorable.py` and the static site.

    create_app(query) -> a Panel viewable

`query` is the page's URL query ("?lang=en&t=12") or Panel's session_args.
Bad parameters become notices on the page; a model that cannot be loaded
becomes a clear message instead of a crash.
"""
from __future__ import annotations

import html

import panel as pn

from model import CheckpointError, MiniGPT
from model.threads import one_blas_thread

from .i18n import tr
from .state import Explorer, Settings
from .urlstate import parse
from .views import CSS, ExplorableView

_MODEL = None


def load_model():
    """The committed checkpoint, loaded once per process (sessions share it read-only)."""
    global _MODEL
    if _MODEL is None:
        one_blas_thread()                # under `panel serve`; nothing to do in the browser
        gpt = MiniGPT.load()
        for a in gpt.params.values():    # shared by every session: nobody writes to it
            a.flags.writeable = False
        _MODEL = gpt
    return _MODEL


def create_view(query=None) -> ExplorableView:
    url = parse(query)
    explorer = Explorer(load_model(), Settings(seed=url.seed, top_p=url.top_p, mode=url.mode))
    if url.t is not None:
        explorer.advance_to(url.t)
    return ExplorableView(explorer, url)


def create_app(query=None):
    try:
        return create_view(query).layout
    except CheckpointError as e:
        lang = parse(query).lang
        return pn.pane.HTML(f"<div class='error' role='alert'>{html.escape(tr(lang, 'model_error', message=str(e)))}"
                            f"</div>", stylesheets=[CSS], sizing_mode="stretch_width")
