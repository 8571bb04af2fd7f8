"""The site as SCORM packages, for learning platforms (Moodle, Canvas, Blackboard, Brightspace):

    dist/scorm/kv-explorable-scorm12.zip      SCORM 1.2
    dist/scorm/kv-explorable-scorm2004.zip    SCORM 2004 4th Edition

Each holds the built site as the page needs it (index.html and the folders it loads from; no `.gz`/
`.zst` copies, which only a server that picks them could use: an LMS serves the files as they are) and
an imsmanifest.xml at its root: one shareable content object (the page), launched as
`index.html?lang=LANG&embed=1`, in one organization per language, each titled in its language; Spanish,
the page's own default, is the default organization. What the page reports to the LMS, and when:
static/lms.js, static/loader/course.js, docs/embedding.md."""

from __future__ import annotations

from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

from .common import log
from .zips import write_zip

LANGS = ("es", "en", "pt")  # the first is the default organization
PACKAGES = {"1.2": "kv-explorable-scorm12.zip", "2004": "kv-explorable-scorm2004.zip"}
# What the page needs of dist/: the page and every folder it loads from (not embed.html, the
# embedding example; not _headers or build-info.json, for static hosts and people)
NEEDED = ("index.html", "assets", "packages", "pyodide", "panel")
SKIPPED_SUFFIXES = (".gz", ".zst")
IDENTIFIER = "kv-explorable"

HEAD = {
    "1.2": (
        '<manifest identifier="{id}" version="1.0"'
        ' xmlns="http://www.imsproject.org/xsd/imscp_rootv1p1p2"'
        ' xmlns:adlcp="http://www.adlnet.org/xsd/adlcp_rootv1p2"'
        ' xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"'
        ' xsi:schemaLocation="http://www.imsproject.org/xsd/imscp_rootv1p1p2 imscp_rootv1p1p2.xsd'
        ' http://www.adlnet.org/xsd/adlcp_rootv1p2 adlcp_rootv1p2.xsd">'
        "<metadata><schema>ADL SCORM</schema><schemaversion>1.2</schemaversion></metadata>"
    ),
    "2004": (
        '<manifest identifier="{id}" version="1.0"'
        ' xmlns="http://www.imsglobal.org/xsd/imscp_v1p1"'
        ' xmlns:adlcp="http://www.adlnet.org/xsd/adlcp_v1p3"'
        ' xmlns:adlseq="http://www.adlnet.org/xsd/adlseq_v1p3"'
        ' xmlns:adlnav="http://www.adlnet.org/xsd/adlnav_v1p3"'
        ' xmlns:imsss="http://www.imsglobal.org/xsd/imsss"'
        ' xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"'
        ' xsi:schemaLocation="http://www.imsglobal.org/xsd/imscp_v1p1 imscp_v1p1.xsd'
        " http://www.adlnet.org/xsd/adlcp_v1p3 adlcp_v1p3.xsd"
        " http://www.adlnet.org/xsd/adlseq_v1p3 adlseq_v1p3.xsd"
        " http://www.adlnet.org/xsd/adlnav_v1p3 adlnav_v1p3.xsd"
        ' http://www.imsglobal.org/xsd/imsss imsss_v1p0.xsd">'
        "<metadata><schema>ADL SCORM</schema><schemaversion>2004 4th Edition</schemaversion></metadata>"
    ),
}
SCORM_TYPE = {"1.2": "adlcp:scormtype", "2004": "adlcp:scormType"}


def titles() -> dict[str, str]:
    """The page's title in each language (app/i18n)."""
    from app.i18n import tr

    return {lang: tr(lang, "title") for lang in LANGS}


def site_files(site: Path) -> list[Path]:
    """The files of the built site that the page needs (NEEDED), without precompressed copies."""
    files = []
    for name in NEEDED:
        top = site / name
        found = [top] if top.is_file() else sorted(p for p in top.rglob("*") if p.is_file())
        files += [p for p in found if not p.name.endswith(SKIPPED_SUFFIXES)]
    return files


def manifest(version: str, hrefs: list[str], names: dict[str, str]) -> str:
    """imsmanifest.xml of a package: an organization per language (LANGS[0] the default), each one item
    launching the page's resource in its language, embedded; the resource lists every file."""
    orgs = []
    for lang in LANGS:
        title = escape(names[lang])
        orgs.append(
            f'<organization identifier="org-{lang}"><title>{title}</title>'
            f'<item identifier="item-{lang}" identifierref="page" isvisible="true"'
            f" parameters={quoteattr(f'?lang={lang}&embed=1')}><title>{title}</title></item></organization>"
        )
    files = "".join(f"<file href={quoteattr(h)}/>" for h in hrefs)
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        + HEAD[version].format(id=IDENTIFIER)
        + f'<organizations default="org-{LANGS[0]}">{"".join(orgs)}</organizations>'
        + f'<resources><resource identifier="page" type="webcontent" {SCORM_TYPE[version]}="sco"'
        + f' href="index.html">{files}</resource></resources></manifest>\n'
    )


def write_packages(site: Path, out: Path | None = None, versions=tuple(PACKAGES)) -> dict[str, Path]:
    """The packages (both by default) of the built site in `site` (dist/), into out (default
    dist/scorm/): {version: path}."""
    out = out or site / "scorm"
    files = site_files(site)
    hrefs = [p.relative_to(site).as_posix() for p in files]
    names = titles()
    written = {}
    for version in versions:
        filename = PACKAGES[version]
        text = manifest(version, hrefs, names).encode("utf-8")
        written[version] = write_zip(site, out / filename, files, deflate=True, extra={"imsmanifest.xml": text})
        log(f"wrote {written[version]} ({written[version].stat().st_size / 1e6:.1f} MB, SCORM {version})")
    return written
