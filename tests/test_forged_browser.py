"""Under Panel's server one reader cannot stall or bloat another (app/intake.py).

A hostile reader speaks Bokeh's protocol without BokehJS (tests/forge.py), so no check of the
browser's stands in the way: it opens every section of its page, then gives every attribute of
every model of its document hostile values (huge and negative numbers, NaN and infinity, wrong
types, 1 MB strings, objects nested 40 deep) and sends events to every model. Meanwhile reader B,
in a browser, steps. Then the hostile reader's own session still answers a click, reader B's page
still works, the server's memory has grown by less than 100 MB, and its log has one line per
refusal and no traceback. Reader A forges the batch size of the report (30,000, through BokehJS
in a real page): refused the same way, and A's page goes on.
"""

from __future__ import annotations

import re
import threading
import time

import pytest
from playwright.sync_api import expect

from app.i18n import LANGS, language_names, tr
from tests.browser import chromium_missing, errors, open_all_sections, open_app, wait_t
from tests.forge import INF, NAN, RawSession, labelled
from tests.servers import panel_dev, server_lines, server_memory_mb

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
        refused = [line for line in lines if REFUSED in line]
        first = next((i for i, line in enumerate(lines) if "Traceback" in line), None)
        assert first is None, "\n".join(lines[max(0, first - 2) : first + 40])
        assert len(refused) > report["pairs"], "every hostile value is said in the log"
        assert any("RangeInput.value: outside 1..32 (30000)" in line for line in refused)
        assert all(len(line) < 600 for line in refused)
        assert growth < 100, f"the server's memory grew by {growth:.0f} MB"
