"""What a browser sends passes two gates (app/intake.py): the document's door (only what the app
listens to, bounded in size and depth) and the parameters' declarations (type, bounds, choices).
Here the patches are written by hand, as a hostile page would, and applied to a real document of
the explorable (no browser, no server: the same door the static site's worker uses)."""

from __future__ import annotations

import json
import logging

import pytest
from bokeh.document import Document

from app import intake
from app.main import create_view
from tests.forge import INF, NAN


@pytest.fixture(scope="module")
def page():
    """The explorable in a document, every section open, the gates installed."""
    view = create_view("?t=10")
    doc = Document()
    view.layout.server_doc(doc)
    for section in view.sections:
        section.card.collapsed = False
    return view, doc


@pytest.fixture
def refusals(caplog):
    """The lines the gates logged during the test (and a check that none carried a traceback)."""
    caplog.set_level(logging.WARNING, logger="app.intake")
    lines = []
    yield lines
    for r in caplog.records:
        assert r.exc_info is None and "Traceback" not in r.getMessage()
        lines.append(r.getMessage())


def bokeh_model(view, widget, doc):
    """The Bokeh model of a Panel object in this document; for a ReactiveHTML component, its data model."""
    models = [m for m, _parent in widget._models.values() if m.document is doc]
    model = models[0]
    return getattr(model, "data", model)


def change(doc, model, attr, value) -> int:
    return intake.apply_patch(
        doc, {"events": [{"kind": "ModelChanged", "model": {"id": model.id}, "attr": attr, "new": value}]}
    )


def section(view, key):
    return next(s for s in view.sections if s.key == key)


@pytest.mark.parametrize("forged", [30000, -1, 0, 33, NAN, INF, "abc", True, [1, 2], {"x": 1}, None])
def test_a_forged_batch_size_is_refused_and_changes_nothing(page, refusals, caplog, forged):
    view, doc = page
    batch = section(view, "batch")
    before = batch.current
    change(doc, bokeh_model(view, batch.size, doc), "value", forged)
    assert batch.choice.B == 8 and batch.current is before  # nothing rebuilt
    assert any(intake.REFUSED in r.getMessage() for r in caplog.records)


def test_a_value_within_the_declaration_is_taken(page, refusals):
    view, doc = page
    batch = section(view, "batch")
    assert change(doc, bokeh_model(view, batch.size, doc), "value", 3) == 1
    assert batch.choice.B == 3 and batch.current.B == 3
    change(doc, bokeh_model(view, batch.size, doc), "value", 8)
    assert batch.choice.B == 8


def test_the_sliders_bounds_are_the_declarations(page):
    """One declaration: the slider's start and end, and what the gate accepts."""
    view, _doc = page
    batch, spec = section(view, "batch"), section(view, "speculative")
    assert (batch.size.start, batch.size.end) == batch.choice.param.B.bounds == batch.size.param.value.bounds
    assert (spec.k.start, spec.k.end) == spec.choice.param.k.bounds == spec.k.param.value.bounds
    speed = view.controls.speed
    assert (speed.start, speed.end) == view.session.settings.param.speed.bounds == speed.param.value.bounds


@pytest.mark.parametrize("forged", [0, 9, 1e9, NAN, "4"])
def test_a_forged_k_is_refused(page, refusals, forged):
    view, doc = page
    spec = section(view, "speculative")
    change(doc, bokeh_model(view, spec.k, doc), "value", forged)
    assert spec.choice.k == 4 and spec.current.k == 4
    assert refusals is not None


@pytest.mark.parametrize("attr, forged", [("value", 2**40), ("value", -5), ("value", NAN), ("value", "1e3")])
def test_a_forged_seed_is_refused(page, refusals, attr, forged):
    view, doc = page
    seed = view.advanced.seed
    change(doc, bokeh_model(view, seed, doc), attr, forged)
    assert view.session.settings.seed == 0


def test_a_forged_choice_is_refused(page, refusals, caplog):
    """Panel maps a radio group's index to its option: an index past the options is refused, not a
    traceback, and so is a negative one (Python would read -1 as the last option)."""
    view, doc = page
    switch = view.controls.mode_switch
    for forged in (99, -3, -1, "x", 1.5):
        change(doc, bokeh_model(view, switch, doc), "active", forged)
        assert view.session.settings.mode == "cache"
    assert sum(intake.REFUSED in r.getMessage() for r in caplog.records) == 5


