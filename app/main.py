"""Entry point shared by `panel serve app/explorable.py` and the static site.

    create_app(query) -> a Panel viewable

`query` is the page's URL query ("?lang=en&t=12") or Panel's session_args.
Bad parameters become notices on the page; a model that cannot be loaded
becomes a clear message instead of a crash.
"""

from __future__ import annotations

import html
import logging
import traceback
from pathlib import Path

import panel as pn
from bokeh.document.events import DocumentPatchedEvent

from model import CheckpointError
from model.threads import one_blas_thread

from . import intake
from .i18n import tr
from .page import Explorable
from .state import checkpoints
from .state.explorer import PROMPT
from .state.session import Session
from .state.settings import Settings
from .style import CSS, theme_css

UNORDERED = "changed outside session.dispatch"
APP = str(Path(__file__).resolve().parent)
log = logging.getLogger(__name__)


def load_model():
    """The committed checkpoint, loaded once per process (sessions share it read-only)."""
    one_blas_thread()  # under `panel serve`; nothing to do in the browser
    return checkpoints.load(None)


def settings_for(query, gpt) -> Settings:
    """The URL's settings, within the model's own window."""
    return Settings.from_query(query, n_ctx=gpt.config.n_ctx, n_prompt=len(gpt.tokenizer.encode(PROMPT)))


def create_view(query=None, gpt=None) -> Explorable:
    """The explorable for one reader (any model: the committed checkpoint by default)."""
    gpt = gpt or load_model()
    return Explorable(Session(gpt, settings_for(query, gpt)))


def use_page_template() -> None:
    """Under Panel's server: the page it sends puts the app in a <main> landmark and declares the
    palette, light and dark, once for the document (app/page.html)."""
    doc = pn.state.curdoc
    if intake.served(doc):
        page = (Path(__file__).with_name("page.html")).read_text(encoding="utf-8")
        doc.template = page.replace("/* kv-theme */", theme_css())


def where_in_the_app() -> str:
    """The innermost line of app/ on the stack (which callback made the change)."""
    frames = [f for f in traceback.extract_stack() if f.filename.startswith(APP) and f.filename != __file__]
    return f"{Path(frames[-1].filename).name}:{frames[-1].lineno} {frames[-1].name}" if frames else "?"


def watch_the_order() -> None:
    """Under Panel's server the app's changes reach the browser through Panel's `unlocked`
    (app/state/session.py's dispatch), in the order they were made. A change made outside it takes
    Bokeh's own path, written only once the callback has ended: it can arrive before the models
    it names, which Panel's path sent ("reference ... isn't known" in the browser). Such a change
    is said in the server's log, with where it was made (the browser tests read it)."""
    doc = pn.state.curdoc
    if not intake.served(doc):  # the static site sends each change as a message of its own
        return

    def check(event):
        if isinstance(event, DocumentPatchedEvent) and event.setter is None:  # not the browser's own
            what = f"{type(getattr(event, 'model', None)).__name__}.{getattr(event, 'attr', '')}"
            log.warning("%s: %s at %s", UNORDERED, what, where_in_the_app())

    pn.state.onload(lambda: doc.on_change(check))  # once the page has its first document


def create_app(query=None):
    return create_app_and_session(query)[0]


def create_app_and_session(query=None):
    """create_app's layout, and the reader's Session in it (None: the model could not be loaded)."""
    doc = pn.state.curdoc
    if intake.served(doc):  # Panel's server: a browser's changes and its URL pass its gates
        intake.install()
        intake.check_session_arguments(doc)
    use_page_template()
    watch_the_order()
    try:
        view = create_view(query)
        return view.layout, view.session
    except CheckpointError as e:
        lang = Settings.from_query(query).lang
        error = pn.pane.HTML(
            f"<div class='error' role='alert'>{html.escape(tr(lang, 'model_error', message=str(e)))}</div>",
            stylesheets=[CSS],
            sizing_mode="stretch_width",
        )
        return error, None
