"""Under Panel's server one reader cannot stall or bloat another, nor reach what the page does not
offer (app/intake.py).

A hostile reader speaks Bokeh's protocol without BokehJS (tests/forge.py), so no check of the
browser's stands in the way: it opens every section of its page, then gives every attribute of
every model of its document hostile values (huge and negative numbers, NaN and infinity, wrong
types, 1 MB strings, objects nested 40 deep) and sends events to every model. Meanwhile reader B,
in a browser, steps. Then the hostile reader's own session still answers a click, reader B's page
still works, the server's memory has grown by less than 100 MB, and its log has one line per
refusal and no traceback, at most ten a second for the hostile session. Reader A forges the batch
size of the report (30,000, through BokehJS in a real page): refused the same way, and A's page goes
on. A URL with bytes that are not UTF-8 (or any other bad value) in any key, Panel's and Bokeh's own
keys included, is never a server error: the page comes with its notices and works. A forged DOM event
naming a private method is refused in a line, without a traceback.
"""

from __future__ import annotations

import json
import math
import queue
import re
import threading
import time
import urllib.error
import urllib.request

import pytest
from playwright.sync_api import expect

from app.i18n import LANGS, language_names, tr
from app.intake import LINES_PER_SECOND
from app.state.settings import Settings
from tests.browser import chromium_missing, errors, open_all_sections, open_app, wait_t
from tests.forge import INF, NAN, RawSession, labelled
from tests.servers import SERVER_OUTPUT, panel_dev, server_lines, server_memory_mb
from tests.test_urlquery import BAD_BYTES

pytestmark = pytest.mark.skipif(chromium_missing() is not None, reason=chromium_missing() or "")

REFUSED = "refused from the browser"
MiB = 1024 * 1024


def deep(n: int):
    x = {}
    for _ in range(n):
        x = {"k": x}
    return x


HOSTILE = [10**15, -1, 0.5, 2**63, NAN, INF, "x", True, None, list(range(1000)), deep(40), {"id": "p0"}]
BIG = "y" * MiB
TEXTS = ("value", "value_input", "active", "presses", "command", "response", "status", "label", "options", "title")


# The parameters of the page's own components (their Bokeh data models' classes are made at run time):
# the ones a browser may set and the ones it may not.
COMPONENT_ATTRIBUTES = (
    "presses",
    "expanded",
    "label",
    "value",
    "start",
    "end",
    "step",
    "digits",
    "command",
    "reduced_motion",
    "message",
    "lang",
    "page_state",
    "response",
    "status",
    "request",
    "wanted",
    "runtime",
    "sources",
    "files",
)


def attributes(model: dict) -> list[str]:
    """Every attribute of a model a browser could change: its class's properties when the class is
    known here (Bokeh's and Panel's), the ones it was sent with, and the components' parameters."""
    import panel.models  # noqa: F401  (registers Panel's model classes)
    from bokeh.model import Model

    cls = Model.model_class_reverse_map.get(model["name"])
    names = set(model["attributes"]) | (set(cls.properties()) if cls is not None else set(COMPONENT_ATTRIBUTES))
    return sorted(names - {"tags", "js_property_callbacks", "js_event_callbacks", "id"})


def reads_input(model: dict) -> bool:
    """A model a reader's input goes through: a widget's, or a component's data model."""
    name = model["name"]
    return (
        name.startswith("panel.models.widgets")
        or name[-1:].isdigit()
        or name
        in (
            "Toggle",
            "RadioButtonGroup",
            "RadioGroup",
            "CustomSelect",
            "TextInput",
            "TextAreaInput",
            "Spinner",
            "panel.models.browser.BrowserInfo",
        )
    )


def position(session: RawSession) -> str:
    """The text's position as the session's document has it now (t = ... / 64)."""
    session.doc = None
    texts = [m["attributes"].get("text", "") for m in session.models().values()]
    return next(re.search(r"t = \d+ / \d+", t).group(0) for t in texts if isinstance(t, str) and "tpos" in t)


