/* BokehJS, after the first paint, staged. BokehJS and Panel's scripts are needed only to render the
 * live document: the page prefetches them once it has loaded and painted (they download while Python
 * boots, after what the first paint needs) and runs them, in order, once Python is booted and builds
 * the app (the worker's "app" stage) or when the live document arrives, whichever comes first; never
 * as the page's own scripts, which would hold the preview's first paint back.
 *
 * Each bundle is staged (buildsupport/bokehjs.py): its script hands its modules here (`__kvStage`)
 * instead of running them all in one task, with the reader's clicks waiting; the page runs them a few
 * milliseconds at a time (SLICE_MS), in idle time until the live document is here, each after the
 * modules it asks for, and a module in a cycle through the first of the cycle, so each finds the same
 * modules half run as the bundle's own run (tests/test_bokehjs.py checks that on the real bundles).
 * bokeh-tables runs only when a document asks for a model BokehJS does not know (`runOnDemand`).
 *
 * `moduleKey`, `askedFor` and `runOrder` are pure (tests/js/staged_order.mjs, tests/js/loader/). */
import { page, TEXT } from "./state.js";
import { afterPaint, whenIdle, yieldToPage } from "./dom.js";
import { showError } from "./progress.js";

export const SLICE_MS = 8;
let handed = null; // what the script that just ran handed over
let core = null; // bokeh.min.js's: its require, its modules and aliases (the plugins' are added to them)
let scriptsNow = false; // the live document is here: no more waiting for idle time
const scriptsRun = new Set();
let bokehJS = null;
let onDemand = null;
let onDemandDone = false;
const defined = new Set(); // the models the live document defines itself (its "defs": Panel's HTML components)

export const moduleKey = (id) => (typeof id === "string" && /^\d+$/.test(id) ? Number(id) : id); // "622" is 622

// The modules a module of `table` asks for, in the order its text asks (its require is its first
// parameter); `normalize`: the bundle's, from an alias to a module's id.
export function askedFor(table, id, normalize) {
  const text = String(table[id]);
  const param = /^function\s*[\w$]*\s*\(\s*([\w$]+)/.exec(text);
  if (!param) return [];
  const call = new RegExp(`(?:^|[^\\w$.])${param[1].replace(/\$/g, "\\$")}\\((\\d+|"[^"\\\\]*")\\)`, "g");
  const out = [];
  for (const [, literal] of text.matchAll(call)) {
    const id = moduleKey(normalize(literal[0] === '"' ? JSON.parse(literal) : Number(literal)));
    if (table[id] !== undefined && !out.includes(id)) out.push(id);
  }
  return out;
}

// Every module the entry needs, each after the ones it asks for (depth first, in the order asked, as
// the bundle's require runs them). Modules that ask for each other (a cycle) are left to the first
// of them reached, whose require runs the others in the bundle's own order (Tarjan's components).
export function runOrder(entry, asked) {
  const index = new Map(), low = new Map(), onStack = new Set(), stack = [], order = [];
  const visit = (v) => {
    index.set(v, index.size);
    low.set(v, index.get(v));
    stack.push(v);
    onStack.add(v);
    for (const w of asked.get(v) || []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), index.get(w)));
    }
    if (low.get(v) === index.get(v)) {
      let w;
      do { w = stack.pop(); onStack.delete(w); } while (w !== v);
      order.push(v);
    }
  };
  visit(entry);
  return order;
}

// The next slice of BokehJS's work: in idle time while the live document is not here, then as soon
// as the page has answered its input and drawn its frame.
const nextSlice = () => (scriptsNow ? yieldToPage() : whenIdle());

// A handed bundle's modules, run a slice at a time (`pause` between slices), in runOrder's order; then
// the bundle's own end: bokeh.min.js publishes window.Bokeh, a plugin registers with it.
export async function runStaged(bundle, pause = nextSlice) {
  let start = performance.now();
  const slice = async () => {
    if (performance.now() - start < SLICE_MS) return;
    await pause();
    start = performance.now();
  };
  if (!bundle.plugin) core = bundle;
  else {
    Object.assign(core.modules, bundle.modules); // as register_plugin does
    Object.assign(core.aliases, bundle.aliases);
  }
  const asked = new Map();
  for (const id of Object.keys(bundle.modules).map(moduleKey)) {
    asked.set(id, askedFor(core.modules, id, core.normalize));
    await slice();
  }
  for (const id of runOrder(moduleKey(core.normalize(bundle.entry)), asked)) {
    core.require(id);
    await slice();
  }
  if (bundle.plugin) globalThis.Bokeh.register_plugin(bundle.modules, bundle.entry, bundle.aliases);
  else bundle.done(bundle.main());
}

