// static/boot.js's pure functions (a classic script: required under Node, it gives them and does nothing
// else): the preview's state for a URL, the worker's configuration.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { cfg, query } from "./rules.mjs";

const { previewState, workerConfig } = createRequire(import.meta.url)("../../../static/boot.js");

test("the URL's state is the preview's: the prompt when the URL names no t", () => {
  assert.deepEqual(previewState(cfg, query({})), { name: "es-cache-2", mode: "cache", t: 2, later: null });
  assert.deepEqual(previewState(cfg, query({ lang: "pt", mode: "full", t: 40 })), {
    name: "pt-full-40", mode: "full", t: 40, later: null,
  });
});

test("another seed or top-p: the prompt shows, and the t the page will go to is `later`", () => {
  assert.deepEqual(previewState(cfg, query({ t: 40, seed: 3 })), { name: "es-cache-2", mode: "cache", t: 2, later: 40 });
  // at the prompt the text is the prompt's whatever the seed: nothing later
  assert.deepEqual(previewState(cfg, query({ top_p: 0.5 })), { name: "es-cache-2", mode: "cache", t: 2, later: null });
});

test("the worker's configuration: every address absolute, the reader's position", () => {
  const abs = (u) => new URL(u, "https://example.org/kv/index.html").href;
  const config = workerConfig(cfg, abs, "?t=5", 3);
  assert.equal(config.pyodide, "https://example.org/kv/pyodide/0.29.3/pyodide.js");
  assert.equal(config.packageBaseUrl, "https://example.org/kv/");
  assert.equal(config.stdlib, null);
  assert.deepEqual([config.query, config.seq, config.packages], ["?t=5", 3, ["numpy", "panel"]]);
  for (const key of ["indexURL", "lock", "app", "panelCdnRoot", "lazy"]) assert.match(config[key], /^https:\/\/example\.org\/kv\//);
});