def attack(url: str, report: dict) -> None:
    """A session of its own, every section open; every attribute of every model, every hostile value;
    some 1 MB strings; events to every model. Counts what the server answered in `report`; then one
    reader's click: the session still answers."""
    with RawSession(url, timeout=300) as s:
        s.patch([(mid, "presses", 1) for mid in s.models()])  # refused but by the sections' buttons
        deadline = time.monotonic() + 300
        while True:  # every card open: its button says expanded once the section is built (app/components)
            s.doc = None
            models = s.models()
            cards = [
                m["attributes"] for m in models.values() if m["attributes"].get("name", "").startswith("Disclosure")
            ]
            if cards and all(card.get("expanded") for card in cards):
                break
            left = deadline - time.monotonic()
            assert left > 0, f"{sum(bool(c.get('expanded')) for c in cards)} of {len(cards)} open"
            s.next_push(timeout=left)  # the server builds the rest at its next ticks, and sends what it built
        report["models"] = len(models)
        pairs = [(mid, attr) for mid, m in models.items() for attr in attributes(m)]
        inputs = {(mid, attr) for mid, attr in pairs if reads_input(models[mid])}
        report["pairs"], report["inputs"] = len(pairs), len(inputs)
        # every hostile value for what takes a reader's input; one of them (in turn) for the rest; 1 MB
        # for the inputs' values and texts, and for one attribute of every tenth model
        events = [(mid, attr, value) for mid, attr in sorted(inputs) for value in HOSTILE]
        events += [(mid, attr, BIG) for mid, attr in sorted(inputs) if attr in TEXTS]
        events += [
            (mid, attr, HOSTILE[i % len(HOSTILE)]) for i, (mid, attr) in enumerate(pairs) if (mid, attr) not in inputs
        ]
        events += [(mid, attributes(m)[0], BIG) for mid, m in list(models.items())[::10]]
        # clicks to every model, and UI events no model listens to (before the page said it was ready)
        report["answers"].append(
            s.events(
                [
                    (mid, name, values)
                    for mid in models
                    for name, values in (("button_click", None), ("tap", {"x": NAN, "y": "x"}))
                ]
            )
        )
        batch, big = [], 0
        for event in events:
            batch.append(event)
            big += event[2] is BIG
            if len(batch) == 1000 or big == 4:
                report["answers"].append(s.patch(batch))
                batch, big = [], 0
        report["answers"].append(s.patch(batch))
        report["answers"].append(
            s.raw_patch(
                '{"events": [{"kind": "RootAdded", "model": {"type": "object", '
                '"name": "Div", "id": "forged", "attributes": {"text": "x"}}}]}'
            )
        )
        s.ready()  # as a page would, once: now the session takes clicks
        s.doc = None
        models = s.models()  # a click on every model, every button included
        report["answers"].append(
            s.events(
                [
                    (mid, name, values)
                    for mid in models
                    for name, values in (("button_click", None), ("tap", {"x": NAN, "y": "x"}))
                ]
            )
        )
        reset, step = (
            [mid for mid, m in models.items() if str(m["attributes"].get("label")) in names][0]
            for names in ({tr(lang, "reset") for lang in LANGS}, {tr(lang, "step") for lang in LANGS})
        )
        s.event(reset, "button_click")
        before = position(s)
        s.event(step, "button_click")
        report["positions"] = before, position(s)
    report["done"] = True


def wait_for(session: RawSession, what, want) -> None:
    """Until what(session) == want, reading the session's document again at each message the server
    sends it (the server sends one when the session's page changes)."""
    while what(session) != want:
        session.next_push(timeout=120)


