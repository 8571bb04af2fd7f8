/* The live page. static/boot.js started the worker (static/worker.js) while the page was parsed and held
 * what it said; from here on this module hears it, in the protocol of Panel's pyodide-worker handler
 * (render, rendered, patch, idle): the downloads and stages (the progress), Python's patches and the
 * reader's changes to Python, in order, and the live document. That document is rendered in place of the
 * preview once BokehJS has run and the reader has paused (controls.js readerPaused), in slices (slices.js),
 * at the reader's latest place on the preview: the worker moves it there just before (`current`), and
 * the moves made while it is rendered are replayed out of sight (`catchUp`). Only then does it take the
 * preview's place: what the reader sees never goes back. The preview stops answering, the actions only the
 * model answers are replayed (controls.js endPreview), and a keyboard reader's focus goes on from the live
 * page's same control. The hand-over moves nothing: the preview is laid out as the live page is
 * (app/figure/snapshot.py, snapshot.css). */
import { page, pv, TEXT } from "./state.js";
import { positionQuery } from "./config.js";
import { $, afterPaint, whenParsed } from "./dom.js";
import { says } from "./preview.js";
import { endPreview, lastInput, latestMove, readerPaused } from "./controls.js";
import { asksForMore, defineModels, runOnDemand, scriptsNeeded, startBokehJS } from "./staging.js";
import { sliceRender } from "./slices.js";
import { setStage, showError } from "./progress.js";

const downloads = { runtime: new Set(), packages: new Set() };
let runtimeSeen = false;
let patching = 0; // Python's patch being applied: the changes it makes are not sent back
let patchesWaiting = null;

function take(worker) {
  page.worker = worker;
  worker.busy = false;
  worker.queue = [];
  page.boot.takeWorker(worker, onWorkerMessage, onWorkerError);
}

function onWorkerError(e) {
  if (e.preventDefault) e.preventDefault();
  showError({ where: page.cfg.worker, message: e.message || TEXT.shell_worker_error, failures: [] });
}

const cannotStart = (e) => showError({ where: page.cfg.worker, message: String(e), failures: [] });

// The worker static/boot.js started: its messages, from the first.
export function startChannel() {
  if (page.boot.workerError) return cannotStart(page.boot.workerError);
  take(page.kv.worker);
}

// A retry: the worker again, built at the reader's position on the preview.
export function restartWorker() {
  page.failed = page.boot.bar.stopped = false;
  document.body.removeAttribute("data-error");
  setStage("runtime");
  downloads.runtime.clear();
  downloads.packages.clear();
  const search = pv.seq ? positionQuery(location.search, pv.mode, pv.t) : location.search;
  let worker;
  try {
    worker = page.boot.startWorker(search, pv.seq);
  } catch (e) {
    return cannotStart(e);
  }
  take(worker);
}

// The worker's thread starts only when this page's main thread is free to start it: BokehJS waits for
// the worker's "app" stage, not before.
const HANDLERS = {
  fetch: onFetch,
  mark: (msg) => performance.mark(msg.name, { startTime: msg.at - performance.timeOrigin }), // on this page's timeline
  status: onStatus,
  error: (msg) => showError(msg),
  render: onRender,
  moved: (msg) => page.moved && page.moved(msg),
  idle: onIdle,
  patch: onPatch,
  lazy: (msg) => { page.kv.lazy = (page.kv.lazy || []).concat([msg]); },
  modules: (msg) => { page.kv.sourceModules = msg.modules; },
  pyerror: onPyError,
};

function onWorkerMessage(event) {
  const msg = event.data;
  if (Object.prototype.hasOwnProperty.call(HANDLERS, msg.type)) return HANDLERS[msg.type](msg);
}

function onStatus(msg) {
  page.kv.requests.push(msg);
  if (msg.stage === "app") {
    setStage("app");
    whenParsed().then(() => afterPaint(startBokehJS));
  }
}

function onFetch(msg) {
  page.kv.requests.push(msg);
  if (msg.kind === "app") return;
  const set = downloads[msg.kind];
  if (msg.state === "start") set.add(msg.url);
  else set.delete(msg.url);
  if (msg.kind === "runtime") runtimeSeen = true;
  if (page.stage !== "app" && !page.failed) {
    // Packages download alongside the runtime; the runtime is the slower part.
    const next = runtimeSeen && downloads.runtime.size === 0 && msg.kind === "packages" ? "packages" : page.stage;
    if (next !== page.stage) setStage(next);
  }
}

