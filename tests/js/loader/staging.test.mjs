// static/loader/staging.js: the order a staged bundle's modules run in (each after the modules it asks
// for, a cycle through its first module reached), on small stand-in bundles. tests/js/staged_order.mjs
// runs it on the real ones (tests/test_bokehjs.py).
import { test } from "node:test";
import assert from "node:assert/strict";
import { askedFor, moduleKey, runOrder, runStaged, SLICE_MS } from "../../../static/loader/staging.js";

test("a module's id: digits are a number", () => {
  assert.deepEqual([moduleKey("622"), moduleKey(622), moduleKey("@bokehjs/base"), moduleKey("12a")], [622, 622, "@bokehjs/base", "12a"]);
});

test("the modules a module asks for, in its order, through its own require's name", () => {
  const table = {
    1: function _(r, e, t) { const a = r(2), b = r("@x/three"), c = x.r(4), d = r(2); return [a, b, c, d, t(5)]; },
    2: function _(q) { return q(1); },
    3: function _(req$) { return req$(1) + req$(9); }, // 9: not a module of the table
    4: "not a function",
  };
  const normalize = (name) => (name === "@x/three" ? 3 : name);
  assert.deepEqual(askedFor(table, 1, normalize), [2, 3]);
  assert.deepEqual(askedFor(table, 2, normalize), [1]);
  assert.deepEqual(askedFor(table, 3, normalize), [1]);
  assert.deepEqual(askedFor(table, 4, normalize), []);
});

test("each module after the ones it asks for; a cycle run through its first module reached", () => {
  const asked = new Map([[1, [2, 3]], [2, [4]], [3, [4, 5]], [5, [6]], [6, [5, 3]], [4, []]]);
  const order = runOrder(1, asked);
  assert.deepEqual(order, [4, 2, 3, 1]); // 3, 5 and 6 are a cycle: run through 3, reached first
  assert.deepEqual(runOrder(7, new Map()), [7]);
});

// A bundle as buildsupport/bokehjs.py stages it: modules, a require that runs each once, its entry.
function bundle(modules, entry) {
  const ran = [];
  const done = new Set();
  const require = (id) => {
    if (done.has(id)) return;
    done.add(id);
    modules[id](require);
    ran.push(id);
  };
  return { ran, core: { modules, aliases: {}, entry, normalize: (x) => x, require, main: () => require(entry), done() { ran.push("done"); } } };
}

test("a staged bundle's modules run in that order, with the page given back between slices", async () => {
  const busy = () => { const end = performance.now() + SLICE_MS + 2; while (performance.now() < end); };
  const { ran, core } = bundle({
    1: function _(r) { r(2); r(3); },
    2: function _(r) { busy(); r(3); },
    3: function _(r) { },
  }, 1);
  let pauses = 0;
  await runStaged(core, async () => { pauses += 1; });
  assert.deepEqual(ran, [3, 2, 1, "done"]);
  assert.ok(pauses >= 1);
});

test("a plugin's modules join the core's, then the plugin registers", async () => {
  const { core } = bundle({ 1: function _(r) { } }, 1);
  await runStaged(core, async () => {});
  const registered = [];
  globalThis.Bokeh = { register_plugin: (modules, entry) => registered.push([Object.keys(modules), entry]) };
  try {
    const plugin = { plugin: true, modules: { 10: function _(r) { r(1); r(11); }, 11: function _(r) { } }, aliases: { "@p": 10 }, entry: 10 };
    await runStaged(plugin, async () => {});
    assert.deepEqual(Object.keys(core.modules), ["1", "10", "11"]);
    assert.equal(core.aliases["@p"], 10);
    assert.deepEqual(registered, [[["10", "11"], 10]]);
  } finally {
    delete globalThis.Bokeh;
  }
});