def test_a_toggle_is_pressed_and_a_group_index_checked(page):
    """`active` is a toggle's bool (Animar: taken) and a group's index (-1: refused)."""
    view, _doc = page
    intake.check_param(view.controls.play_button, "active", True)
    intake.check_param(view.controls.play_button, "active", False)
    with pytest.raises(intake.Refused):
        intake.check_param(view.controls.mode_switch, "active", -1)


def test_what_the_app_does_not_listen_to_is_never_applied(page, refusals, caplog):
    view, doc = page
    plot = view.bars.fig if hasattr(view.bars, "fig") else next(m for m in doc.models if type(m).__name__ == "Plot")
    ranges = [m for m in doc.models if type(m).__name__ == "Range1d"]
    texts = [m for m in doc.models if type(m).__name__ == "HTML"]
    before = (ranges[0].start, texts[0].text)
    assert change(doc, ranges[0], "start", -1e308) == 0
    assert change(doc, texts[0], "text", "<script>alert(1)</script>") == 0
    assert change(doc, plot, "visible", False) == 0
    assert (ranges[0].start, texts[0].text) == before
    # the slider's own bounds and label: the browser may set its value only
    batch = section(view, "batch")
    data = bokeh_model(view, batch.size, doc)
    change(doc, data, "end", 10**9)
    change(doc, data, "label", "x" * 1000)
    assert batch.size.end == 32 and "x" * 1000 != batch.size.label
    assert len(caplog.records) >= 5


def test_a_methods_name_is_no_property(page, refusals):
    """Bokeh's lookup finds any attribute of a model's class; a method's name sent as an attribute is
    refused like any other unknown attribute, in one line (it raised an AttributeError in the server's
    handler)."""
    view, doc = page
    for model in list(doc.models):
        for name in ("update", "lookup", "select", "references", "properties", "apply_theme"):
            assert change(doc, model, name, 1) == 0


@pytest.mark.parametrize(
    "event",
    [
        {"kind": "RootAdded", "model": {"type": "object", "name": "Div", "id": "forged1", "attributes": {"text": "x"}}},
        {"kind": "RootRemoved", "model": {"id": "p1"}},
        {"kind": "TitleChanged", "title": "x" * 100},
        {"kind": "ColumnDataChanged", "model": {"id": "p1"}, "attr": "data", "data": {}},
        {"kind": "MessageSent", "msg_type": "anything", "msg_data": {}},
        "not an event",
        42,
        None,
    ],
)
def test_other_kinds_of_change_are_refused(page, refusals, event):
    _view, doc = page
    roots, title = list(doc.roots), doc.title
    assert intake.apply_patch(doc, {"events": [event]}) == 0
    assert list(doc.roots) == roots and doc.title == title


def test_sizes_and_depths_are_bounded(page, refusals):
    view, doc = page
    editor = section(view, "cell").editor
    data = bokeh_model(view, editor, doc)
    code = "print('hola')\n" * 100
    assert change(doc, data, "value", code) == 1 and editor.value == code
    assert change(doc, data, "value", "x" * (intake.MAX_BYTES + 1)) == 0 and editor.value == code
    deep = []
    for _ in range(intake.MAX_DEPTH + 2):
        deep = [deep]
    assert change(doc, data, "value", deep) == 0
    sandbox = bokeh_model(view, view.sandbox, doc)
    answer = {"id": 0, "status": "done", "answer": "x" * 2_000_000}  # the sandbox's answer may be large
    assert intake.too_big(answer, intake.LARGER["response"]) is None
    assert change(doc, sandbox, "response", {"id": 0, "status": "done", "answer": "x" * 4_000_000}) == 0


def test_a_click_is_an_event_the_app_listens_to(page, refusals):
    view, doc = page
    step = bokeh_model(view, view.controls.step_button, doc)
    t = view.ex.t
    click = {
        "kind": "MessageSent",
        "msg_type": "bokeh_event",
        "msg_data": {
            "type": "event",
            "name": "button_click",
            "values": {"type": "map", "entries": [["model", {"id": step.id}]]},
        },
    }
    assert intake.apply_patch(doc, {"events": [click]}) == 1
    assert view.ex.t == t + 1
    # the same event for a model that does not listen to it
    plot = next(m for m in doc.models if type(m).__name__ == "Plot")
    click["msg_data"]["values"]["entries"][0][1] = {"id": plot.id}
    assert intake.apply_patch(doc, {"events": [click]}) == 0
    assert view.ex.t == t + 1
    view.controls.do("reset")


def click_on(model) -> dict:
    return {
        "kind": "MessageSent",
        "msg_type": "bokeh_event",
        "msg_data": {
            "type": "event",
            "name": "button_click",
            "values": {"type": "map", "entries": [["model", {"id": model.id}]]},
        },
    }


