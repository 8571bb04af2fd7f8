// static/loader/config.js: the URL and the configuration, what the modules derive from them.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  namesAhead, otherMode, positionQuery, previewNote, sandboxConfig, shellTexts, stateName, stepPeriod, tBounds,
} from "../../../static/loader/config.js";
import { cfg, query } from "./rules.mjs";

test("a text a language lacks reads the default language's", () => {
  const en = shellTexts(cfg, "en");
  assert.equal(en.shell_title, "The cache");
  assert.equal(en.shell_snapshot, "Vista previa");
  assert.deepEqual(shellTexts(cfg, "pt"), cfg.text.es);
  assert.equal(cfg.text.en.shell_snapshot, undefined); // the configuration itself is left alone
});

test("state names, bounds and the other mode", () => {
  assert.equal(stateName("pt", "full", 64), "pt-full-64");
  assert.deepEqual(tBounds(cfg), { PROMPT: 2, LAST: 64 });
  assert.equal(otherMode(cfg, "cache"), "full");
  assert.equal(otherMode(cfg, "full"), "cache");
});

test("the position's query keeps the page's other parameters, and its mode and t are the reader's", () => {
  assert.equal(positionQuery("?lang=en&t=9&embed=1", "full", 12), "?lang=en&t=12&embed=1&mode=full");
  assert.equal(positionQuery("", "cache", 2), "?mode=cache&t=2");
  assert.equal(positionQuery("?t=3&t=40&mode=sin", "cache", 5), "?t=5&mode=cache");
});

test("the states one action away", () => {
  const at = (mode, t, playing = false) => namesAhead(cfg, "es", { mode, t, playing });
  assert.deepEqual(at("cache", 2), ["es-full-2", "es-cache-3"]); // at the prompt: no step back, no reset
  assert.deepEqual(at("full", 10), ["es-cache-10", "es-full-2", "es-full-9", "es-full-11"]);
  assert.deepEqual(at("cache", 10, true), ["es-full-10", "es-cache-2", "es-cache-9", "es-cache-11", "es-cache-12", "es-cache-13"]);
  assert.deepEqual(at("cache", 63, true), ["es-full-63", "es-cache-2", "es-cache-62", "es-cache-64"]);
  assert.deepEqual(at("cache", 64), ["es-full-64", "es-cache-2", "es-cache-63"]); // the step past the window is the model's
});

test("the animation's period, at most two steps a second for a reader who asked for less motion", () => {
  assert.equal(stepPeriod(4, false), 250);
  assert.equal(stepPeriod(4, true), 500);
  assert.equal(stepPeriod(1, true), 1000);
});

test("the preview's note: a preview, or where the page will go", () => {
  const TEXT = shellTexts(cfg, "es");
  assert.equal(previewNote(TEXT, { later: null }, query({})), "Vista previa");
  assert.equal(previewNote(TEXT, { later: 40 }, query({ seed: 3, top_p: 0.5 })), "t = 40, semilla 3, top-p 0.5");
});

test("the sandbox's configuration: its addresses absolute, the rest as it is", () => {
  const abs = (u) => new URL(u, "https://example.org/course/index.html").href;
  const sandbox = { worker: "assets/sandbox.js", pyodide: "pyodide/pyodide.js", stdLibURL: null, packages: ["numpy"] };
  assert.deepEqual(sandboxConfig(sandbox, abs), {
    worker: "https://example.org/course/assets/sandbox.js",
    pyodide: "https://example.org/course/pyodide/pyodide.js",
    stdLibURL: null,
    packages: ["numpy"],
  });
  assert.equal(sandbox.worker, "assets/sandbox.js");
});
