/* What acts before the first paint. The loader's modules (static/loader/, main.js first) are deferred:
 * they run once the document is parsed. The preview paints while it is parsed, so what must act by then
 * is here, a classic script that index.html runs in its <head> (the build puts static/urlquery.js,
 * static/diff.js, static/keys.js, this and static/early.js into that one script: buildsupport/site.py
 * CLASSIC), and the modules take it up from window.kvBoot:
 *
 * - the page's language (<html lang>), the course page's title hidden (embed=1: <html class="kv-embed">),
 *   light or dark (theme=), and the course page's messages (a theme, where its screen begins);
 * - the preview of the URL's state: index.html carries the default state's; another is fetched now and
 *   swapped in before it shows (<html class="kv-swap"> hides the preview until then); its first paint
 *   marked;
 * - the Pyodide worker, started at once: Pyodide boots on the other core while the page is parsed; what
 *   it says before the modules take it (static/loader/live.js) is held for them, in order;
 * - the loading bar, moving from the first paint (its stages are the modules': static/loader/progress.js);
 * - the reader's input times (the live page's first render waits for a pause; the font samples wait for
 *   a press's release): an input made while the page is parsed counts.
 *
 * Under Node (require) it gives its pure functions and does nothing else (tests/js/loader/boot.test.mjs).
 */