function prefetchScripts() {
  for (const url of page.cfg.scripts || []) {
    const link = document.createElement("link");
    link.rel = "prefetch";
    link.as = "script";
    link.href = page.boot.abs(url);
    document.head.appendChild(link);
  }
}

// The bundles hand their modules here from now on; they are prefetched once the page has loaded and painted.
export function startStaging() {
  globalThis.__kvStage = (bundle) => {
    handed = bundle;
  };
  if (document.readyState === "complete") afterPaint(prefetchScripts);
  else addEventListener("load", () => afterPaint(prefetchScripts), { once: true });
}

// The live document is here: BokehJS's slices no longer wait for idle time.
export function scriptsNeeded() {
  scriptsNow = true;
}

function runScript(url) {
  return new Promise((resolve, reject) => {
    const el = document.createElement("script");
    el.src = page.boot.abs(url);
    el.onload = resolve;
    el.onerror = () => reject(Object.assign(new Error(`${url}: ${TEXT.shell_script_failed}`), { url }));
    document.head.appendChild(el);
  });
}

// These page scripts, in order, each staged, but those already run (a retry runs the rest).
async function runScripts(urls) {
  for (const url of urls) {
    if (!scriptsRun.has(url)) {
      await nextSlice();
      handed = null;
      await runScript(url);
      if (handed) await runStaged(handed);
      scriptsRun.add(url);
    }
  }
}

async function runPageScripts() {
  await runScripts(page.cfg.scripts || []);
  performance.mark("kv-bokeh-ready");
}

const failures = (e) => (e.url ? [{ url: e.url, script: true }] : []);

export function startBokehJS() {
  if (!bokehJS) {
    bokehJS = runPageScripts();
    bokehJS.catch((e) => {
      bokehJS = null; // a retry runs the scripts that did not load
      showError({ where: e.url, message: e.message, failures: failures(e) });
    });
  }
  return bokehJS;
}

// bokeh-tables (buildsupport/site.py ON_DEMAND_SCRIPTS) is not run with the rest: no page of this app
// shows a table. A document that asks for a model BokehJS does not know (a table, or Panel's
// DataTabulator, taken out of panel.min.js's index for it: buildsupport/bokehjs.py defer_tables) waits
// for it: its script run and staged like the others, then those Panel models registered.
export function runOnDemand() {
  if (!onDemand) {
    const more = page.cfg.onDemand || { scripts: [], models: [] };
    onDemand = (async () => {
      await runScripts(more.scripts);
      core.require("@bokehjs/base").register_models(more.models.map((m) => core.require(m.module)[m.name]));
      onDemandDone = true;
      performance.mark("kv-on-demand");
    })();
    onDemand.catch((e) => {
      onDemand = null; // a retry (before the hand-over) runs it again
      // The page cannot show what Python has: it stops (after the hand-over, a reload returns to the
      // reader's place; before it, a retry starts Python again).
      showError({ where: e.url || "BokehJS", message: e.message, failures: failures(e) });
    });
  }
  return onDemand;
}

// The models a live document defines itself (its "defs": Panel's HTML components) are known.
export function defineModels(docs_json) {
  for (const doc of Object.values(docs_json)) for (const def of doc.defs || []) defined.add(def.name);
}

// Whether a document's JSON (or a patch's) names a model BokehJS does not know yet, {type: "object", name},
// neither registered nor defined by the live document itself.
export function asksForMore(value) {
  if (onDemandDone || !core) return false;
  const known = core.require("@bokehjs/base").default_resolver;
  const visit = (v) => {
    if (v === null || typeof v !== "object" || ArrayBuffer.isView(v) || v instanceof ArrayBuffer) return false;
    if (Array.isArray(v)) return v.length > 0 && typeof v[0] !== "number" && v.some(visit); // data: skipped
    if (v.type === "object" && typeof v.name === "string" && !defined.has(v.name) && known.get(v.name) == null) {
      page.kv.onDemandFor = v.name; // tests/test_bokehjs_browser.py
      return true;
    }
    return Object.values(v).some(visit);
  };
  return visit(value);
}
