/* The prerendered states (app/figure/snapshot.py, assets/states-HASH/): their HTML, fetched once; the ones
 * one action from the reader's, parsed and compared ahead in idle time, so that a click finds its state
 * here and its changes found. */
import { page, pv } from "./state.js";
import { namesAhead, stateName } from "./config.js";
import { afterPaint, whenIdle } from "./dom.js";
import { findAhead, foundAhead, parseState, statesParsed } from "./preview.js";

export const stateTexts = new Map(); // state name -> its HTML
const stateFetches = new Map(); // state name -> the promise of its HTML

// index.html carries the states one action from its own preview: the first click needs no fetch, and
// no parse (the browser parsed them with the page, and their nodes move from the template as they are:
// a copy into the page's document would cost a phone's main thread far more). Read once the document
// is parsed; the first parts (static/early.js drew from them) are let go.
export function readAhead() {
  for (const tpl of document.querySelectorAll("#kv-snapshot > template[data-kv-first]")) tpl.remove();
  for (const tpl of document.querySelectorAll("template[data-kv-ahead]")) {
    const name = tpl.dataset.kvAhead;
    if (name.startsWith(page.lang + "-")) {
      stateTexts.set(name, tpl.innerHTML);
      statesParsed.set(name, Array.from(tpl.content.children));
    }
    tpl.remove();
  }
}

function fetchText(url) {
  return fetch(url).then((r) => {
    if (!r.ok) throw new Error(`${url}: HTTP ${r.status}`);
    return r.text();
  });
}

// A state's HTML (the URL's own state: the fetch static/boot.js started while the page was parsed).
export function loadState(name) {
  if (stateTexts.has(name)) return Promise.resolve(stateTexts.get(name));
  if (!stateFetches.has(name)) {
    const started = name === page.preview.name && page.boot.snapshotFetch;
    const got = (started || fetchText(page.boot.abs(page.cfg.states + name + ".html"))).then((text) => {
      stateTexts.set(name, text);
      return text;
    });
    got.catch(() => stateFetches.delete(name));
    stateFetches.set(name, got);
  }
  return stateFetches.get(name);
}

// The states one action away (and three steps ahead while the animation runs), parsed and compared in
// idle time; at the first paint (`first`), the next step's right after it: a reader's first click is
// most likely Avanzar, and idle time comes late while BokehJS is staged and the worker boots.
export function fetchAhead(first = false) {
  if (pv.done || !pv.active) return;
  const names = namesAhead(page.cfg, page.lang, pv);
  // the parts parsed ahead that no action one away needs are let go; not those of where the reader is
  // (an action's state not drawn yet: the click would parse it again)
  const here = stateName(page.lang, pv.mode, pv.t);
  for (const name of statesParsed.keys()) if (name !== here && !names.includes(name)) statesParsed.delete(name);
  for (const name of names) {
    const soon = first && name === stateName(page.lang, pv.mode, pv.t + 1);
    loadState(name).then((html) => (soon ? new Promise(afterPaint) : whenIdle()).then(() => {
      if (pv.done || !stateTexts.has(name)) return;
      if (!statesParsed.has(name)) statesParsed.set(name, parseState(html));
      if (name !== stateName(page.lang, pv.mode, pv.t + 1)) return;
      const parts = statesParsed.get(name);
      if (!foundAhead(parts)) findAhead(name, parts, soon);
    })).catch(() => {});
  }
}
