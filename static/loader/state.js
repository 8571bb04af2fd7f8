/* The page's state, shared by the loader's modules: plain objects, filled by main.js from static/boot.js
 * (`startState`). No DOM here, and no module but main.js (the entry) touches it at import: Node imports
 * them (tests/js/loader/). */

export const page = {
  cfg: null, // index.html's configuration (buildsupport/site.py)
  query: null, // the URL's values, read as the app reads them (static/urlquery.js)
  lang: null,
  preview: null, // the URL's state: {name, mode, t, later} (static/boot.js previewState)
  boot: null, // what static/boot.js left: window.kvBoot
  early: null, // what static/early.js left: window.kvEarly
  kv: null, // window.kv: what the tests and benchmarks read
  t0: 0,
  worker: null, // the Pyodide worker (static/worker.js), with its own `busy`, `queue` and `jsdoc`
  stage: "runtime", // runtime, packages, app, ready (progress.js setStage)
  failed: false, // a failure shows: the loading stops until a retry
  live: false, // the live page took over
};

// The shell's texts in the page's language (config.js shellTexts).
export const TEXT = {};

// The preview's state: where the reader is, what they did.
export const pv = {
  mode: null,
  t: 0,
  active: true, // false: another seed or top-p, or a state could not be had: every action waits for the model
  playing: false,
  timer: null, // the animation's next step
  kept: false, // an action only the model answers is waiting: the ones after it wait too
  wanted: false, // the reader asked for what only the live page has (a section, the speed)
  seq: 0, // actions so far that changed the page's state
  log: [], // [{seq, cmd, query}] (query: the state it moved to), or [{seq, cmd, kept: true}]
  shown: 0, // actions drawn
  done: false, // the live page took over
};

export function startState(boot, early, text) {
  Object.assign(page, {
    cfg: boot.cfg, query: boot.query, lang: boot.lang, preview: boot.preview, boot, early, kv: boot.kv,
    t0: boot.t0,
  });
  Object.assign(TEXT, text);
  Object.assign(pv, { mode: boot.preview.mode, t: boot.preview.t, active: boot.preview.later === null });
}
