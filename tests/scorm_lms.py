"""An LMS's side of SCORM for the tests and the docs' screenshots: scorm-again (npm, pinned), the runtime
LMSs embed, in a host page (tests/scorm_host.html) that creates its Scorm12API or Scorm2004API and
launches an unzipped package in an iframe of its origin, as Moodle or Canvas do.

    with lms_host(write_packages(site, folder)) as url:    # http://127.0.0.1:PORT/host.html
        page.goto(url); page.evaluate("launch('2004', null, '?lang=es&embed=1')")
        frame = player(page); ...; record(page)             # the learner's record, as the LMS keeps it
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
import zipfile
from pathlib import Path

import build
from app.i18n import tr
from app.sections.quiz import logic as quiz
from tests.browser import ROOT, open_card
from tests.npm_pins import npm_file

SCORM_AGAIN = ("scorm-again", "3.4.3", "f182724b4614c34a616a92d7e4d8967392013c5fae74116db98a5c5a11db5edb")
FOLDER = {"1.2": "v12", "2004": "v2004"}  # where the host page finds each package (scorm_host.html)
QUIZ_CARD = "Comprueba tu intuición: cinco preguntas y un reto"


@contextlib.contextmanager
def lms_host(packages: dict):
    """The LMS's origin: the host page, scorm-again, and each package ({version: zip}) unzipped in its
    folder; yields the host page's URL."""
    folder = Path(tempfile.mkdtemp(prefix="kv-lms-"))
    try:
        for version, path in packages.items():
            with zipfile.ZipFile(path) as z:
                z.extractall(folder / FOLDER[version])
        for name in ("scorm12.min.js", "scorm2004.min.js"):
            (folder / name).write_bytes(npm_file(*SCORM_AGAIN, f"package/dist/{name}"))
        shutil.copy(ROOT / "tests" / "scorm_host.html", folder / "host.html")
        server = build.serve_in_thread(folder, 0)
        try:
            yield server.url + "host.html"
        finally:
            server.shutdown()
            server.server_close()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def player(page):
    """The package's page in the player's frame (same origin)."""
    return page.wait_for_selector("#player iframe").content_frame()


def record(page) -> dict:
    return page.evaluate("record()")


def wait_record(page, js: str, timeout: int = 30000) -> dict:
    """Wait until the learner's record `r` satisfies `js`; the record."""
    page.wait_for_function(f"(() => {{ const r = record(); return {js}; }})()", timeout=timeout)
    return record(page)


def answer_quiz(frame, right: int) -> None:
    """The quiz's questions answered in order, the first `right` of them right, the rest wrong (the
    options are shown in the order of the default seed: app/sections/quiz/logic.py order)."""
    open_card(frame, QUIZ_CARD)
    radios = frame.locator("input[type=radio]")
    radios.first.wait_for()
    shown, first = quiz.order(0), 0
    for i, (qid, options, good) in enumerate(quiz.QUESTIONS):
        pick = good if i < right else next(o for o in options if o != good)
        radios.nth(first + shown[qid].index(pick)).check()
        frame.locator(f"[data-testid=quiz-{qid}]").wait_for()
        first += len(options)


def step(frame) -> None:
    frame.get_by_role("button", name=tr("es", "step"), exact=True).first.click()