def valid_floods(url: str, reader_b) -> None:
    """Valid work from a session of its own: the issue's 2,000 clicks in one message (Reiniciar, then 62 x
    Avanzar, repeated), coalesced into one reset and the 46 steps after the last one (app/state/
    commands.py); then five language switches in five messages, of which the session's page makes the
    last (app/state/session.py's switch). Reader B steps while each is pending."""
    with RawSession(url, "lang=es") as c:
        c.ready()
        models = c.models()
        (reset,), (step,) = labelled(models, "reset")[:1], labelled(models, "step")[:1]
        message = (([reset] + [step] * 62) * 32)[:2000]
        assert c.events([(mid, "button_click", None) for mid in message]) == "OK"
        reader_b.step()
        wait_for(c, position, "t = 48 / 64")  # as the 2,000 clicks one by one leave it
        switch = [mid for mid, m in models.items() if m["attributes"].get("labels") == list(language_names().values())]
        for lang in ("en", "pt", "en", "pt", "en"):
            assert c.patch([(mid, "active", LANGS.index(lang)) for mid in switch]) == "OK"
        reader_b.step()
        wait_for(c, step_label, tr("en", "step"))


def step_label(session: RawSession) -> str:
    """The label of the session's Avanzar, in the language its page has now."""
    session.doc = None
    models = session.models()
    return models[labelled(models, "step")[0]]["attributes"]["label"]


class Stepper:
    """A reader who steps, and starts over at the window's end."""

    def __init__(self, page):
        self.page, self.t = page, 2
        self.button = page.get_by_role("button", name="Avanzar")

    def step(self):
        if self.t == 64:
            self.page.get_by_role("button", name="Reiniciar").first.click()
            self.t = 2
        else:
            self.button.click()
            self.t += 1
        wait_t(self.page, self.t)


def test_a_hostile_session_cannot_stall_or_bloat_the_server(browser):
    with panel_dev() as url:
        a, _ = open_app(browser, url, "?lang=es")
        wait_t(a, 2)
        open_all_sections(a)
        b, _ = open_app(browser, url, "?lang=es")
        wait_t(b, 2)
        reader_b = Stepper(b)
        reader_b.step()
        server_lines(url)
        memory_before = server_memory_mb(url)
        started = time.monotonic()

        report = {"answers": [], "done": False}
        attacker = threading.Thread(target=attack, args=(url, report), daemon=True)
        attacker.start()
        during = 0  # B's steps answered while the attack is under way
        while attacker.is_alive():
            reader_b.step()
            during += attacker.is_alive()
        attacker.join(600)
        assert report["done"], "the attack did not finish"
        assert during >= 5, f"only {during} of reader B's steps were answered during the attack"
        assert report["pairs"] > 1000 and all(x == "OK" for x in report["answers"]), [
            x for x in report["answers"] if x != "OK"
        ][:3]
        assert report["positions"] == ("t = 2 / 64", "t = 3 / 64")  # the hostile session still works

        # The report's forged batch size, through BokehJS in A's own page.
        a.evaluate("""() => {
          const doc = Bokeh.documents[0];
          for (const m of doc.all_models) {
            if (m.data && m.data.end === 32 && 'value' in m.data) m.data.value = 30000;
          }
        }""")
        for _ in range(3):
            reader_b.step()

        # Both pages still work: A steps and resets (its sections are open: the text's position is the
        # page's first), B goes on; neither page saw an error.
        position_a = expect(a.locator(".tpos").first)
        for t_a in (3, 4, 5):
            a.get_by_role("button", name="Avanzar", exact=True).click()
            position_a.to_have_text(f"t = {t_a} / 64", timeout=60000)
        a.get_by_role("button", name="Reiniciar", exact=True).click()
        position_a.to_have_text("t = 2 / 64", timeout=60000)
        reader_b.step()
        batch = a.locator("[data-testid=batch-state]")
        assert batch.get_attribute("data-b") == "8"  # the forged size changed nothing
        valid_floods(url, reader_b)
        assert errors(a) == [] and errors(b) == []

        growth = server_memory_mb(url) - memory_before
        lines = server_lines(url)
        seconds = time.monotonic() - started
        refused = [line for line in lines if REFUSED in line]
        first = next((i for i, line in enumerate(lines) if "Traceback" in line), None)
        assert first is None, "\n".join(lines[max(0, first - 2) : first + 40])
        # every refusal is counted: a line of its own, or in the line that says how many were not logged
        untold = [
            int(m.group(1)) for m in map(re.compile(r"(\d+) more refusals in the last second").search, refused) if m
        ]
        assert untold and len(refused) - len(untold) + sum(untold) > report["pairs"], "every hostile value is counted"
        forged = [line for line in refused if "RangeInput.value: outside 1..32 (30000)" in line]  # reader A's
        assert forged and all(len(line) < 600 for line in refused)
        # the hostile session's lines: at most ten in each second it ran, and the second after it
        assert len(refused) - len(forged) <= LINES_PER_SECOND * (math.ceil(seconds) + 1), (len(refused), seconds)
        assert growth < 100, f"the server's memory grew by {growth:.0f} MB"


