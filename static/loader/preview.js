/* The preview: the reader's state drawn as plain HTML before Python runs, moved from state to state by
 * static/diff.js's changes, the prerendered states fetched ahead (`loadState`, `fetchAhead`). The changes to the state the reader most likely takes next are found ahead,
 * in idle time (`findAhead`), so a click only applies them; which of them are in the reader's sight is
 * found with them, so the click reads no layout either (`splitOps`, `watchView`). The changes in sight
 * are drawn in the click's own frame, the rest (on a phone, most of the figure) in the next one, so the
 * answer's frame lays out what the reader sees. */
import { page, pv } from "./state.js";
import { probe } from "./probe.js";
import { namesAhead, stateName } from "./config.js";
import { $, afterPaint, whenIdle } from "./dom.js";

const ELEMENT = 1; // Node.ELEMENT_NODE
const diffs = () => globalThis.kvDiff; // static/diff.js: a classic script (static/early.js draws with it)

// What the preview shows changes only through swapPreview and announce (each counts a version): the
// changes found ahead hold while the version they were found on is the one drawn.
let drawnVersion = 0;
let ahead = null; // {name, parts, version, ops, split: {now, later}, view}
let below = null; // {ops, holder, name}: the last swap's changes out of sight, not drawn yet
// A scroll, a resize, or a part of the preview (or the loading card between them) drawn at another
// height since the split was found, makes it be found again at the click.
let viewVersion = 0;
const viewChanged = () => { viewVersion += 1; };
const heights = new Map(); // each of the preview's parts -> its height when the split was found
let sizes = null;
const statesParsed = new Map(); // state name -> its two parts, parsed ahead (used once)
// Whether the next step's changes, found ahead, hold for what is drawn now (tests/bench_click.py waits on it)
Object.defineProperty(probe, "aheadHolds", {
  enumerable: true,
  get: () => Boolean(ahead && ahead.version === drawnVersion),
});

export function startPreview(early) {
  drawnVersion += early.drawn; // the first part a click drew while the page was parsed (static/early.js)
  addEventListener("scroll", viewChanged, { capture: true, passive: true });
  addEventListener("resize", viewChanged, { passive: true });
  if (!("ResizeObserver" in globalThis)) return;
  sizes = new ResizeObserver((entries) => {
    for (const e of entries) {
      const h = e.borderBoxSize && e.borderBoxSize[0] ? e.borderBoxSize[0].blockSize : e.contentRect.height;
      if (!heights.has(e.target) || Math.abs(heights.get(e.target) - h) > 0.5) viewChanged();
    }
  });
}

// A preview is two parts (title, controls and text; the figures) with the progress card between them.
function parseState(html) {
  const [top, bottom] = html.split(page.cfg.progressMarker);
  const tpl = document.createElement("template");
  tpl.innerHTML = top + bottom;
  return Array.from(tpl.content.children);
}

// The changes from the preview drawn now to a parsed state: the figures, the title and the text (two
// pictures, over and under the controls) become the new state's; the controls stay the same buttons.
function swapOps(holder, [fresh, figures]) {
  const parts = holder.querySelectorAll(":scope > .kv-snap");
  const bar = parts[0].querySelector("[data-says]");
  const next = fresh.querySelector("[data-says]");
  if (!bar || !next || parts[0].getAttribute("lang") !== fresh.getAttribute("lang")) {
    // the first swap (the inline preview is the default language's), all of it in one frame
    return [[null, () => parts[0].replaceWith(fresh)], [null, () => parts[1].replaceWith(figures)]];
  }
  const ops = [];
  diffs().firstPartOps(parts[0], fresh, ops);
  diffs().diff(parts[1], figures, ops);
  return ops;
}

// Which changes are in sight, read on the layout drawn now: before any change, one layout read.
function splitOps(ops) {
  const now = [];
  const later = [];
  for (const op of ops) (outOfSight(op[0]) ? later : now).push(op);
  return { now, later };
}