def test_a_messages_clicks_are_coalesced_and_bounded(page, refusals, caplog):
    """The issue's 2,000 clicks in one message (Reiniciar, then 62 x Avanzar, repeated) go to the figure's
    controls, which run one reset and the 46 steps after the last one (app/state/commands.py); other UI
    events past MAX_EVENTS of one message are refused, in a line each."""
    view, doc = page
    reset, step = (bokeh_model(view, b, doc) for b in (view.controls.reset_button, view.controls.step_button))
    message = (([click_on(reset)] + [click_on(step)] * 62) * 32)[:2000]
    view.controls.draining, before = True, view.ex.t  # as under Panel's server: they wait for the next tick
    assert intake.apply_patch(doc, {"events": message}) == 2000
    assert view.ex.t == before and 0 < len(view.controls.pending) <= view.controls.HELD  # queued, coalesced past HELD
    view.controls.drain()  # the next tick (and the ticks after it: here at once)
    assert view.ex.t == 48 and view.ex.error is None and view.controls.pending == []
    run = bokeh_model(view, section(view, "cell").restore_button, doc)
    caplog.clear()
    assert intake.apply_patch(doc, {"events": [click_on(run)] * (intake.MAX_EVENTS + 8)}) == intake.MAX_EVENTS
    assert sum(f"more than {intake.MAX_EVENTS} UI events" in r.getMessage() for r in caplog.records) == 8
    view.controls.do("reset")


def test_refusals_say_what_and_why_in_one_line(page, refusals, caplog):
    view, doc = page
    change(doc, bokeh_model(view, section(view, "batch").size, doc), "value", 30000)
    line = caplog.records[-1].getMessage()
    assert "\n" not in line and "RangeInput.value" in line and "outside 1..32" in line and "30000" in line
    change(doc, bokeh_model(view, section(view, "cell").editor, doc), "value", "y" * 200_000)
    line = caplog.records[-1].getMessage()
    assert len(line) < 400 and "larger than" in line


def test_the_one_line_filter_drops_bokehs_traceback():
    record = logging.LogRecord(
        "bokeh.server.views.ws",
        logging.ERROR,
        __file__,
        1,
        "Unhandled exception receiving a message: %r: %r",
        (RecursionError("deep"), "[" * 10_000),
        exc_info=(RecursionError, RecursionError("deep"), None),
    )
    assert intake.OneLine().filter(record)
    assert record.exc_info is None and len(record.getMessage()) < 300 and intake.REFUSED in record.getMessage()
    json.dumps(record.getMessage())


def test_a_browser_sets_what_a_reader_can_do_and_nothing_else(page, refusals, caplog):
    """A button's label, a radio group's options, a pane's text, a layout's children: never from the
    browser, even where Panel would take them."""
    view, doc = page
    step = view.controls.step_button
    change(doc, bokeh_model(view, step, doc), "label", "x")
    change(doc, bokeh_model(view, step, doc), "disabled", True)
    switch = view.controls.mode_switch
    change(doc, bokeh_model(view, switch, doc), "labels", ["a", "b", "c"])
    assert step.name == "Avanzar" and not step.disabled and list(switch.options) == ["Con caché", "Sin caché"]
    assert sum("the browser may not set it" in r.getMessage() for r in caplog.records) == 3


def test_a_value_the_linked_setting_refuses_is_refused(page, refusals, caplog):
    """The mode switch's widget would take None; the setting it is linked to would not (a traceback
    in Panel's link): refused before either sees it."""
    view, doc = page
    switch = view.controls.mode_switch
    model = bokeh_model(view, switch, doc)
    assert change(doc, model, "active", None) == 0
    assert view.session.settings.mode == "cache" and switch.value == "cache"
    assert change(doc, model, "active", 1) == 1 and view.session.settings.mode == "full"
    view.session.settings.mode = "cache"


def served_page():
    """A view in a document as Panel's server gives a session's (a session context); the caller sets
    `doc._session_context = lambda: None` when done."""

    class Context:  # what Bokeh's server gives a session's document
        session = None

    view = create_view("")
    doc = Document()
    view.layout.server_doc(doc)
    context = Context()
    doc._session_context = lambda: context  # Bokeh keeps a weak reference: called to read it
    return view, doc