# Every key a reader's URL may carry: the app's, Panel's (theme, template) and Bokeh's (which Panel's
# server acts on: bokeh-absolute-url is where the page loads its scripts from), and an unknown one.
URL_KEYS = (*Settings.URL_KEYS, "template", "bokeh-absolute-url", "bokeh-app-path", "bokeh-autoload-element", "k")


def get(url: str) -> tuple[int, str]:
    """An HTTP GET as a browser's address bar sends it: (status, body); (0, "") if the server closed
    the connection without an answer."""
    try:
        with urllib.request.urlopen(url, timeout=60) as r:
            return r.status, r.read().decode("utf-8")
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode("utf-8", "replace")
    except (urllib.error.URLError, ConnectionError) as e:
        return 0, repr(e)


def page_token(html: str) -> str:
    """The session's token in the page Panel's server sends (its websocket's credentials)."""
    return json.loads('"' + re.search(r'token\\?":\\?"([^"\\]+)', html).group(1) + '"')


def notices(session: RawSession) -> tuple[int, str]:
    """How many URL parameters the session's page says it ignored (three named, then "and n more"),
    and its texts that say so (in Spanish: the URL's lang is a bad value too)."""
    texts = [m["attributes"].get("text", "") for m in session.models().values()]
    said = " ".join(t for t in texts if isinstance(t, str) and "de la URL" in t)
    more = re.search(r"Y (\d+) parámetros? más de la URL", said)
    return said.count("Parámetro de la URL ignorado") + (int(more.group(1)) if more else 0), said


def lines_until(url: str, text: str, timeout: float = 30) -> list[str]:
    """The server's lines since the last read, up to one with `text` (its output reaches the test
    through a pipe: a line printed before a reply may be read after it)."""
    lines, deadline = [], time.monotonic() + timeout
    while not any(text in line for line in lines) and time.monotonic() < deadline:
        try:
            line = SERVER_OUTPUT[url].get(timeout=deadline - time.monotonic())
        except queue.Empty:
            break
        if line is None:  # the server ended
            break
        lines.append(line.rstrip("\n"))
    return lines + server_lines(url)


