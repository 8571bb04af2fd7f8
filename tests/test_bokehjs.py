"""BokehJS's bundles, staged (buildsupport/bokehjs.py): each hands its modules to the page's loader,
which runs them in slices in the order the bundle itself would (static/loader/staging.js `runStaged`); bokeh-tables
only on demand, Panel's DataTabulator out of its models index until then."""

import json
import shutil
import subprocess

import pytest

from buildsupport.bokehjs import TABLES_ALIAS, defer_tables, page_bundle, stage_bundle
from buildsupport.common import BuildError
from buildsupport.site import ON_DEMAND_SCRIPTS, UNNEEDED_SCRIPTS, package_dir

ROOT = package_dir("buildsupport").parent
JS = package_dir("bokeh") / "server" / "static" / "js"
PANEL = package_dir("panel") / "dist" / "panel.min.js"
# The bundles the page runs, in its order (buildsupport/site.py add_page_scripts; bokeh-gl is not run),
# then the one it runs on demand
BUNDLES = [JS / "bokeh.min.js", JS / "bokeh-widgets.min.js", PANEL, JS / "bokeh-tables.min.js"]


def test_every_bundle_is_staged_and_the_rest_of_its_text_kept():
    assert not any(name in str(path) for path in BUNDLES for name in UNNEEDED_SCRIPTS)
    assert [any(name in path.name for name in ON_DEMAND_SCRIPTS) for path in BUNDLES] == [False] * 3 + [True]
    for path in BUNDLES:
        source = path.read_bytes()
        staged = page_bundle(path.name, source)[0].decode()
        assert "__kvStage" in staged, path.name
        # only the wrapper changes (and panel's index, by one registration): every module's text is there
        assert 0 < len(staged) - len(source) < 600, path.name
        tail = source.decode()[-200_000:]
        assert tail in staged, path.name


def test_panel_registers_datatabulator_only_once_bokeh_tables_has_run():
    source = PANEL.read_bytes()
    deferred, models = defer_tables(PANEL.name, source)
    assert len(models) == 1 and models[0]["name"] == "DataTabulator"
    module = models[0]["module"]
    # its module and the tables alias it asks for are still there, nothing asks for the module any more
    assert TABLES_ALIAS in deferred.decode() and f'"{module}": function' in deferred.decode()
    assert f'("{module}")' in source.decode() and f'("{module}")' not in deferred.decode()
    assert b'("DataTabulator",' in source and b'("DataTabulator",' not in deferred
    with pytest.raises(BuildError, match="another Panel"):
        defer_tables(PANEL.name, deferred)
    # another module that asks for bokeh-tables, or one of its modules, would run it with the rest: the build
    # stops (wherever in the module the ask is)
    for ask in (f'{TABLES_ALIAS}"', f'{TABLES_ALIAS}/data_table"'):
        asker = f'\n"0123456789": function _(e,t,s,i,o){{i();const b=`\n`,a=e({ask})}},'
        with pytest.raises(BuildError, match="not by DataTabulator's module alone"):
            defer_tables(PANEL.name, source.replace(b"\n", asker.encode(), 1))


def test_another_wrapper_stops_the_build():
    with pytest.raises(BuildError, match="another BokehJS"):
        stage_bundle("bokeh.min.js", b"(function(root, factory) { root.Bokeh = factory(); })(this, function() {});")


@pytest.mark.skipif(shutil.which("node") is None, reason="Node.js not found (apt-get install nodejs)")
def test_the_loader_runs_every_module_in_an_order_the_bundle_would_accept(tmp_path):
    """Each staged bundle, run by the loader's own staging module (tests/js/staged_order.mjs): every module its
    entry needs is run, each after the modules it asks for (one at a time, or a cycle at a time), and a
    module in a cycle finds the same modules half run as when the bundle runs itself (panel.min.js has
    nine such)."""
    report = staged_report(tmp_path, [(path, page_bundle(path.name, path.read_bytes())[0]) for path in BUNDLES])
    assert [r["handed"] for r in report] == [True] * len(BUNDLES)
    assert [r["plugin"] for r in report] == [False, True, True, True]
    for r in report:
        assert r["staged"] == r["natural"] > 0, r  # the same modules run
        assert r["differ"] == [], r  # each finds the same modules half run
        # all of them in runStaged's slices, each a module alone or a cycle (not the entry's require)
        assert sum(r["runs"]) == r["staged"] and r["notCycles"] == [], r
    assert report[0]["modules"] > 400 and report[0]["ordered"] == report[0]["natural"]


def staged_report(tmp_path, bundles: list) -> list[dict]:
    """tests/js/staged_order.mjs's report on these (path, staged text) bundles, read in this order."""
    paths = []
    for i, (path, text) in enumerate(bundles):
        out = tmp_path / f"{i}-{path.name}"
        out.write_bytes(text)
        paths.append(str(out))
    done = subprocess.run(
        ["node", str(ROOT / "tests" / "js" / "staged_order.mjs")],
        input=json.dumps({"bundles": paths}),
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout)


@pytest.mark.skipif(shutil.which("node") is None, reason="Node.js not found (apt-get install nodejs)")
def test_panel_reaches_no_module_of_bokeh_tables(tmp_path):
    """With every bundle's modules known (bokeh-tables' before panel's), panel's entry, as served, reaches
    neither DataTabulator's module nor any module only bokeh-tables has; as Panel ships it, it reaches both."""
    order = [BUNDLES[0], BUNDLES[1], BUNDLES[3], PANEL]
    [deferred] = page_bundle(PANEL.name, PANEL.read_bytes())[1]
    for served in (True, False):
        texts = [
            page_bundle(p.name, p.read_bytes())[0] if served else stage_bundle(p.name, p.read_bytes()) for p in order
        ]
        report = staged_report(tmp_path, list(zip(order, texts)))
        tables_only = set(report[2]["ids"]) - set(report[0]["ids"]) - set(report[1]["ids"])
        assert len(tables_only) > 20
        reached = set(report[3]["reached"])
        assert (deferred["module"] in reached, bool(tables_only & reached)) == (not served, not served)