function onPyError(msg) {
  console.error(msg.message);
  document.body.setAttribute("data-pyerror", msg.message.split("\n").slice(-2).join(" "));
  showError({ where: "app", message: msg.message.trim().split("\n").slice(-1)[0], failures: [], soft: true });
}

async function onRender(msg) {
  page.kv.times.worker = msg.times;
  const live = await renderLive(msg);
  if (!live) return;
  link(live.views);
  const seq = await catchUp(live.seq);
  const replay = handOver(seq);
  if (replay.length) {
    page.worker.busy = true; // the reader's live clicks wait behind the replay ("idle")
    page.worker.postMessage({ type: "replay", commands: replay });
  }
  ready();
}

// The live document and Python's, linked: the reader's changes go to the worker.
function link(views) {
  const worker = page.worker;
  const jsdoc = (worker.jsdoc = [...views.roots.values()][0].model.document);
  jsdoc.on_change(sendChange.bind(null, jsdoc), false);
  worker.postMessage({ type: "rendered" });
  // No "location" message: the app read the URL once, in create_app (app/state/settings.py). Panel's own
  // location sync is not used; it would read the query again its own way (and raise on a number of
  // 100,000 digits).
}

// The document to render: the one the worker built, or, if the reader has moved on the preview since,
// the same app moved to their latest place (worker.js moveTo: Python's steps, no drawing here).
function current(msg) {
  const at = latestMove();
  if (!at || at.seq <= (msg.seq || 0)) return msg;
  return new Promise((resolve) => {
    page.moved = (moved) => {
      page.moved = null;
      resolve(moved.docs_json ? { ...msg, ...moved } : msg);
    };
    page.worker.postMessage({ type: "move", seq: at.seq, query: at.query });
  });
}

// The moves the reader made on the preview while the live document was being rendered (after the first
// `seq` actions), replayed on it out of sight until it is where the preview is: the actions it holds.
async function catchUp(seq) {
  for (let at = latestMove(); at && at.seq > seq; at = latestMove()) {
    const commands = pv.log.filter((e) => e.seq > seq && e.seq <= at.seq).map((e) => e.cmd);
    await new Promise((resolve) => {
      page.worker.whenIdle = resolve;
      page.worker.busy = true;
      page.worker.postMessage({ type: "replay", commands });
    });
    seq = at.seq;
  }
  return seq;
}

function sendChange(jsdoc, event) {
  const worker = page.worker;
  if ((event.setter_id != null && event.setter_id == "py") || patching > 0) return;
  if (event.sync === false) return; // the page's own script's change of the view alone (the grid's zoom)
  if (worker.busy) {
    // Everything waits in order (a click must not overtake the text typed before it); a newer
    // value of the same property replaces the older one.
    if (event.model && event.attr) {
      worker.queue = worker.queue.filter((old) => !(old.model === event.model && old.attr === event.attr));
    }
    worker.queue.push(event);
    return;
  }
  const patch = jsdoc.create_json_patch([event]);
  worker.busy = true;
  worker.postMessage({ type: "patch", patch });
}

// The reader's changes go to Python only once the page has applied what Python sent before.
function onIdle() {
  inOrder(() => {
    const worker = page.worker;
    if (worker.queue.length) {
      const patch = worker.jsdoc.create_json_patch(worker.queue);
      worker.queue = [];
      worker.postMessage({ type: "patch", patch });
    } else {
      worker.busy = false;
      const idle = worker.whenIdle;
      worker.whenIdle = null;
      if (idle) idle();
    }
  });
}

// A patch that names a model BokehJS does not know waits for its script (runOnDemand; if that fails,
// it has shown why and stopped the page).
function onPatch(msg) {
  const more = asksForMore(msg.patch);
  inOrder(() => (more ? runOnDemand().then(() => applyPatch(msg), () => {}) : applyPatch(msg)), more);
}

// What the worker says after a patch that waits, in its order: the patches, and "idle".
function inOrder(fn, waits = false) {
  if (!patchesWaiting && !waits) return fn();
  const mine = (patchesWaiting = (patchesWaiting || Promise.resolve())
    .then(fn)
    .catch((e) => (globalThis.reportError ? reportError(e) : console.error(e)))
    .finally(() => { if (patchesWaiting === mine) patchesWaiting = null; }));
}

