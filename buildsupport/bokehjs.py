"""BokehJS's bundles, staged: a bundle's script defines its modules and hands them to the page's
loader (static/loader/staging.js `__kvStage`, run by `runStaged`) instead of running them all at once, and the loader runs them
a few at a time in the main thread's idle time, in the order the bundle would have run them.

A bundle is one function per module and a `require` that runs a module's function the first time it
is asked for; the bundle's last lines ask for its entry module, which asks for every other one: one
task of 0.5 s for bokeh.min.js on a 2-core laptop (2 s with a phone's CPU), during which a reader's
click on the preview waits. Staged, no task is longer than the slowest single module.

The changes are made by exact text, and the build stops if a bundle does not have it (another
BokehJS): a staged bundle without the page's loader runs as before."""

from __future__ import annotations

import re

from .common import BuildError

# bokeh.min.js: the wrapper that runs the bundle and publishes it as window.Bokeh ...
MAIN_HEAD = """(function(root, factory) {
  const bokeh = factory();
  bokeh.__bokeh__ = true;
  if (typeof root.Bokeh === "undefined" || typeof root.Bokeh.__bokeh__ === "undefined") {
    root.Bokeh = bokeh;
  }
  const Bokeh = root.Bokeh;
  Bokeh[bokeh.version] = bokeh;
})(this, function() {"""
STAGED_MAIN_HEAD = """(function(root, factory) {
  // staged (buildsupport/bokehjs.py): the page's loader runs the modules, then `done(main())`
  const staged = factory();
  staged.done = function(bokeh) {
    bokeh.__bokeh__ = true;
    if (typeof root.Bokeh === "undefined" || typeof root.Bokeh.__bokeh__ === "undefined") {
      root.Bokeh = bokeh;
    }
    const Bokeh = root.Bokeh;
    Bokeh[bokeh.version] = bokeh;
  };
  if (typeof root.__kvStage === "function") root.__kvStage(staged);
  else staged.done(staged.main());
})(this, function() {"""
# ... and the line that runs every module: from there on, the rest waits in `main()`
MAIN_ENTRY = "\n  const main = require(entry);\n"
STAGED_MAIN_ENTRY = (
    "\n  return {require: require, normalize: normalize, modules: modules, aliases: aliases, entry: entry,"
    " main: function() {"
    "\n  const main = require(entry);\n"
)
MAIN_END = "\n  return main;\n})\n(["
STAGED_MAIN_END = "\n  return main;\n}};\n})\n(["

# A plugin (bokeh-widgets, bokeh-tables, panel): it registers its modules with BokehJS, which runs
# them all; staged, it hands them to the loader, which runs them, then registers the plugin.
PLUGIN_BODY = """  return (function(modules, entry, aliases, externals) {
    const bokeh = typeof Bokeh !== "undefined" ? (version != null ? Bokeh[version] : Bokeh) : null;"""
STAGED_PLUGIN_BODY = """  return (function(modules, entry, aliases, externals) {
    if (typeof __kvStage === "function") return __kvStage({plugin: true, modules: modules, entry: entry, aliases: aliases});
    const bokeh = typeof Bokeh !== "undefined" ? (version != null ? Bokeh[version] : Bokeh) : null;"""


def _replace_once(text: str, old: str, new: str, name: str) -> str:
    if text.count(old) != 1:
        raise BuildError(
            f"{name}: its wrapper is not the one buildsupport/bokehjs.py stages (another BokehJS?): "
            f"found {text.count(old)} times, expected once:\n{old}"
        )
    return text.replace(old, new)


# panel.min.js's models index registers every Panel model, DataTabulator among them, whose module asks
# for bokeh-tables' (a third of a megabyte of JavaScript, and the longest single module of all). No page
# of this app shows a table, so bokeh-tables is run only when a document asks for a model BokehJS does
# not know (static/loader/staging.js `runOnDemand`), and DataTabulator is registered then; the registration
# is taken out of the index (exactly one, or the build stops).
TABLES_ALIAS = '"@bokehjs/models/widgets/tables'  # the bundle and its modules (".../tables/data_table")
MODULE_HEAD = re.compile(r'\n"(\w+)": function _\(')
DEFERRED_EXPORT = re.compile(r'(?<=[,;])\w+\("DataTabulator",\w+\("(\w+)"\)\.DataTabulator\),')


def _find_all(text: str, sub: str) -> list[int]:
    return [m.start() for m in re.finditer(re.escape(sub), text)]


def defer_tables(name: str, source: bytes) -> tuple[bytes, list[dict]]:
    """panel.min.js without DataTabulator in its models index, and what the loader registers once
    bokeh-tables has run: [{"module": id, "name": "DataTabulator"}]."""
    text = source.decode("utf-8")
    found = DEFERRED_EXPORT.findall(text)
    if len(found) != 1:
        raise BuildError(
            f"{name}: DataTabulator's registration found {len(found)} times, expected once (another Panel?)"
        )
    module = found[0]
    # only that module names bokeh-tables (each mention is in the module whose head comes before it), and
    # only the index asks for that module
    heads = [(m.start(), m.group(1)) for m in MODULE_HEAD.finditer(text)]
    askers = sorted(
        {max(((s, m) for s, m in heads if s < i), default=(0, "?"))[1] for i in _find_all(text, TABLES_ALIAS)}
    )
    if askers != [module] or text.count(f'("{module}")') != 1:
        raise BuildError(f"{name}: bokeh-tables is asked for by {askers}, not by DataTabulator's module alone")
    return DEFERRED_EXPORT.sub("", text).encode("utf-8"), [{"module": module, "name": "DataTabulator"}]


def stage_bundle(name: str, source: bytes) -> bytes:
    """bokeh.min.js or one of its plugins, staged for static/loader/staging.js (see the module's docstring)."""
    text = source.decode("utf-8")
    if MAIN_HEAD in text:
        text = _replace_once(text, MAIN_HEAD, STAGED_MAIN_HEAD, name)
        text = _replace_once(text, MAIN_ENTRY, STAGED_MAIN_ENTRY, name)
        text = _replace_once(text, MAIN_END, STAGED_MAIN_END, name)
    else:
        text = _replace_once(text, PLUGIN_BODY, STAGED_PLUGIN_BODY, name)
    return text.encode("utf-8")


def page_bundle(name: str, source: bytes) -> tuple[bytes, list[dict]]:
    """A page script as the site serves it: staged, and for panel.min.js without DataTabulator (see
    defer_tables, whose models it returns)."""
    models = []
    if name == "panel.min.js":
        source, models = defer_tables(name, source)
    return stage_bundle(name, source), models
