// static/loader/state.js and probe.js: the page's state carries no test counter; window.kv.preview
// shows both, live.
import { test } from "node:test";
import assert from "node:assert/strict";
import { page, pv, startState, TEXT } from "../../../static/loader/state.js";
import { expose, probe } from "../../../static/loader/probe.js";

test("the state starts from what static/boot.js left", () => {
  const kv = { times: {} };
  const boot = { cfg: {}, query: {}, lang: "en", preview: { name: "en-full-9", mode: "full", t: 9, later: 30 }, kv, t0: 5 };
  startState(boot, { drawn: 0 }, { shell_title: "The cache" });
  assert.deepEqual([pv.mode, pv.t, pv.active, page.kv, page.lang, TEXT.shell_title], ["full", 9, false, kv, "en", "The cache"]);
});

test("the counters are the probe's, not the state's", () => {
  for (const name of Object.keys(probe)) assert.ok(!(name in pv) && !(name in page), name);
});

test("the exposed view reads the state and the counters as they are now", () => {
  const view = expose(pv, probe);
  pv.seq = 3;
  pv.log.push({ seq: 3, cmd: "step" });
  probe.usedAhead = 2;
  assert.deepEqual([view.seq, view.log.length, view.usedAhead, view.done, view.fontsAsked], [3, 1, 2, false, false]);
  assert.deepEqual(Object.keys(view).sort(), [...Object.keys(pv), ...Object.keys(probe)].sort());
});