function applyPatch(msg) {
  try {
    patching += 1;
    page.worker.jsdoc.apply_json_patch(msg.patch, msg.buffers);
  } finally {
    patching -= 1;
  }
}

// The live document rendered out of sight at the reader's place: {views, seq} (seq: the actions it
// holds), or null (an error shown).
async function renderLive(msg) {
  performance.mark("kv-render-start");
  scriptsNeeded();
  await whenParsed();
  try {
    await startBokehJS();
  } catch (e) {
    return null; // startBokehJS has shown the error
  }
  await readerPaused();
  msg = await current(msg);
  performance.mark("kv-render-go");
  page.kv.lastInput = lastInput(); // tests/test_preview_browser.py: the render began after the reader's pause
  const docs_json = JSON.parse(msg.docs_json);
  defineModels(docs_json);
  if (asksForMore(docs_json)) {
    try {
      await runOnDemand();
    } catch (e) {
      return null; // runOnDemand has shown the error
    }
  }
  const views = await embed(msg, docs_json);
  return views ? { views, seq: msg.seq || 0 } : null;
}

function mountPoints(container, rootIds, prefix) {
  const roots = {};
  rootIds.forEach((id, i) => {
    const el = document.createElement("div");
    el.id = `${prefix}-${i}`;
    container.appendChild(el);
    roots[id] = el.id;
  });
  return roots;
}

// BokehJS renders the document into #kv-live, laid out out of sight meanwhile (#kv-live.kv-building).
async function embed(msg, docs_json) {
  const render_items = JSON.parse(msg.render_items);
  const root_ids = JSON.parse(msg.root_ids);
  const holder = $("kv-live");
  render_items[0].roots = mountPoints(holder, root_ids, "kv-root");
  render_items[0].root_ids = root_ids;
  const slices = sliceRender(docs_json);
  holder.classList.add("kv-building");
  holder.inert = true; // nothing of it is said or reached until it takes the preview's place
  try {
    const [views] = await globalThis.Bokeh.embed.embed_items(docs_json, render_items);
    await slices.done();
    return views;
  } catch (e) {
    holder.classList.remove("kv-building");
    holder.inert = false;
    showError({ where: "BokehJS", message: String(e), failures: [] });
    return null;
  } finally {
    slices.restore();
  }
}

// The live page in the preview's place, where the reader is (it holds their first `seq` actions): the
// actions after them (kept for the model, and the animation if it runs), to replay.
function handOver(seq) {
  const replay = endPreview(seq);
  const active = document.activeElement;
  const focused = active && active.closest ? active.closest("#kv-snapshot [data-kv]") : null;
  const focusLabel = focused && (focused.dataset.kv === "play" ? says().play_label : focused.textContent.replace(/^\u2713 /, ""));
  page.live = true;
  page.kv.replayed = replay;
  const main = $("kv-main");
  main.insertBefore($("kv-loader"), main.firstChild); // errors after this show at the top
  $("kv-snapshot").remove();
  const place = document.body.dataset.kvLiveState; // the live page's place, the preview's (app/components/a11y.js)
  if (place) document.body.dataset.kvState = place;
  for (const fonts of document.querySelectorAll(".kv-fonts, #kv-fonts")) fonts.remove(); // the preview's (fonts.js)
  $("kv-live").classList.remove("kv-building");
  $("kv-live").inert = false;
  if (focusLabel) focusLive(focusLabel);
  return replay;
}

// The live page is linked to Python's (`link`): ready.
function ready() {
  setStage("ready");
  document.body.setAttribute("data-ready", "true");
  performance.mark("kv-ready");
  page.kv.times.ready = performance.now() - page.t0;
}

// A keyboard reader on a preview's control goes on from the live page's same control (found by its
// label in Bokeh's shadow roots).
function focusLive(label) {
  const walk = (root) => {
    for (const el of root.querySelectorAll("button, *")) {
      if (el.tagName === "BUTTON" && el.textContent.trim() === label) return el;
      if (el.shadowRoot) {
        const found = walk(el.shadowRoot);
        if (found) return found;
      }
    }
    return null;
  };
  const button = walk($("kv-live"));
  if (button) button.focus({ preventScroll: true });
}