// The view a split found ahead holds for: the parts' heights now (the layout just read), watched.
function watchView() {
  if (!sizes) return NaN; // never the view of a click: the split is found at each one
  sizes.disconnect();
  heights.clear();
  for (const el of $("kv-snapshot").children) {
    heights.set(el, el.getBoundingClientRect().height);
    sizes.observe(el, { box: "border-box" });
  }
  return viewVersion;
}

function outOfSight(node) {
  if (!node) return false;
  const el = node.nodeType === ELEMENT ? node : node.parentElement;
  // the control bar always: the live region reads what it says (announce), wherever the reader is
  if (!el || !el.isConnected || el.closest("[data-says]")) return false;
  const r = el.getBoundingClientRect(); // nothing changed yet: the layout is the one just drawn
  return r.bottom < 0 || r.top > innerHeight;
}

// The state is the page's (data-state) once both its parts are drawn.
function drawBelow() {
  if (!below) return;
  const { ops, holder, name } = below;
  below = null;
  for (const [, op] of ops) op();
  holder.dataset.state = name;
}

export function swapPreview(holder, html, name) {
  drawBelow();
  let parts = statesParsed.get(name);
  if (!parts) {
    parts = parseState(html);
    probe.parsedInSwap.push(name);
  }
  statesParsed.delete(name); // its nodes are the page's now
  const found = ahead && ahead.name === name && ahead.parts === parts && ahead.version === drawnVersion;
  const split = found && ahead.view === viewVersion ? ahead.split
    : splitOps(found ? ahead.ops : swapOps(holder, parts));
  if (found) probe.usedAhead += 1;
  if (split === (ahead && ahead.split)) probe.splitAhead += 1;
  ahead = null;
  const { now, later } = split;
  for (const [, op] of now) op();
  drawnVersion += 1;
  below = { ops: later, holder, name: name || page.preview.name };
  probe.drawnLater += later.length;
  if (later.length) afterPaint(drawBelow);
  else drawBelow();
}

// The next step's changes, found in idle time (a click then applies them: the comparing is done), or
// at once (`now`).
function findAhead(name, parts, now) {
  const version = drawnVersion;
  (now ? Promise.resolve() : whenIdle()).then(() => {
    if (pv.done || version !== drawnVersion || statesParsed.get(name) !== parts) return;
    drawBelow(); // the changes are found against the whole state drawn
    const ops = swapOps($("kv-snapshot"), parts);
    ahead = { name, parts, version, ops, split: splitOps(ops), view: watchView() };
    probe.foundAhead = name;
  });
}

// Whether these parts' changes were found ahead on the state drawn now.
const foundAhead = (parts) => Boolean(ahead && ahead.parts === parts && ahead.version === drawnVersion);

export const bar = () => document.querySelector("#kv-snapshot [data-says]");
// The live page's words for what the reader's actions say on the state drawn (app/figure/snapshot.py says).
export const says = () => JSON.parse(bar().dataset.says);

// The live region says `text`; with a `line`, the control bar shows it too.
export function announce(text, line) {
  const region = $("kv-say");
  if (region) region.textContent = text;
  if (line !== undefined) {
    drawnVersion += 1;
    const said = bar().querySelector(".said");
    said.className = "said";
    said.textContent = line;
  }
}

export const inlined = () => {
  const holder = $("kv-snapshot");
  return Boolean(holder) && holder.dataset.state === page.preview.name;
};

// The preview of the URL's state is in place: its first paint (static/boot.js markFirstPaint) is
// index.html's own, painted as it was parsed (its first contentful paint, which boot.js's observer may not
// have told yet: its report waits for the page's other tasks); else the next frame's.
export function markPainted() {
  const own = page.preview.name === page.cfg.inlineState;
  const fcp = own ? performance.getEntriesByType("paint").find((e) => e.name === "first-contentful-paint") : null;
  if (fcp) page.boot.markFirstPaint(fcp.startTime);
  else requestAnimationFrame(() => page.boot.markFirstPaint());
}

/* The prerendered states (app/figure/snapshot.py, assets/states-HASH/): their HTML, fetched once; the
 * ones one action from the reader's, parsed and compared ahead in idle time, so that a click finds its
 * state here and its changes found. */

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
