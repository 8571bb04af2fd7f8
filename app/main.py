"""Entry point shared by `panel serve app/explorable.py` and the static site.

    create_app(query) -> a Panel viewable

`query` is the page's URL query ("?lang=en&t=12") or Panel's session_args.
Bad parameters become notices on the page; a model that cannot be loaded
becomes a clear message instead of a crash.
"""
from __future__ import annotations

import html

import panel as pn

from model import CheckpointError
from model.threads import one_blas_thread

from . import checkpoints
from .component_files import read
from .i18n import tr
from .page import Explorable
from .session import Session
from .settings import Settings
from .state import PROMPT
from .style import CSS

def load_model():
    """The committed checkpoint, loaded once per process (sessions share it read-only)."""
    one_blas_thread()                    # under `panel serve`; nothing to do in the browser
    return checkpoints.load(None)


def settings_for(query, gpt) -> Settings:
    """The URL's settings, within the model's own window."""
    return Settings.from_query(query, n_ctx=gpt.config.n_ctx, n_prompt=len(gpt.tokenizer.encode(PROMPT)))


def create_view(query=None, gpt=None) -> Explorable:
    """The explorable for one reader (any model: the committed checkpoint by default)."""
    gpt = gpt or load_model()
    return Explorable(Session(gpt, settings_for(query, gpt)))


def use_page_template() -> None:
    """Under Panel's server: the page it sends puts the app in a <main> landmark (app/page.html)."""
    doc = pn.state.curdoc
    if doc is not None and doc.session_context is not None:
        doc.template = read("page.html")


def create_app(query=None):
    use_page_template()
    try:
        return create_view(query).layout
    except CheckpointError as e:
        lang = Settings.from_query(query).lang
        return pn.pane.HTML(f"<div class='error' role='alert'>{html.escape(tr(lang, 'model_error', message=str(e)))}"
                            f"</div>", stylesheets=[CSS], sizing_mode="stretch_width")