def test_no_url_value_is_a_server_error(served_url):
    """Each kind of bad bytes in every key at once (repeated, and as a key): the page, its notices for
    the app's keys, no traceback; the first such page steps. Bokeh's own session keys: a 400. A URL
    past the server's limit: no answer, and the server answers the next request."""
    url = served_url
    server_lines(url)
    huge = "x" * 8000 + "%C0%AF" * 1000  # 14 kB: three of them stay under Tornado's 64 kB
    cases = [(bad, URL_KEYS, True) for bad in BAD_BYTES[:-1]] + [(huge, ("theme", "bokeh-absolute-url"), False)]
    for i, (bad, keys, as_key) in enumerate(cases):
        query = "&".join(f"{key}={bad}" for key in keys) + f"&lang=en&lang={bad}"
        status, html = get(f"{url}?{query}" + (f"&{bad}=1&{bad}={bad}" if as_key else ""))
        assert status == 200, (bad[:40], status, html[:300])
        with RawSession(url, token=page_token(html)) as s:
            count, said = notices(s)
            # a notice for each key but Bokeh's own (dropped before anything reads them), lang, the bad key
            told = {key for key in keys if not key.startswith("bokeh-")} | {"lang"}
            assert count == len(told) + as_key, (bad[:40], said[:300])
            if i == 0:  # the page works
                s.ready()
                step = next(mid for mid, m in s.models().items() if m["attributes"].get("label") == "Avanzar")
                before = position(s)
                s.event(step, "button_click")
                assert (before, position(s)) == ("t = 2 / 64", "t = 3 / 64")
    status, html = get(f"{url}?bokeh-absolute-url=http://elsewhere.example/")  # where Panel loads scripts from
    assert status == 200 and "elsewhere" not in html
    for key in ("bokeh-session-id", "bokeh-token"):
        assert get(f"{url}?{key}={BAD_BYTES[0]}")[0] == 400
    assert get(f"{url}?theme={'%C0%AF' * 20000}")[0] not in (200, 500)  # 120 kB: past Tornado's 64 kB
    status, _html = get(f"{url}/autoload.js?bokeh-autoload-element=x&theme={BAD_BYTES[0]}&t={BAD_BYTES[3]}")
    assert status == 200
    assert get(f"{url}?theme=dark")[0] == 200
    lines = server_lines(url)
    bad_lines = [line for line in lines if "Traceback" in line or " 500 " in line or "Error" in line]
    assert not bad_lines, bad_lines[:5]


def test_a_forged_token_s_arguments_are_checked_too(served_url):
    """The session's token (which a browser writes: Bokeh signs none here) carries the URL's arguments
    for a session the websocket opens: values of any type, surrogates, lists empty or mixed."""
    from bokeh.util.token import generate_jwt_token, generate_session_id

    arguments = {
        "theme": "\ud800",
        "lang": [b"\xc0\xaf", 3],
        "t": [],
        "seed": [None, {"x": 1}, b"5"],
        "mode": 7,
        "bokeh-absolute-url": [b"http://elsewhere/"],
        "k\udfff": [b"\xff"],
    }
    token = generate_jwt_token(generate_session_id(), extra_payload={"arguments": arguments})
    server_lines(served_url)
    with RawSession(served_url, token=token) as s:
        count, said = notices(s)
        assert count == 3 and position(s) == "t = 2 / 64", said[:300]  # theme, lang, k? (seed's last is 5)
    assert not [line for line in server_lines(served_url) if "Traceback" in line or "Error" in line]


PRIVATE = [("process", "event"), ("", "init__"), ("", "setstate__"), ("server", "destroy")]


def test_a_forged_dom_event_is_refused_without_a_traceback(served_url):
    """A DOM event for a node and type no component declares, naming Panel's private methods
    (_process_event, __init__, __setstate__, _server_destroy), to every component: refused in a line
    each, the reply OK with no traceback, and the session still steps."""
    server_lines(served_url)
    with RawSession(served_url) as s:
        s.ready()
        components = [mid for mid, m in s.models().items() if m["name"].endswith("ReactiveHTML")]
        assert len(components) >= 5
        for node, kind in PRIVATE:
            forged = [
                (mid, "dom_event", {"node": node, "data": data})
                for mid in components
                for data in ({"type": "map", "entries": [["type", kind]]}, {"type": "event"})
            ]
            assert s.events(forged) == "OK"
        step = next(mid for mid, m in s.models().items() if m["attributes"].get("label") == "Avanzar")
        before = position(s)
        s.event(step, "button_click")
        assert (before, position(s)) == ("t = 2 / 64", "t = 3 / 64")
    lines = lines_until(served_url, "does not declare the DOM event")
    assert not [line for line in lines if "Traceback" in line or "RecursionError" in line], lines[:5]
    assert any("does not declare the DOM event 'process' 'event'" in line for line in lines), lines[:12]