def test_events_before_the_page_is_ready_are_refused(refusals):
    """Under Panel's server an event that comes before BokehJS's document_ready would run outside the
    document's lock (a traceback): refused until the page says it is ready."""
    from panel.io.state import state

    view, doc = served_page()
    step = bokeh_model(view, view.controls.step_button, doc)
    click = {
        "kind": "MessageSent",
        "msg_type": "bokeh_event",
        "msg_data": {
            "type": "event",
            "name": "button_click",
            "values": {"type": "map", "entries": [["model", {"id": step.id}]]},
        },
    }
    try:
        assert intake.apply_patch(doc, {"events": [click]}) == 0
        state._connected[doc] = True
        assert intake.check_event(doc, click) is None
    finally:
        state._connected.pop(doc, None)
        doc._session_context = lambda: None


def test_bokehjs_own_reports_are_dropped_without_a_word(page, caplog):
    """A plot's measured size and an automatic range, as BokehJS sends them: not applied, not logged;
    the same properties with a hostile value: logged."""
    from bokeh.models import DataRange1d, Plot

    _view, doc = page
    plot = next(m for m in doc.models if isinstance(m, Plot))
    auto = next((m for m in doc.models if isinstance(m, DataRange1d)), None)
    caplog.set_level(logging.WARNING, logger="app.intake")
    assert change(doc, plot, "inner_width", 640) == 0
    if auto is not None:
        assert change(doc, auto, "end", 3.5) == 0
    assert not caplog.records
    change(doc, plot, "inner_width", "x" * 100)
    assert len(caplog.records) == 1


def dom_event(model, node, data) -> dict:
    """A ReactiveHTML component's DOM event as BokehJS sends it (`data` as written, Bokeh's encoding)."""
    return {
        "kind": "MessageSent",
        "msg_type": "bokeh_event",
        "msg_data": {
            "type": "event",
            "name": "dom_event",
            "values": {"type": "map", "entries": [["model", {"id": model.id}], ["node", node], ["data", data]]},
        },
    }


def typed(kind: str) -> dict:
    return {"type": "map", "entries": [["type", kind]]}


# What Panel would call for them: _process_event (endless recursion), __init__, __setstate__, _server_destroy.
PRIVATE = [("process", typed("event")), ("process", {"type": "event"}), ("", typed("init__"))]
PRIVATE += [("", typed("setstate__")), ("server", typed("destroy")), ("*", typed("*"))]


@pytest.mark.parametrize("node, data", PRIVATE)
def test_a_forged_dom_event_reaches_no_method_of_the_page(page, refusals, caplog, node, data):
    """The page's components declare no DOM event for the server: every one is refused in a line."""
    view, doc = page
    card = next(s for s in view.sections if s.key == "batch").card
    button = next(m for m, _parent in card.button._models.values() if m.document is doc)
    assert intake.apply_patch(doc, {"events": [dom_event(button, node, data)]}) == 0
    assert intake.REFUSED in caplog.records[-1].getMessage()


def test_a_dom_event_a_component_declares_is_taken():
    """A component's declared DOM events (`_dom_events`, a `${method}` binding) reach it; another
    node or event type of the same component does not."""
    import param
    from panel.reactive import ReactiveHTML

    class Declared(ReactiveHTML):
        presses, keys = param.Integer(default=0), param.Integer(default=0)
        _template = '<div id="box"><button id="btn" onclick="${_press}">x</button></div>'
        _dom_events = {"box": ["keydown"]}

        def _press(self, event):
            self.presses += 1

        def _box_keydown(self, event):
            self.keys += 1

    widget, doc = Declared(), Document()
    widget.server_doc(doc)
    model = next(m for m, _parent in widget._models.values())
    assert intake.declared_dom_events(widget) == {("btn", "onclick"), ("box", "keydown")}
    sent = [("btn", "onclick"), ("box", "keydown"), ("btn", "keydown"), ("box", "onclick"), ("process", "event")]
    applied = [intake.apply_patch(doc, {"events": [dom_event(model, n, typed(k))]}) for n, k in sent]
    assert applied == [1, 1, 0, 0, 0] and (widget.presses, widget.keys) == (1, 1)


