"""BokehJS's bundles, staged (buildsupport/bokehjs.py): each hands its modules to the page's loader,
which runs them in slices in the order the bundle itself would (static/loader.js `runStaged`)."""

import json
import shutil
import subprocess

import pytest

from buildsupport.bokehjs import stage_bundle
from buildsupport.common import BuildError
from buildsupport.site import UNNEEDED_SCRIPTS, package_dir

ROOT = package_dir("buildsupport").parent
JS = package_dir("bokeh") / "server" / "static" / "js"
# The bundles the page runs, in its order (buildsupport/site.py add_page_scripts; bokeh-gl is not run)
BUNDLES = [
    JS / "bokeh.min.js",
    JS / "bokeh-widgets.min.js",
    JS / "bokeh-tables.min.js",
    package_dir("panel") / "dist" / "panel.min.js",
]


def test_every_bundle_is_staged_and_the_rest_of_its_text_kept():
    assert not any(name in str(path) for path in BUNDLES for name in UNNEEDED_SCRIPTS)
    for path in BUNDLES:
        source = path.read_bytes()
        staged = stage_bundle(path.name, source).decode()
        assert "__kvStage" in staged, path.name
        # only the wrapper changes: every module's text is there as it was
        assert len(staged) - len(source) < 600, path.name
        tail = source.decode()[-200_000:]
        assert tail in staged, path.name


def test_another_wrapper_stops_the_build():
    with pytest.raises(BuildError, match="another BokehJS"):
        stage_bundle("bokeh.min.js", b"(function(root, factory) { root.Bokeh = factory(); })(this, function() {});")


@pytest.mark.skipif(shutil.which("node") is None, reason="Node.js not found (apt-get install nodejs)")
def test_the_loader_runs_every_module_in_an_order_the_bundle_would_accept(tmp_path):
    """Each staged bundle, read by the loader's own functions (tests/js/staged_order.js): every module its
    entry needs is run, each after the modules it asks for, and a module in a cycle finds the same
    modules half run as when the bundle runs itself (panel.min.js has nine such)."""
    paths = []
    for path in BUNDLES:
        out = tmp_path / path.name
        out.write_bytes(stage_bundle(path.name, path.read_bytes()))
        paths.append(str(out))
    done = subprocess.run(
        ["node", str(ROOT / "tests" / "js" / "staged_order.js")],
        input=json.dumps({"loader": str(ROOT / "static" / "loader.js"), "bundles": paths}),
        capture_output=True,
        text=True,
        check=True,
    )
    report = json.loads(done.stdout)
    assert [r["handed"] for r in report] == [True] * len(BUNDLES)
    assert [r["plugin"] for r in report] == [False, True, True, True]
    for r in report:
        assert r["staged"] == r["natural"] > 0, r  # the same modules run
        assert r["differ"] == [], r  # each finds the same modules half run
    assert report[0]["modules"] > 400 and report[0]["ordered"] == report[0]["natural"]