(function () {
  "use strict";

  // Every state a URL can ask for with the default seed and top-p was prerendered (language, mode, t).
  // Another seed or top-p writes another text after the prompt: the preview then shows the prompt and
  // says where the page will go (`later`, the t asked for).
  function previewState(cfg, query) {
    const p = cfg.query.params;
    const prompt = p.t.bounds[0];
    const t = query.t === null ? prompt : query.t;
    const sameText = query.seed === p.seed.default && query.top_p === p.top_p.default;
    const shown = sameText ? t : prompt;
    return { name: `${query.lang}-${query.mode}-${shown}`, mode: query.mode, t: shown, later: shown === t ? null : t };
  }

  // What static/worker.js starts with: every address absolute (`abs`), and where the reader is on the
  // preview: the query of that state (`search`) after its first `seq` actions.
  function workerConfig(cfg, abs, search, seq) {
    return {
      pyodide: abs(cfg.pyodide),
      indexURL: abs(cfg.indexURL),
      stdlib: cfg.stdlib ? abs(cfg.stdlib) : null,
      lock: abs(cfg.lock),
      packageBaseUrl: abs(cfg.packageBaseUrl),
      packages: cfg.packages,
      app: abs(cfg.app),
      panelCdnRoot: abs(cfg.panelCdnRoot),
      lazy: abs(cfg.lazy),
      query: search,
      seq,
    };
  }

  if (typeof module === "object" && module.exports) {
    module.exports = { previewState, workerConfig };
    return;
  }

  const cfg = JSON.parse(document.getElementById("kv-config").textContent);
  const query = window.kvReadQuery(location.search, cfg.query).values;
  const lang = query.lang;
  const html = document.documentElement;
  const abs = (url) => new URL(url, document.baseURI).href;
  const t0 = performance.now();
  const kv = (window.kv = { lang, times: {}, requests: [], worker: null });

  // <html lang>, here only and only when it changes: written, even with its own value, it restyles and
  // lays out the whole page again (every text inherits the locale).
  if (html.lang !== lang) html.lang = lang;
  html.classList.toggle("kv-embed", query.embed);
  // Light or dark from the first paint (app/style theme_css): theme=light|dark fixes it, auto follows
  // the reader's system. A course page whose palette is a toggle can also say it live, without a
  // reload: postMessage({type: "kv-explorable:theme", theme: "dark"}) to the frame (docs/embedding.md).
  const useTheme = (theme) => {
    if (theme === "light" || theme === "dark") html.dataset.kvTheme = theme;
    else if (theme === "auto") delete html.dataset.kvTheme;
  };
  useTheme(query.theme);
  // A frame that takes its content's height never scrolls itself: the course page scrolls. Its script
  // says where the frame's top is in its window ({type: "kv-explorable:view", top}, on every scroll),
  // and the figure's control bar sticks that far down the frame, at the top of what the reader sees,
  // while the figure is in view (app/style/bar.css, --kv-host-top). The frame's height goes the other
  // way (static/loader/frame.js).
  addEventListener("message", (event) => {
    if (event.source !== window.parent || !event.data) return;
    if (event.data.type === "kv-explorable:theme") useTheme(event.data.theme);
    if (event.data.type === "kv-explorable:view" && Number.isFinite(event.data.top)) {
      const inside = Math.max(0, Math.round(-event.data.top));
      html.style.setProperty("--kv-host-top", inside + "px");
    }
  });

  const preview = previewState(cfg, query);
  // The inline preview is another state: hidden until the right one is in place.
  if (preview.name !== cfg.inlineState) html.classList.add("kv-swap");
  const previewURL = cfg.states + preview.name + ".html";
  const snapshotFetch = preview.name === cfg.inlineState ? null : fetch(abs(previewURL)).then((r) => {
    if (!r.ok) throw new Error(`${previewURL}: HTTP ${r.status}`);
    return r.text();
  });
  if (snapshotFetch) snapshotFetch.catch(() => {});

  // The first paint, marked "kv-first-paint" as it happens (tests/bench_load.py, the tests): index.html's own
  // preview paints as the page is parsed, and its first contentful paint is the mark. Another state's
  // preview is hidden until it is swapped in: the modules mark the frame after that (`markFirstPaint()`,
  // static/loader/preview.js markPainted). `firstPainted` resolves then (the font samples wait for it).
  let painted;
  const firstPainted = new Promise((resolve) => { painted = resolve; });
  function markFirstPaint(startTime) {
    if (performance.getEntriesByName("kv-first-paint").length) return;
    performance.mark("kv-first-paint", startTime === undefined ? undefined : { startTime });
    kv.times.firstPaint = (startTime === undefined ? performance.now() : startTime) - t0;
    painted();
  }
  const shown = () => {
    const holder = document.getElementById("kv-snapshot");
    return Boolean(holder) && holder.dataset.state === preview.name;
  };
  if (preview.name === cfg.inlineState && "PerformanceObserver" in window) {
    try {
      new PerformanceObserver((list) => {
        for (const e of list.getEntries()) if (e.name === "first-contentful-paint" && shown()) markFirstPaint(e.startTime);
      }).observe({ type: "paint", buffered: true });
    } catch (e) { /* old browsers: the mark comes with the controls (static/loader/preview.js markPainted) */ }
  }

  // The worker. Until the modules take it (`takeWorker`, with the handlers of static/loader/live.js),
  // its messages and errors are held, in order; an error's default (a report in the console) is
  // prevented at once, as the modules' handler does.
  const held = [];
  function startWorker(search, seq) {
    const worker = (kv.worker = new Worker(abs(cfg.worker)));
    worker.onmessage = (event) => held.push(event);
    worker.onerror = (event) => {
      if (event.preventDefault) event.preventDefault();
      held.push(event);
    };
    worker.postMessage({ type: "start", config: workerConfig(cfg, abs, search, seq) });
    return worker;
  }
  function takeWorker(worker, onMessage, onError) {
    worker.onmessage = onMessage;
    worker.onerror = onError;
    for (const event of held.splice(0)) (event.type === "error" ? onError : onMessage)(event);
  }

  // The loading bar: its stage's share of the bar and expected duration (ms); it moves ten times a
  // second, in steps a reader's eye follows (a transition between them would keep the compositor drawing
  // at every vsync of the boot), and each value is written only when it changed. `stopped`: a failure
  // shows (the modules set it, and the stage).
  const STAGES = { runtime: [0, 0.45, 2500], packages: [0.45, 0.6, 800], app: [0.6, 1, 2200] };
  const bar = { stage: "runtime", since: t0, stopped: false, shown: null };
  function tick() {
    const el = document.getElementById("kv-bar");
    if (!el || bar.stopped || !STAGES[bar.stage]) return;
    const [a, b, tau] = STAGES[bar.stage];
    const f = (a + (b - a) * (1 - Math.exp(-(performance.now() - bar.since) / tau))).toFixed(3);
    if (f === bar.shown) return;
    const percent = String(Math.round(f * 100));
    el.style.transform = `scaleX(${f})`;
    const meter = document.getElementById("kv-meter");
    if (meter.getAttribute("aria-valuenow") !== percent) meter.setAttribute("aria-valuenow", percent);
    bar.shown = f;
  }
  setInterval(tick, 100);

  // The reader's input times: `last`, any input; `down`, a press (a button or a finger) not released yet.
  const input = { last: -Infinity, down: null };
  const capture = { capture: true, passive: true };
  for (const type of ["pointerdown", "keydown", "wheel", "touchstart"]) {
    addEventListener(type, () => { input.last = performance.now(); }, capture);
  }
  addEventListener("pointerdown", () => { input.down = performance.now(); }, capture);
  for (const type of ["pointerup", "pointercancel"]) addEventListener(type, () => { input.down = null; }, capture);

  const boot = (window.kvBoot = {
    cfg, query, lang, abs, t0, kv, preview, snapshotFetch, firstPainted, markFirstPaint, bar, tick, input,
    startWorker, takeWorker, workerError: null,
  });
  try {
    startWorker(location.search, 0);
  } catch (e) {
    boot.workerError = e; // shown once the page is parsed (static/loader/live.js)
  }
})();