class Clock:
    """The quota's time, moved by the test (no waiting)."""

    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_sessions_refusals_take_at_most_ten_lines_a_second(refusals, caplog):
    """Under Panel's server (a session's document), 250 refusals in one message: ten lines; the first
    line of the next second says how many more there were."""

    view, doc = served_page()
    try:
        clock = Clock()
        intake.quota_for(doc).clock = clock
        step = bokeh_model(view, view.controls.step_button, doc)
        forged = [{"kind": "ModelChanged", "model": {"id": step.id}, "attr": "label", "new": i} for i in range(250)]
        assert intake.apply_patch(doc, {"events": forged}) == 0
        assert len(caplog.records) == intake.LINES_PER_SECOND
        clock.now += 0.5
        change(doc, step, "label", "x")
        assert len(caplog.records) == intake.LINES_PER_SECOND
        clock.now += 0.6
        change(doc, step, "label", "y")
        said = [r.getMessage() for r in caplog.records]
        assert said[-2] == f"{intake.REFUSED}: 241 more refusals in the last second, not logged", said[-2:]
        assert "label" in said[-1] and len(said) == intake.LINES_PER_SECOND + 2
    finally:
        doc._session_context = lambda: None


def test_an_addresss_request_lines_take_at_most_ten_a_second(caplog):
    """Tornado's line for every request answered (its format): 300 requests from one address in a
    second are ten lines and a count; another address keeps its own lines."""
    from app.serverlog import RequestLines

    clock = Clock()
    lines = RequestLines(clock)
    logger = logging.getLogger("tornado.access")
    logger.addFilter(lines)
    try:
        with caplog.at_level(logging.INFO, logger="tornado.access"):
            for i in range(300):
                logger.warning("%d %s %.2fms", 404, f"GET /x{i} (10.0.0.7)", 0.5)
            logger.info("%d %s %.2fms", 200, "GET /explorable (10.0.0.8)", 3.0)
            clock.now += 1.1
            logger.warning("%d %s %.2fms", 404, "GET /y (10.0.0.7)", 0.5)
        said = [r.getMessage() for r in caplog.records]
        from_7 = [m for m in said if "(10.0.0.7)" in m]
        assert len(from_7) == intake.LINES_PER_SECOND + 1 and from_7[-1].startswith("404 GET /y")
        assert "290 more requests from 10.0.0.7 in the last second, not logged" in said
        assert any("(10.0.0.8)" in m for m in said)
    finally:
        logger.removeFilter(lines)


def test_the_static_sites_refusals_are_all_logged(page, refusals, caplog):
    """The static site's worker has one reader, the page's own: each refusal is its line."""
    view, doc = page
    step = bokeh_model(view, view.controls.step_button, doc)
    intake.apply_patch(
        doc,
        {"events": [{"kind": "ModelChanged", "model": {"id": step.id}, "attr": "label", "new": i} for i in range(30)]},
    )
    assert len(caplog.records) == 30


def test_an_error_reply_carries_no_traceback():
    """Bokeh's reply to a message it failed on names the error; the traceback (the server's files and
    lines) stays on the server."""
    from bokeh.protocol import Protocol
    from bokeh.protocol.messages.error import error as Error

    class Connection:  # what ServerConnection.error reads of its connection
        protocol = Protocol()

    message = Protocol().create("PULL-DOC-REQ")
    try:
        raise RecursionError("maximum recursion depth exceeded")
    except RecursionError as e:
        theirs = Error.create(message.header["msgid"], repr(e))
        ours = intake.plain_error(Connection(), message, repr(e))
    assert "Traceback" in theirs.content["traceback"] and __file__ in theirs.content["traceback"]
    assert (
        ours.content["traceback"] is None
        and ours.content["text"] == "RecursionError('maximum recursion depth exceeded')"
    )
    assert ours.header["reqid"] == message.header["msgid"] and ours.msgtype == "ERROR"


@pytest.mark.parametrize(
    "given, taken",
    [
        ({"theme": [b"\xc0\xaf"]}, {"theme": ["\ufffd\ufffd"]}),  # an overlong slash: not UTF-8
        ({"t": [b"1", b"5"], "lang": [b"en"]}, {"t": ["5"], "lang": ["en"]}),  # a key given twice: its last value
        ({"bokeh-absolute-url": [b"http://elsewhere/"], "bokeh-app-path": [b"/x"]}, {}),  # Bokeh's own keys
        ({"k\ud800": ["v\udfff"], "seed": "7", "x": [], "y": [1, None]}, {"k?": ["v?"], "seed": ["7"]}),  # a token's
        ({"\x00": [b"\x00" * 5]}, {"\x00": ["\x00" * 5]}),  # NUL is text: the app's rules say it is wrong
        ("not a dict", {}),
    ],
)
def test_the_urls_arguments_are_text_before_anything_reads_them(given, taken):
    checked = intake.url_arguments(given)
    assert {k: [v.decode("utf-8") for v in vs] for k, vs in checked.items()} == taken
    for values in checked.values():
        assert all(isinstance(v, bytes) for v in values) and len(values) == 1
