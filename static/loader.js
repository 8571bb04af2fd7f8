/* Page loader (main thread).
 *
 * 1. At once: read the URL (static/urlquery.js, the app's own rules) and start
 *    the Pyodide worker. The URL's state is already on the page as plain HTML:
 *    index.html carries the default state's preview, the build prerendered every
 *    other state a URL can ask for (language, mode, t) and the right one is
 *    fetched and swapped in before it shows (no preview of another state first).
 * 2. The reader sees that state while Python boots; embed=1 hides the title. Its
 *    controls answer at once (Avanzar, Animar, the mode switch, Reiniciar, the step
 *    back, their keys): the loader draws the prerendered states, fetched ahead, and says the
 *    live page's words; what only the model answers is kept for it.
 * 3. Show the loading stage (runtime, packages, app) in a progress bar between
 *    the preview's controls and its figure, where the reader is looking; on a
 *    failure show what failed and a retry button.
 * 4. When the worker sends the live document (built at the reader's position on
 *    the preview): render it, drop the snapshot, link both documents (same
 *    protocol as Panel's pyodide-worker handler), replay once the reader's
 *    actions it was not built with and mark <body data-ready="true">.
 *
 * In an iframe it posts the content's height to the parent page whenever it
 * changes, growing and shrinking (docs/embedding.md).
 *
 * Test hooks: body[data-stage], body[data-ready], body[data-error],
 * #kv-error, #kv-snapshot[data-state], body[data-kept], #kv-say, performance
 * marks "kv-first-paint", "kv-controls", "kv-first-answer" and "kv-ready",
 * window.kv (kv.preview, kv.answers, kv.replayed).
 */
(function () {
  "use strict";

  const cfg = JSON.parse(document.getElementById("kv-config").textContent);
  const abs = (u) => new URL(u, document.baseURI).href;
  const query = window.kvReadQuery(location.search, cfg.query).values;
  const lang = query.lang;
  // A text only when it changes: the same words written again are laid out again.
  const setText = (el, text) => {
    if (el.textContent !== text) el.textContent = text;
  };
  // <html lang>, here only and only when it changes: written, even with its own value, it restyles and
  // lays out the whole page again (the locale is inherited by every text: 25-50 ms of the preview at 4x;
  // it was written again at DOMContentLoaded, in the task that answers a click made before the controls)
  if (document.documentElement.lang !== lang) document.documentElement.lang = lang;
  document.documentElement.classList.toggle("kv-embed", query.embed);
  // Light or dark from the first paint (app/style theme_css): theme=light|dark fixes it, auto follows
  // the reader's system. A course page whose palette is a toggle can also say it live, without a
  // reload: postMessage({type: "kv-explorable:theme", theme: "dark"}) to the frame (docs/embedding.md).
  const useTheme = (theme) => {
    if (theme === "light" || theme === "dark") document.documentElement.dataset.kvTheme = theme;
    else if (theme === "auto") delete document.documentElement.dataset.kvTheme;
  };
  useTheme(query.theme);
  // A frame that takes its content's height never scrolls itself: the course page scrolls. Its script
  // says where the frame's top is in its window ({type: "kv-explorable:view", top}, on every scroll),
  // and the figure's control bar sticks that far down the frame, at the top of what the reader sees,
  // while the figure is in view (app/style/bar.css, --kv-host-top).
  addEventListener("message", (event) => {
    if (event.source !== window.parent || !event.data) return;
    if (event.data.type === "kv-explorable:theme") useTheme(event.data.theme);
    if (event.data.type === "kv-explorable:view" && Number.isFinite(event.data.top)) {
      const inside = Math.max(0, Math.round(-event.data.top));
      document.documentElement.style.setProperty("--kv-host-top", inside + "px");
    }
  });

  // The shell's texts come from the app's catalogs (app/i18n/LANG.po, the keys shell_*): the build puts
  // every language's into the configuration. A text a language lacks reads the default language's.
  const TEXT = Object.assign({}, cfg.text[cfg.defaultLang], cfg.text[lang]);
  const STAGE_TEXT = { runtime: "shell_runtime", packages: "shell_packages", app: "shell_app" };

  // Share of the bar and expected duration (ms) of each stage.
  const STAGES = { runtime: [0, 0.45, 2500], packages: [0.45, 0.6, 800], app: [0.6, 1, 2200] };

  const kv = (window.kv = { lang, times: {}, requests: [], worker: null });
  // The reader's code sandbox (app/sandbox/host.js) runs on the same runtime files as the app.
  if (cfg.sandbox) {
    window.kvSandboxConfig = Object.assign({}, cfg.sandbox);
    for (const key of ["worker", "pyodide", "indexURL", "stdLibURL", "lockFileURL", "packageBaseUrl"]) {
      if (cfg.sandbox[key]) window.kvSandboxConfig[key] = abs(cfg.sandbox[key]);
    }
  }
  const t0 = performance.now();
  let worker = null;
  let stage = "runtime";
  let stageStart = t0;
  let failed = false;
  let live = false;
  const downloads = { runtime: new Set(), packages: new Set() };
  let runtimeSeen = false;

  /* ---------------- worker ---------------- */

  function workerConfig() {
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
      query: pv.seq ? positionQuery() : location.search,
      seq: pv.seq,
    };
  }

  function startWorker() {
    failed = false;
    document.body && document.body.removeAttribute("data-error");
    setStage("runtime");
    try {
      worker = kv.worker = new Worker(abs(cfg.worker));
    } catch (e) {
      return showError({ where: cfg.worker, message: String(e), failures: [] });
    }
    worker.busy = false;
    worker.queue = [];
    worker.onmessage = onWorkerMessage;
    worker.onerror = (e) => {
      e.preventDefault && e.preventDefault();
      showError({ where: cfg.worker, message: e.message || "worker error", failures: [] });
    };
    worker.postMessage({ type: "start", config: workerConfig() });
  }

  let patching = 0;
  function sendChange(jsdoc, event) {
    if ((event.setter_id != null && event.setter_id == "py") || patching > 0) return;
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

  // The worker's thread starts only when this page's main thread is free to start it: BokehJS waits
  // for the worker's "app" stage (a worker that started after BokehJS had run booted 0.6 s later).
  async function onWorkerMessage(event) {
    const msg = event.data;
    switch (msg.type) {
      case "fetch":
        onFetch(msg);
        break;
      case "mark":   // the worker's performance marks, on this page's timeline
        performance.mark(msg.name, { startTime: msg.at - performance.timeOrigin });
        break;
      case "status":
        kv.requests.push(msg);
        if (msg.stage === "app") {
          setStage("app", msg.detail);
          domParsed.then(() => afterPaint(startBokehJS));
        }
        break;
      case "error":
        showError(msg);
        break;
      case "render":
        kv.times.worker = msg.times;
        await renderLive(msg);
        break;
      case "idle":
        inOrder(() => {
          if (worker.queue.length) {
            const patch = worker.jsdoc.create_json_patch(worker.queue);
            worker.queue = [];
            worker.postMessage({ type: "patch", patch });
          } else {
            worker.busy = false;
          }
        });
        break;
      case "patch": {
        // a patch that names a model BokehJS does not know waits for its script (runOnDemand; if that fails,
        // it has shown why and stopped the page)
        const more = asksForMore(msg.patch);
        inOrder(() => (more ? runOnDemand().then(() => applyPatch(msg), () => {}) : applyPatch(msg)), more);
        break;
      }
      case "lazy":
        kv.lazy = (kv.lazy || []).concat([msg]);
        break;
      case "modules":
        kv.sourceModules = msg.modules;
        break;
      case "pyerror":
        console.error(msg.message);
        document.body.setAttribute("data-pyerror", msg.message.split("\n").slice(-2).join(" "));
        showError({ where: "app", message: msg.message.trim().split("\n").slice(-1)[0], failures: [], soft: true });
        break;
    }
  }

  // What the worker says after a patch that waits, in its order: the patches, and "idle" (the reader's
  // changes go to Python only once the page has applied what Python sent before).
  let patchesWaiting = null;
  function inOrder(fn, waits = false) {
    if (!patchesWaiting && !waits) return fn();
    const mine = (patchesWaiting = (patchesWaiting || Promise.resolve())
      .then(fn)
      .catch((e) => (window.reportError ? reportError(e) : console.error(e)))
      .finally(() => { if (patchesWaiting === mine) patchesWaiting = null; }));
  }

  function applyPatch(msg) {
    try {
      patching += 1;
      worker.jsdoc.apply_json_patch(msg.patch, msg.buffers);
    } finally {
      patching -= 1;
    }
  }

  function onFetch(msg) {
    kv.requests.push(msg);
    if (msg.kind === "app") return;
    const set = downloads[msg.kind];
    if (msg.state === "start") set.add(msg.url);
    else set.delete(msg.url);
    if (msg.kind === "runtime") runtimeSeen = true;
    if (stage !== "app" && !failed) {
      // Packages download alongside the runtime; the runtime is the slower part.
      const next = runtimeSeen && downloads.runtime.size === 0 && msg.kind === "packages" ? "packages" : stage;
      if (next !== stage) setStage(next);
    }
  }

  /* ---------------- the preview: the URL's own state ---------------- */

  // Every state a URL can ask for with the default seed and top-p was prerendered (language, mode, t).
  // Another seed or top-p writes another text after the prompt: the preview then shows the prompt and
  // says where the page will go.
  function previewState() {
    const p = cfg.query.params;
    const prompt = p.t.bounds[0];
    const t = query.t === null ? prompt : query.t;
    const sameText = query.seed === p.seed.default && query.top_p === p.top_p.default;
    const shown = sameText ? t : prompt;
    return { name: `${lang}-${query.mode}-${shown}`, mode: query.mode, t: shown, later: shown === t ? null : t };
  }
  const preview = previewState();
  // The inline preview is another state: hidden until the right one is in place.
  if (preview.name !== cfg.inlineState) document.documentElement.classList.add("kv-swap");

  let painted;
  const firstPainted = new Promise((resolve) => { painted = resolve; });
  function markFirstPaint(startTime) {
    if (performance.getEntriesByName("kv-first-paint").length) return;
    performance.mark("kv-first-paint", startTime === undefined ? undefined : { startTime });
    kv.times.firstPaint = (startTime === undefined ? performance.now() : startTime) - t0;
    painted();
  }

  // The preview in index.html paints with the page: its first contentful paint is the mark.
  const inlined = () => {
    const holder = document.getElementById("kv-snapshot");
    return holder && holder.dataset.state === preview.name;
  };
  if ("PerformanceObserver" in window) {
    try {
      new PerformanceObserver((list) => {
        for (const e of list.getEntries()) {
          if (e.name === "first-contentful-paint" && inlined()) markFirstPaint(e.startTime);
        }
      }).observe({ type: "paint", buffered: true });
    } catch (e) { /* old browsers: the mark comes at DOMContentLoaded */ }
  }
  const previewURL = cfg.states + preview.name + ".html";
  const snapshotFetch = preview.name === cfg.inlineState ? null : fetch(abs(previewURL)).then((r) => {
    if (!r.ok) throw new Error(`${previewURL}: HTTP ${r.status}`);
    return r.text();
  });
  if (snapshotFetch) snapshotFetch.catch(() => {});

  // The changes that make `old` be `fresh`, node by node, touching only what differs: a step changes one
  // token, one bar, one column and a few numbers (and at the prompt's first step the clock's plot
  // comes), and the browser restyles and lays out those alone. Replacing the whole preview
  // made it restyle and lay out all of it on every step, most of a frame's budget at 1x. The changes are
  // found without touching the page (`ops`, applied in order later), so the step the reader most likely
  // takes next is found ahead, in idle time, and the click only applies it.
  const similar = (a, b) => a.nodeType === b.nodeType && a.nodeName === b.nodeName &&
    (a.nodeType !== Node.ELEMENT_NODE || a.getAttribute("class") === b.getAttribute("class"));
  // A node's children, walked (Array.from a NodeList goes through its iterator: in a profile, 43% of the
  // diff's own time)
  function childrenOf(node) {
    const out = [];
    for (let n = node.firstChild; n; n = n.nextSibling) out.push(n);
    return out;
  }
  // Each change is [the node where it is drawn, the change]: the ones out of the reader's sight wait
  // for the frame after the answer (swapPreview). An insertion is placed by the node it goes before,
  // which a later change may replace: the two are drawn in the same frame, in their order.
  function diff(old, fresh, ops) {
    if (old.nodeType !== fresh.nodeType || old.nodeName !== fresh.nodeName) return ops.push([old, () => old.replaceWith(fresh)]);
    if (old.nodeType !== Node.ELEMENT_NODE) {
      if (old.nodeValue !== fresh.nodeValue) ops.push([old, () => { old.nodeValue = fresh.nodeValue; }]);
      return;
    }
    if (old.isEqualNode(fresh)) return; // most of the preview: compared natively, left alone
    // names and values as strings: `attributes` makes an Attr object for each (47% of its own time, profiled)
    for (const name of old.getAttributeNames()) if (!fresh.hasAttribute(name)) ops.push([old, () => old.removeAttribute(name)]);
    for (const name of fresh.getAttributeNames()) {
      const value = fresh.getAttribute(name);
      if (old.getAttribute(name) !== value) ops.push([old, () => old.setAttribute(name, value)]);
    }
    // the children, in order: nodes that came or went (up to AHEAD in a row) found by looking ahead
    const olds = childrenOf(old);
    const news = childrenOf(fresh);
    const AHEAD = 4;
    let i = 0;
    let j = 0;
    while (i < olds.length && j < news.length) {
      if (!similar(olds[i], news[j])) {
        let k = 1;
        while (k <= AHEAD && !(i + k < olds.length && similar(olds[i + k], news[j])) &&
               !(j + k < news.length && similar(olds[i], news[j + k]))) k++;
        if (k <= AHEAD && i + k < olds.length && similar(olds[i + k], news[j])) {
          for (const gone of olds.slice(i, i + k)) ops.push([gone, () => gone.remove()]);
          i += k;
          continue;
        }
        if (k <= AHEAD) {
          const before = olds[i];
          for (const came of news.slice(j, j + k)) ops.push([before, () => old.insertBefore(came, before)]);
          j += k;
          continue;
        }
      }
      diff(olds[i++], news[j++], ops);
    }
    for (const node of olds.slice(i)) ops.push([node, () => node.remove()]);
    // an appended node is drawn where the last child is (below it): a section's card that comes at the
    // end of the figures is drawn with the changes out of sight when that end is
    const last = old.lastElementChild || old;
    for (const node of news.slice(j)) ops.push([last, () => old.appendChild(node)]);
  }

  // A preview is two parts (title, controls and text; the figures) with the progress card between them.
  // The figures, the title and the text (two pictures, over and under the controls) become the new
  // state's; the controls stay the same buttons (a reader's focus stays on them, the speed keeps the
  // URL's), their state copied from the new one.
  function parseState(html) {
    const [top, bottom] = html.split(cfg.progressMarker);
    const tpl = document.createElement("template");
    tpl.innerHTML = top + bottom;
    return Array.from(tpl.content.children);
  }

  // The changes from the preview drawn now to a parsed state.
  function swapOps(holder, [fresh, figures]) {
    const parts = holder.querySelectorAll(":scope > .kv-snap");
    const bar = parts[0].querySelector("[data-says]");
    const next = fresh.querySelector("[data-says]");
    if (!bar || !next || parts[0].getAttribute("lang") !== fresh.getAttribute("lang")) {
      // the first swap (the inline preview is the default language's), all of it in one frame
      return [[null, () => parts[0].replaceWith(fresh)], [null, () => parts[1].replaceWith(figures)]];
    }
    const ops = [];
    firstPartOps(parts[0], fresh, ops);
    diff(parts[1], figures, ops);
    return ops;
  }

  // The changes from the preview's first part drawn now (`part`: the title and the text, two pictures,
  // and the control bar) to another state's (`fresh`).
  function firstPartOps(part, fresh, ops) {
    const bar = part.querySelector("[data-says]");
    const next = fresh.querySelector("[data-says]");
    const pictures = fresh.querySelectorAll(".kv-picture");
    part.querySelectorAll(".kv-picture").forEach((picture, i) => diff(picture, pictures[i], ops));
    ops.push([bar, () => {
      bar.dataset.says = next.dataset.says;
      bar.dataset.kvState = next.dataset.kvState;
    }]);
    for (const sel of [".bar-t", ".said"]) diff(bar.querySelector(sel), next.querySelector(sel), ops);
    for (const b of bar.querySelectorAll("[data-mode]")) diff(b, next.querySelector(`[data-mode="${b.dataset.mode}"]`), ops);
  }

  // What the preview shows changes only through swapPreview and announce (each counts a version): the
  // changes found ahead hold while the version they were found on is the one drawn.
  let drawnVersion = 0;
  let ahead = null; // {name, parts, version, ops, split: {now, later}, view}

  // The changes in the reader's sight are drawn in the click's own frame; the rest (on a phone, most of
  // the figure: the clock's plot comes with the first step) in the next one, so the answer's frame lays
  // out what the reader sees. The state is the page's (data-state) once both are drawn.
  let below = null; // {ops, holder, name}: the last swap's changes out of sight, not drawn yet

  // Which changes are in sight is found with the changes ahead (findAhead), on the layout then drawn: the
  // click reads no layout (a read there laid out the page once more, hover and focus styles with it,
  // before the changes: 2-12 ms of a click at 4x). A scroll, a resize, or a part of the preview (or the
  // loading card between them) drawn at another height since, makes it be found again at the click.
  let viewVersion = 0;
  const viewChanged = () => { viewVersion += 1; };
  addEventListener("scroll", viewChanged, { capture: true, passive: true });
  addEventListener("resize", viewChanged, { passive: true });
  const heights = new Map(); // each of the preview's parts -> its height when the split was found
  const sizes = "ResizeObserver" in window ? new ResizeObserver((entries) => {
    for (const e of entries) {
      const h = e.borderBoxSize && e.borderBoxSize[0] ? e.borderBoxSize[0].blockSize : e.contentRect.height;
      if (!heights.has(e.target) || Math.abs(heights.get(e.target) - h) > 0.5) viewChanged();
    }
  }) : null;

  function splitOps(ops) {
    const now = [];
    const later = [];
    for (const op of ops) (outOfSight(op[0]) ? later : now).push(op); // before any change: one layout read
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
    const el = node.nodeType === Node.ELEMENT_NODE ? node : node.parentElement;
    // the control bar always: the live region reads what it says (announce), wherever the reader is
    if (!el || !el.isConnected || el.closest("[data-says]")) return false;
    const r = el.getBoundingClientRect(); // nothing changed yet: the layout is the one just drawn
    return r.bottom < 0 || r.top > innerHeight;
  }

  function drawBelow() {
    if (!below) return;
    const { ops, holder, name } = below;
    below = null;
    for (const [, op] of ops) op();
    holder.dataset.state = name;
  }

  function swapPreview(holder, html, name) {
    drawBelow();
    let parts = statesParsed.get(name);
    if (!parts) {
      parts = parseState(html);
      pv.parsedInSwap.push(name); // tests/test_preview_browser.py
    }
    statesParsed.delete(name); // its nodes are the page's now
    const found = ahead && ahead.name === name && ahead.parts === parts && ahead.version === drawnVersion;
    const split = found && ahead.view === viewVersion ? ahead.split
      : splitOps(found ? ahead.ops : swapOps(holder, parts));
    if (found) pv.usedAhead += 1; // tests/test_preview_browser.py
    if (split === (ahead && ahead.split)) pv.splitAhead += 1; // likewise
    ahead = null;
    const { now, later } = split;
    for (const [, op] of now) op();
    drawnVersion += 1;
    below = { ops: later, holder, name: name || preview.name };
    pv.drawnLater += later.length; // tests/test_preview_browser.py
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
      pv.foundAhead = name;
    });
  }

  function settlePreview(holder) {
    const speed = holder.querySelector(".speed b");
    if (speed && query.speed !== cfg.query.params.speed.default) speed.textContent = String(query.speed);
    setText($("kv-note"), preview.later === null ? TEXT.shell_snapshot : TEXT.shell_later
      .replace("{t}", preview.later).replace("{seed}", query.seed).replace("{top_p}", query.top_p));
    document.documentElement.classList.remove("kv-swap");
  }

  async function renderSnapshot() {
    if (live) return;
    const holder = document.getElementById("kv-snapshot");
    performance.mark("kv-snapshot-start");
    readAhead();
    if (!inlined()) {
      try {
        swapPreview(holder, await loadState(preview.name), preview.name);
      } catch (e) {
        pv.active = false; // another state shows: every action waits for the model
        console.warn("preview unavailable", e);
      }
    }
    settlePreview(holder);
    // index.html's own preview painted as it was parsed: its first contentful paint, which the observer
    // above may not have told yet (its report waits for the page's other tasks); else the next frame's
    const fcp = preview.name === cfg.inlineState ? performance.getEntriesByType("paint").find((e) => e.name === "first-contentful-paint") : null;
    if (fcp) markFirstPaint(fcp.startTime);
    else requestAnimationFrame(() => markFirstPaint());
    startControls(holder);
  }

  /* ---------------- the preview answers the lesson's controls ---------------- */

  // Avanzar, Animar (at the page's speed), the mode switch, Reiniciar and their keys move through the
  // prerendered states (the ones ahead fetched in advance, so a click is answered in the frame it
  // was made), and the live region says what the live page says (each state carries the live page's
  // words: app/figure/snapshot.py `says`). What only the running model gives waits for it and says so:
  // the step past the window (the lesson's IndexError) and every action after it are kept, in order;
  // the sections, the clock and the settings say they need the model. The worker builds the app at
  // the reader's position (a "position" message after each action: the query of that state, and how
  // many actions it holds); the page replays, once, the actions the app was not built with.
  const PROMPT = cfg.query.params.t.bounds[0];
  const LAST = cfg.query.params.t.bounds[1];
  const pv = (kv.preview = {
    mode: preview.mode,
    t: preview.t,
    active: preview.later === null, // another seed or top-p: every action waits for the model
    playing: false,
    kept: false, // an action only the model answers is waiting: the ones after it wait too
    wanted: false, // the reader asked for what only the live page has (a section, the speed)
    seq: 0, // actions so far that changed the page's state
    log: [], // [{seq, cmd}]
    shown: 0, // actions drawn
    done: false, // the live page took over
    foundAhead: null, // the last state whose changes were found ahead (findAhead)
    usedAhead: 0, // swaps that applied changes found ahead
    splitAhead: 0, // of those, the swaps whose changes in sight were found ahead too (splitOps)
    drawnLater: 0, // changes out of the reader's sight, drawn in the frame after the answer's (swapPreview)
    drawnEarly: null, // the state whose first part a click before the controls drew at once (drawEarly)
    parsedInSwap: [], // the states parsed by the swap that draws them, not ahead (swapPreview)
    fontsAsked: false, // every text of the font samples laid out (askForFonts)
    fontsWaited: 0, // times a text of them waited for a press's click (askForFonts)
  });
  const stateTexts = new Map(); // state name -> its HTML
  // index.html carries the states one action from its own preview (the first click needs no fetch, and
  // no parse: the browser parsed them with the page; their nodes move from the template as they are,
  // for a copy into the page's document took 140 ms of a phone's main thread): read once the document
  // is parsed.
  function readAhead() {
    for (const tpl of document.querySelectorAll("#kv-snapshot > template[data-kv-first]")) tpl.remove();
    for (const tpl of document.querySelectorAll("template[data-kv-ahead]")) {
      const name = tpl.dataset.kvAhead;
      if (name.startsWith(lang + "-")) {
        stateTexts.set(name, tpl.innerHTML);
        statesParsed.set(name, Array.from(tpl.content.children));
      }
      tpl.remove();
    }
  }
  const statesParsed = new Map(); // state name -> its two parts, parsed ahead in idle time (used once)
  const stateFetches = new Map(); // state name -> the promise of its HTML
  let chain = Promise.resolve(); // the states are drawn in the order of the actions
  const stateName = (mode, t) => `${lang}-${mode}-${t}`;
  const otherMode = () => cfg.query.params.mode.choices.find((m) => m !== pv.mode);

  function loadState(name) {
    if (stateTexts.has(name)) return Promise.resolve(stateTexts.get(name));
    if (!stateFetches.has(name)) {
      const url = abs(cfg.states + name + ".html");
      const got = (name === preview.name && snapshotFetch ? snapshotFetch : fetch(url).then((r) => {
        if (!r.ok) throw new Error(`${url}: HTTP ${r.status}`);
        return r.text();
      })).then((text) => {
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
  // most likely Avanzar, and idle time comes late while BokehJS is staged and the worker boots (at 4x its
  // changes, found by the click itself, were a fifth of the click's time).
  function fetchAhead(first = false) {
    if (pv.done || !pv.active) return;
    const other = otherMode();
    const names = [stateName(other, pv.t)];
    if (pv.t !== PROMPT) names.push(stateName(pv.mode, PROMPT), stateName(pv.mode, pv.t - 1));
    for (let k = 1; k <= (pv.playing ? 3 : 1) && pv.t + k <= LAST; k++) names.push(stateName(pv.mode, pv.t + k));
    // the parts parsed ahead that no action one away needs are let go; not those of where the reader is
    // (an action's state not drawn yet: parsed again, a click's state cost 80 ms of that click at 4x)
    const here = stateName(pv.mode, pv.t);
    for (const name of statesParsed.keys()) if (name !== here && !names.includes(name)) statesParsed.delete(name);
    for (const name of names) {
      const soon = first && name === stateName(pv.mode, pv.t + 1);
      loadState(name).then((html) => (soon ? new Promise(afterPaint) : whenIdle()).then(() => {
        if (pv.done || !stateTexts.has(name)) return;
        if (!statesParsed.has(name)) statesParsed.set(name, parseState(html));
        if (name !== stateName(pv.mode, pv.t + 1)) return;
        const parts = statesParsed.get(name);
        if (!ahead || ahead.parts !== parts || ahead.version !== drawnVersion) findAhead(name, parts, soon);
      })).catch(() => {});
    }
  }

  const bar = () => document.querySelector("#kv-snapshot [data-says]");
  const says = () => JSON.parse(bar().dataset.says);

  function announce(text, line) {
    const region = $("kv-say");
    if (region) region.textContent = text;
    if (line !== undefined) {
      drawnVersion += 1;
      const said = bar().querySelector(".said");
      said.className = "said";
      said.textContent = line;
    }
  }

  function positionQuery() {
    const params = new URLSearchParams(location.search);
    params.set("mode", pv.mode);
    params.set("t", String(pv.t));
    return "?" + params.toString();
  }

  // An action the model answers once it runs: kept, in order; the page says it waits for the model.
  function keep(cmd) {
    pv.kept = true;
    pv.seq += 1;
    pv.log.push({ seq: pv.seq, cmd, kept: true });
    document.body.dataset.kept = String(pv.log.filter((e) => e.kept).length);
    if (wakeRender) wakeRender(); // the live page, now
    chain = chain.then(() => announce(TEXT.shell_kept, TEXT.shell_kept));
  }

  // The page moves to (mode, t): the worker hears of it at once; the state is drawn when its HTML is
  // here (at once when it was fetched ahead), in order, and `say` picks what the live region says.
  function go(mode, t, cmd, say, since = performance.now()) {
    pv.mode = mode;
    pv.t = t;
    pv.seq += 1;
    pv.log.push({ seq: pv.seq, cmd });
    const query = positionQuery();
    document.body.dataset.kvState = query;
    if (worker) worker.postMessage({ type: "position", seq: pv.seq, query });
    const name = stateName(mode, t);
    const seq = pv.seq;
    chain = chain
      .then(() => stateTexts.get(name) || loadState(name))
      .then((html) => {
        if (pv.done) return;
        swapPreview($("kv-snapshot"), html, name);
        pv.shown = seq;
        // how long the reader waited (tests/bench_load.py): the state is drawn in the next frame
        const at = performance.now();
        kv.answers = (kv.answers || []).concat([at - since]);
        // marked after that frame (a mark here sent it to the browser in the click: 1-19 ms at 4x)
        if (kv.answers.length === 1) afterPaint(() => performance.mark("kv-first-answer", { startTime: at }));
        const words = says();
        const text = say(words);
        const said = saidEarly; // said when its first part was drawn (drawEarly), and nothing since: not again
        saidEarly = null;
        if (said !== text || $("kv-say").textContent !== text) announce(text);
        setPlayLabel(words);
        afterPaint(fetchAhead); // the next states' requests after this frame, not before it
      })
      .catch((e) => {
        console.warn("preview state unavailable", e);
        pv.active = false; // the rest waits for the model (the worker already knows where the reader is)
        stopPlaying(true);
        announce(TEXT.shell_kept, TEXT.shell_kept);
      });
  }

  function setPlayLabel(words) {
    const button = bar().querySelector("[data-kv=play]");
    const label = pv.playing ? words.pause_label : words.play_label;
    setText(button, label);
  }

  function period() {
    const reduced = window.matchMedia && window.matchMedia("(prefers-reduced-motion: reduce)").matches;
    return 1000 / (reduced ? Math.min(query.speed, 2) : query.speed);
  }

  // The animation (the live page's Controls.tick): a step every period, counted from one step's start
  // to the next, each after the one before is drawn; it stops at the window's end (the step past it
  // is the reader's).
  function tickPreview() {
    if (!pv.playing || pv.done) return;
    const start = performance.now();
    act("step");
    if (pv.t >= LAST || !pv.active || pv.kept) return stopPlaying(true);
    chain.then(() => {
      if (pv.playing && !pv.done) pv.timer = setTimeout(tickPreview, Math.max(0, period() - (performance.now() - start)));
    });
  }

  function stopPlaying(quiet) {
    if (!pv.playing) return;
    pv.playing = false;
    clearTimeout(pv.timer);
    chain = chain.then(() => {
      if (pv.done) return;
      const words = says();
      setPlayLabel(words);
      if (!quiet) announce(words.pause);
    });
  }

  // `since`: when the reader asked (kv.answers counts from it); a kept early input's own time.
  function act(cmd, since) {
    if (pv.done || live) return;
    if (pv.kept || !pv.active) return keep(cmd);
    const other = otherMode();
    switch (cmd) {
      case "step":
        if (pv.t >= LAST) return keep(cmd); // past the window: the model's own IndexError
        return go(pv.mode, pv.t + 1, cmd, (w) => w.step, since);
      case "toggle":
        return go(other, pv.t, cmd, (w) => w.mode[other], since);
      case "reset":
        stopPlaying(true);
        return go(pv.mode, PROMPT, cmd, (w) => w.reset, since);
      case "back":
        stopPlaying(true);
        if (pv.t <= PROMPT) return void (chain = chain.then(() => announce(says().back_none)));
        return go(pv.mode, pv.t - 1, cmd, (w) => w.back, since);
      case "play":
        if (pv.playing) return stopPlaying(false);
        if (pv.t >= LAST) return void (chain = chain.then(() => announce(says().full)));
        pv.playing = true;
        chain = chain.then(() => {
          const words = says();
          setPlayLabel(words);
          announce(words.play);
        });
        fetchAhead();
        pv.timer = setTimeout(tickPreview, period());
        return;
    }
  }

  // The live page's keys (app/components/a11y.js, the same map and the same rule: never a key the
  // focused control needs itself).
  const KEYS = { ArrowRight: "step", n: "step", N: "step", ArrowLeft: "back", b: "back", B: "back",
                 " ": "play", p: "play", P: "play",
                 c: "toggle", C: "toggle", r: "reset", R: "reset" };
  function ownKey(el, key) {
    if (!el || !el.tagName) return false;
    const tag = el.tagName.toLowerCase();
    const type = (el.getAttribute("type") || "").toLowerCase();
    const role = el.getAttribute("role") || (tag === "input" ? ({ radio: "radio", checkbox: "checkbox",
      range: "slider", number: "spinbutton", button: "button", submit: "button", reset: "button" }[type] || "textbox")
      : { button: "button", select: "listbox", textarea: "textbox", summary: "button" }[tag] || "");
    if (role === "textbox" || role === "listbox" || role === "combobox" || el.isContentEditable) return true;
    if (["button", "radio", "checkbox", "switch", "link"].includes(role) && key === " ") return true;
    if (["slider", "radio", "spinbutton", "tab", "listbox", "menuitem"].includes(role) && key.startsWith("Arrow")) return true;
    return false;
  }
  // The command a key gives the preview, or null (another's: a modifier, a key the focused control needs).
  function keyCommand(event) {
    if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey) return null;
    const name = KEYS[event.key];
    return name && !ownKey(event.target, event.key) ? name : null;
  }
  function onKey(event) {
    const name = pv.done ? null : keyCommand(event);
    if (!name) return;
    event.preventDefault();
    act(name);
  }

  // The command a click on the preview gives: its button's, the mode switch's only to the other mode.
  function clickCommand(event) {
    const button = event.target.closest("[data-kv]");
    if (!button) return null;
    const cmd = button.dataset.kv;
    return cmd !== "mode" ? cmd : button.dataset.mode !== pv.mode ? "toggle" : null;
  }

  function onClick(event, since) {
    if (event.target.closest("[data-kv]")) {
      const cmd = clickCommand(event);
      if (cmd) act(cmd, since);
      return;
    }
    if (event.target.closest(".cardhead, .speed, .card")) {
      announce(TEXT.shell_wait, TEXT.shell_wait);
      pv.wanted = true;
      if (wakeRender) wakeRender();
    }
  }

  let controlsStarted = false;
  function startControls(holder) {
    if (controlsStarted || live) return;
    controlsStarted = true;
    holder.addEventListener("click", onClick);
    document.addEventListener("keydown", onKey);
    document.removeEventListener("click", keepEarly, true);
    document.removeEventListener("keydown", keepEarly, true);
    performance.mark("kv-controls");
    kv.times.controls = performance.now() - t0;
    const kept = early.splice(0);
    for (const event of kept) { // in their order, each waited for since its input
      if (event.type === "click") onClick(event, event.timeStamp);
      else act(KEYS[event.key], event.timeStamp);
    }
    // The requests, and the next step's changes after the first paint; the font samples once it is on
    // the screen. A kept input's answer comes first: these wait for its frame (in its task they were
    // 39 and 29 ms of the reader's wait at 4x, in a profile of a click at the first paint).
    const later = kept.length ? (fn) => chain.then(() => afterPaint(fn)) : (fn) => fn();
    later(() => fetchAhead(true));
    firstPainted.then(() => later(askForFonts));
  }

  // The preview paints as the page is parsed, and its controls start with the document (the states one
  // action away come after the preview in index.html): at 4x, 0.2-0.9 s after the first paint in the
  // load benchmark's pages. A click or a key the preview answers, made in between, is kept (the key's
  // default prevented, as onKey does) and answered when the controls start, never lost.
  const early = [];
  function keepEarly(event) {
    if (controlsStarted || live || pv.done) return;
    let cmd;
    if (event.type === "click") {
      if (!event.target.closest || !event.target.closest("#kv-snapshot")) return;
      cmd = clickCommand(event);
    } else {
      cmd = keyCommand(event);
      if (!cmd) return;
      event.preventDefault();
    }
    early.push(event);
    if (cmd && !movedEarly) drawEarly(cmd);
    if (cmd) movedEarly = true;
  }

  // The first of them the controls answer, if it is Avanzar or the mode switch, is drawn at once in
  // the preview's first part (the title, the controls and the text: all a phone shows), from the first
  // parts of the two states index.html carries right after the preview's own (the whole states come at
  // the document's end, parsed after the frame that lays out the figures: at 4x a click at the first
  // paint waited 250-300 ms for the controls and the answer), and the live region says its words. The
  // rest of the answer (the figures) is the kept click's, when the controls start: its changes in the
  // first part are then none, and its words are not said again.
  let movedEarly = false;
  let saidEarly = null;
  function drawEarly(cmd) {
    if (!pv.active || preview.name !== cfg.inlineState) return;
    const other = otherMode();
    const name = cmd === "step" ? stateName(pv.mode, pv.t + 1) : cmd === "toggle" ? stateName(other, pv.t) : null;
    const tpl = name && document.querySelector(`#kv-snapshot > template[data-kv-first="${name}"]`);
    // a template the parser has gone past is whole (its content, parsed before it went on)
    const part = document.querySelector("#kv-snapshot > .kv-snap");
    if (!tpl || !tpl.nextSibling || !part) return;
    const ops = [];
    firstPartOps(part, tpl.content.firstElementChild, ops);
    for (const [, op] of ops) op();
    drawnVersion += 1;
    pv.drawnEarly = name; // tests/test_preview_browser.py
    const words = says();
    saidEarly = cmd === "step" ? words.step : words.mode[other];
    announce(saidEarly);
  }
  document.addEventListener("click", keepEarly, true);
  document.addEventListener("keydown", keepEarly, true);

  // A press on the page (a button or a finger down): its click comes at the release. Until the frame
  // after the release (the click's answer drawn in it), the font samples wait, so that the release finds
  // no text of theirs being laid out (3-64 ms a text at 4x in a traced page: a click's wait). A release
  // the page never hears of waits two seconds at most.
  let pressing = false;
  const released = []; // what waits for the release
  const release = () => {
    pressing = false;
    for (const fn of released.splice(0)) fn();
  };
  let presses = 0;
  addEventListener("pointerdown", () => {
    const press = ++presses;
    pressing = true;
    setTimeout(() => { if (press === presses) release(); }, 2000);
  }, { capture: true, passive: true });
  for (const type of ["pointerup", "pointercancel"]) {
    addEventListener(type, () => afterPaint(release), { capture: true, passive: true });
  }

  // Every font the states will need (app/figure/font_samples.py: a browser fetches each font, size and
  // weight the first time a text needs it, Chromium on the main thread), asked for once the first paint
  // is on the screen: one text of the samples at a time, in its place's chain of elements, laid out in
  // a task of its own (a font's fetch cannot be cut: a click waits for one at most) that takes its turn
  // with the page's other tasks (ahead of them, scheduler.yield's, they delayed the first answered
  // click; in idle time only, it often came before its fonts: docs/performance.md), first what a click
  // on the first paint brings, then the rest, each in the order the page shows them (the live region's
  // first); none while a press waits for its click. Neither the first paint nor a click's frame lays
  // them out.
  function askForFonts() {
    const samples = $("kv-fonts"); // a <template>: inert until now
    if (!samples || pv.done) return;
    const tree = samples.content.firstElementChild;
    const into = tree.cloneNode(false);
    samples.replaceWith(into);
    const texts = Array.from(tree.querySelectorAll("*"))
      .filter((el) => Array.from(el.childNodes).some((n) => n.nodeType === Node.TEXT_NODE));
    const channel = new MessageChannel(); // a task of its own, in turn with the page's others
    const slice = () => {
      if (pv.done) return; // the live page took over (the samples went with the preview)
      if (pressing) { // the click first
        pv.fontsWaited += 1; // tests/test_preview_browser.py
        return void released.push(() => channel.port2.postMessage(0));
      }
      const el = texts.shift();
      let chain = el.cloneNode(false);
      for (const n of el.childNodes) if (n.nodeType === Node.TEXT_NODE) chain.appendChild(n.cloneNode());
      for (let up = el.parentElement; up !== tree; up = up.parentElement) chain = up.cloneNode(false).appendChild(chain).parentNode;
      into.appendChild(chain);
      void into.offsetWidth; // laid out now (the fonts fetched here), not in a frame's
      if (texts.length && !pv.done) channel.port2.postMessage(0);
      else pv.fontsAsked = !pv.done; // tests/test_preview_browser.py
    };
    channel.port1.onmessage = slice;
    if (texts.length) channel.port2.postMessage(0);
  }

  // The live page takes over: the preview stops answering; the actions the app was not built with
  // (after the first `seq`), and the animation if it runs, go to it, once.
  function endPreview(seq) {
    pv.done = true;
    clearTimeout(pv.timer);
    document.removeEventListener("keydown", onKey);
    delete document.body.dataset.kept;
    const commands = pv.log.filter((e) => e.seq > seq).map((e) => e.cmd);
    if (pv.playing) commands.push("play");
    pv.playing = false;
    return commands;
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

  /* ---------------- BokehJS, after the first paint ---------------- */

  // BokehJS and Panel's scripts (2.4 MB of JavaScript) are needed only to render the live document.
  // The page prefetches them once it has loaded and painted (they download while Python boots, after
  // what the first paint needs: in index.html, on a slow connection they took its bandwidth) but does
  // not run them: parsed and run as deferred scripts they held the snapshot's first paint back (1.7 s at
  // a 4x CPU throttle, tests/bench_load.py). They run, in order, once Python is booted and builds the
  // app (the worker's "app" stage: its last 2-3 s), staged, in slices of idle time, so the preview
  // answers the reader's clicks in the meantime; or when the live document arrives, whichever comes
  // first.
  function prefetchScripts() {
    for (const url of cfg.scripts || []) {
      const link = document.createElement("link");
      link.rel = "prefetch";
      link.as = "script";
      link.href = abs(url);
      document.head.appendChild(link);
    }
  }
  if (document.readyState === "complete") afterPaint(prefetchScripts);
  else addEventListener("load", () => afterPaint(prefetchScripts), { once: true });

  const scriptsRun = new Set();
  let bokehJS = null;
  let scriptsNow = false; // the live document is here: no more waiting for idle time

  function whenIdle() {
    return new Promise((resolve) => {
      if (window.requestIdleCallback) requestIdleCallback(() => resolve(), { timeout: 300 });
      else setTimeout(resolve, 0);
    });
  }

  // Back to the page (input, frames) and on: at once, ahead of other tasks where the browser can.
  function yieldToPage() {
    if (window.scheduler && typeof scheduler.yield === "function") return scheduler.yield();
    return new Promise((resolve) => {
      const channel = new MessageChannel();
      channel.port1.onmessage = () => resolve();
      channel.port2.postMessage(0);
    });
  }

  // The next slice of BokehJS's work: in idle time while the live document is not here, then as soon
  // as the page has answered its input and drawn its frame.
  const nextSlice = () => (scriptsNow ? yieldToPage() : whenIdle());

  function runScript(url) {
    return new Promise((resolve, reject) => {
      const el = document.createElement("script");
      el.src = abs(url);
      el.onload = resolve;
      el.onerror = () => reject(Object.assign(new Error(`${url}: could not load script`), { url }));
      document.head.appendChild(el);
    });
  }

  // BokehJS's bundles are staged (buildsupport/bokehjs.py): a bundle's script hands its modules here
  // instead of running them all in one task (bokeh.min.js: half a second on a laptop, two on a phone,
  // with the reader's clicks waiting), and the page runs them in slices of a few milliseconds, in the
  // order the bundle itself would run them.
  const SLICE_MS = 8;
  let handed = null; // what the script that just ran handed over
  let core = null; // bokeh.min.js's: its require, its modules and aliases (the plugins' are added to them)
  window.__kvStage = (bundle) => {
    handed = bundle;
  };
  const moduleKey = (id) => (typeof id === "string" && /^\d+$/.test(id) ? Number(id) : id); // "622" is 622

  // The modules a module asks for, in the order its text asks (its require is its first parameter).
  function askedFor(table, id) {
    const text = String(table[id]);
    const param = /^function\s*[\w$]*\s*\(\s*([\w$]+)/.exec(text);
    if (!param) return [];
    const call = new RegExp(`(?:^|[^\\w$.])${param[1].replace(/\$/g, "\\$")}\\((\\d+|"[^"\\\\]*")\\)`, "g");
    const out = [];
    for (const [, literal] of text.matchAll(call)) {
      const id = moduleKey(core.normalize(literal[0] === '"' ? JSON.parse(literal) : Number(literal)));
      if (table[id] !== undefined && !out.includes(id)) out.push(id);
    }
    return out;
  }

  // Every module the entry needs, each after the ones it asks for (depth first, in the order asked, as
  // the bundle's require runs them). Modules that ask for each other (a cycle) are left to the first
  // of them reached, whose require runs the others in the bundle's own order (Tarjan's components).
  function runOrder(entry, asked) {
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

  async function runStaged(bundle) {
    let start = performance.now();
    const pause = async () => {
      if (performance.now() - start < SLICE_MS) return;
      await nextSlice();
      start = performance.now();
    };
    if (!bundle.plugin) core = bundle;
    else {
      Object.assign(core.modules, bundle.modules); // as register_plugin does
      Object.assign(core.aliases, bundle.aliases);
    }
    const asked = new Map();
    for (const id of Object.keys(bundle.modules).map(moduleKey)) {
      asked.set(id, askedFor(core.modules, id));
      await pause();
    }
    for (const id of runOrder(moduleKey(core.normalize(bundle.entry)), asked)) {
      core.require(id);
      await pause();
    }
    if (bundle.plugin) Bokeh.register_plugin(bundle.modules, bundle.entry, bundle.aliases);
    else bundle.done(bundle.main());
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
    await runScripts(cfg.scripts || []);
    performance.mark("kv-bokeh-ready");
  }

  // bokeh-tables (buildsupport/site.py ON_DEMAND_SCRIPTS) is not run with the rest: no page of this app shows
  // a table. A document that asks for a model BokehJS does not know (a table, or Panel's DataTabulator,
  // taken out of panel.min.js's index for it: buildsupport/bokehjs.py defer_tables) waits for it: its
  // script run and staged like the others, then those Panel models registered.
  let onDemand = null;
  let onDemandDone = false;
  function runOnDemand() {
    if (!onDemand) {
      const more = cfg.onDemand || { scripts: [], models: [] };
      onDemand = (async () => {
        await runScripts(more.scripts);
        core.require("@bokehjs/base").register_models(more.models.map((m) => core.require(m.module)[m.name]));
        onDemandDone = true;
        performance.mark("kv-on-demand");
      })();
      onDemand.catch((e) => {
        onDemand = null;                     // a retry (before the hand-over) runs it again
        // The page cannot show what Python has: it stops (after the hand-over, a reload returns to the
        // reader's place; before it, a retry starts Python again).
        const failures = e.url ? [{ url: e.url, reason: "could not load script" }] : [];
        showError({ where: e.url || "BokehJS", message: e.message, failures });
      });
    }
    return onDemand;
  }

  // Whether a document's JSON (or a patch's) names a model BokehJS does not know yet, {type: "object", name},
  // neither registered nor defined by the live document itself (its "defs": Panel's HTML components).
  const defined = new Set();
  function asksForMore(value) {
    if (onDemandDone || !core) return false;
    const known = core.require("@bokehjs/base").default_resolver;
    const visit = (v) => {
      if (v === null || typeof v !== "object" || ArrayBuffer.isView(v) || v instanceof ArrayBuffer) return false;
      if (Array.isArray(v)) return v.length > 0 && typeof v[0] !== "number" && v.some(visit); // data: skipped
      if (v.type === "object" && typeof v.name === "string" && !defined.has(v.name) && known.get(v.name) == null) {
        kv.onDemandFor = v.name;             // tests/test_bokehjs_browser.py
        return true;
      }
      return Object.values(v).some(visit);
    };
    return visit(value);
  }

  function startBokehJS() {
    if (!bokehJS) {
      bokehJS = runPageScripts();
      bokehJS.catch((e) => {
        bokehJS = null;                      // a retry runs the scripts that did not load
        showError({ where: e.url, message: e.message, failures: [{ url: e.url, reason: "could not load script" }] });
      });
    }
    return bokehJS;
  }

  // After the next paint (a task queued from an animation frame runs once the frame is drawn);
  // a page that never paints (a hidden frame) starts them all the same, a little later.
  function afterPaint(fn) {
    let done = false;
    const once = () => { if (!done) { done = true; fn(); } };
    requestAnimationFrame(() => setTimeout(once, 0));
    setTimeout(once, 1000);
  }

  // The live page's first render keeps the main thread busy (in slices, sliceRender: a click in between
  // is answered, but a frame or two later than in the preview alone): while
  // the reader is clicking, stepping or scrolling the preview (which answers them), it waits for a pause
  // of QUIET_MS; an action only the model answers (a kept one, a section, the speed) starts it at once.
  const QUIET_MS = 1200;
  let lastInput = -Infinity;
  let wakeRender = null;
  for (const type of ["pointerdown", "keydown", "wheel", "touchstart"]) {
    addEventListener(type, () => { lastInput = performance.now(); }, { capture: true, passive: true });
  }
  function readerPaused() {
    return new Promise((resolve) => {
      let timer = null;
      const check = () => {
        const wait = lastInput + QUIET_MS - performance.now();
        if (wait > 0 && !pv.kept && !pv.wanted && pv.active && !pv.done) return void (timer = setTimeout(check, wait));
        wakeRender = null;
        resolve();
      };
      wakeRender = () => { clearTimeout(timer); check(); };
      check();
    });
  }

  // The worker starts before the page is parsed; the live document needs the page and BokehJS.
  const domParsed = new Promise((resolve) => {
    if (document.readyState !== "loading") resolve();
    else document.addEventListener("DOMContentLoaded", resolve, { once: true });
  });

  async function renderLive(msg) {
    performance.mark("kv-render-start");
    scriptsNow = true;
    await domParsed;
    try {
      await startBokehJS();
    } catch (e) {
      return;                                // startBokehJS has shown the error
    }
    await readerPaused();
    performance.mark("kv-render-go");
    kv.lastInput = lastInput; // tests/test_preview_browser.py: the render began after the reader's pause
    const docs_json = JSON.parse(msg.docs_json);
    for (const doc of Object.values(docs_json)) for (const def of doc.defs || []) defined.add(def.name);
    if (asksForMore(docs_json)) {
      try {
        await runOnDemand();
      } catch (e) {
        return;                              // runOnDemand has shown the error
      }
    }
    const render_items = JSON.parse(msg.render_items);
    const root_ids = JSON.parse(msg.root_ids);
    const holder = document.getElementById("kv-live");
    render_items[0].roots = mountPoints(holder, root_ids, "kv-root");
    render_items[0].root_ids = root_ids;
    let views;
    const slices = sliceRender(docs_json);
    holder.classList.add("kv-building");
    try {
      [views] = await Bokeh.embed.embed_items(docs_json, render_items);
      await slices.done();
    } catch (e) {
      holder.classList.remove("kv-building");
      return showError({ where: "BokehJS", message: String(e), failures: [] });
    } finally {
      slices.restore();
    }
    const replay = endPreview(msg.seq || 0);
    const focused = document.activeElement && document.activeElement.closest
      ? document.activeElement.closest("#kv-snapshot [data-kv]") : null;
    const focusLabel = focused && (focused.dataset.kv === "play" ? says().play_label : focused.textContent.replace(/^\u2713 /, ""));
    live = true;
    kv.replayed = replay;
    const main = $("kv-main");
    main.insertBefore($("kv-loader"), main.firstChild);   // errors after this show at the top
    document.getElementById("kv-snapshot").remove();
    for (const fonts of document.querySelectorAll(".kv-fonts, #kv-fonts")) fonts.remove(); // the preview's (askForFonts)
    holder.classList.remove("kv-building");
    if (focusLabel) focusLive(focusLabel);
    const jsdoc = (worker.jsdoc = [...views.roots.values()][0].model.document);
    jsdoc.on_change(sendChange.bind(null, jsdoc), false);
    worker.postMessage({ type: "rendered" });
    if (replay.length) {
      worker.busy = true; // the reader's live clicks wait behind the replay ("idle")
      worker.postMessage({ type: "replay", commands: replay });
    }
    // No "location" message: the app read the URL once, in create_app (app/state/settings.py). Panel's own
    // location sync is not used; it would read the query again its own way (and raise on a number of
    // 100,000 digits).
    setStage("ready");
    document.body.setAttribute("data-ready", "true");
    performance.mark("kv-ready");
    kv.times.ready = performance.now() - t0;
  }

  // The render's slices are longer than the staging's: what cannot be split (decoding the document, the
  // page's style and layout) takes 0.13 s at 4x, so a click waits no longer for a slice of 30 ms, and fewer
  // slices are fewer frames laid out in between (the render 1.52 and 1.38 s at 4x against 1.63 and 1.52
  // with 8 ms).
  const RENDER_SLICE_MS = 30;

  // BokehJS builds the live page's views (asynchronously, one `lazy_initialize` each), then draws each root
  // in one synchronous `build`: its DOM, then its layout (children's after_render, styles, a forced style
  // and layout of the whole tree, the plots' measures), then each plot's canvas. For this render only,
  // the loader makes it give the page back: every RENDER_SLICE_MS while the views are built and the DOM is made
  // (a view at a time), between the children's after_render, and before the styles, the plots' measures,
  // the layout and each plot's first paint (the render's longest task at 4x 0.7 s -> 0.16 s:
  // tests.bench_render, docs/performance.md). The live page is laid out out of sight meanwhile
  // (#kv-live.kv-building: no height, clipped; a course page's frame is not resized) and Bokeh's resize
  // observers wait for the layout (a root's observer before its layout would render it all again). A
  // click in between is answered by the preview and replayed (endPreview). Another BokehJS than the one
  // this was written for (a method not where it is looked for) is drawn as it was, in one task.
  function sliceRender(docs_json) {
    const undo = [];
    const layouts = [];            // each root's layout, a task after its DOM
    const unpainted = new Set();   // plots whose first paint waits for its own task
    const resized = new Set();     // views whose resize observer fired before the layouts were done
    const toLayOut = new Set();    // layout roots whose styles are set and whose layout waits a task
    let paint = null;              // PlotView's own paint, for the plots' first (null: not sliced)
    const ownerOf = (proto, name) => {
      while (proto && !Object.prototype.hasOwnProperty.call(proto, name)) proto = Object.getPrototypeOf(proto);
      return proto;
    };
    const patch = (proto, name, make) => {
      const original = proto[name];
      proto[name] = make(original);
      undo.push(() => { proto[name] = original; });
      return original;
    };
    const restore = () => { while (undo.length) undo.pop()(); };
    kv.renderSlices = [];          // the render's phase at each time it gave the page back (tests/test_preview_browser.py)
    const gaveBack = async (after) => { kv.renderSlices.push(after); await yieldToPage(); };
    try {
      const [doc] = Object.values(docs_json);
      const type = doc.roots[0].name; // {type: "object", name: "panel.models.layout.Column", id, ...}
      const view = Bokeh.Models.get(type).prototype.default_view.prototype;
      let base = view;
      while (Object.getPrototypeOf(base) && "lazy_initialize" in Object.getPrototypeOf(base)) base = Object.getPrototypeOf(base);
      const plot = Bokeh.Models.get("Plot").prototype.default_view.prototype;
      const parts = [[ownerOf(base, "lazy_initialize"), "lazy_initialize"], [ownerOf(view, "build"), "build"],
        [ownerOf(view, "after_resize"), "after_resize"], [ownerOf(plot, "paint"), "paint"],
        [ownerOf(view, "invalidate_layout"), "invalidate_layout"], [ownerOf(view, "render_to"), "render_to"]];
      if (parts.some(([proto, name]) => !proto || typeof proto[name] !== "function")) throw new Error("another BokehJS");
      const [[lazy], [dom], [ui], [plots], [layout], [placed]] = parts;
      let since = performance.now(); // the current slice's start, whatever its phase
      const next = async (phase) => {
        await gaveBack(phase);
        since = performance.now();
      };
      const due = (phase) => (performance.now() - since > RENDER_SLICE_MS ? next(phase) : null);
      patch(lazy, "lazy_initialize", (original) => async function () {
        await due("views");
        return original.call(this);
      });
      // A root's DOM: the root, its children and theirs (a plot, a card, a line of text: each made in one
      // piece), a slice of RENDER_SLICE_MS at a time, in the page's order; each element is in its place before
      // it is filled. Then its styles, then its layout, each in a task of its own.
      let making = null;
      patch(placed, "render_to", (original) => function (target) {
        const parent = this.parent;
        if (!making || !parent || (parent !== making.root && parent.parent !== making.root)) return original.call(this, target);
        target.appendChild(this.el);
        making.views.push(this);
      });
      patch(dom, "build", (original) => function (target) {
        if (!this.is_root) return original.call(this, target);
        layouts.push((async () => {
          const root = this;
          const views = [];
          target.appendChild(root.el);
          views.push(root);
          for (let i = 0; i < views.length; i++) {
            await due("dom");
            making = { root, views };
            views[i].render();
            making = null;
          }
          // DOMView.r_after_render in its order, the root's children and theirs a slice at a time; the
          // root's own after_render, in a task of its own, sets the styles of the whole tree
          // (invalidate_layout below)
          const afterRender = async (view, depth) => {
            if (depth === 2) {
              await due("after_render");
              return void view.r_after_render();
            }
            for (const child of view.children()) if (dom.isPrototypeOf(child)) await afterRender(child, depth + 1);
            await (depth === 0 ? next("after_render") : due("after_render"));
            view.after_render();
            view._was_built = true;
          };
          await afterRender(root, 0);
          // LayoutDOMView.compute_layout of a layout root: the plots' measures, then the boxes (the
          // browser's style and layout of the page, done in the frame between), then the layout
          for (const view of toLayOut) {
            await next("after_render");
            view.measure_layout();
            await next("layout");
            view.update_bbox();
            view._compute_layout();
            view.after_layout();
            view._layout_computed = true;
          }
          toLayOut.clear();
          root.notify_finished();
        })());
      });
      patch(layout, "invalidate_layout", () => function () {
        if (layout.isPrototypeOf(this.parent)) return this.parent.invalidate_layout();
        this.update_layout();
        toLayOut.add(this);
      });
      patch(ui, "after_resize", () => function () { resized.add(this); });
      paint = patch(plots, "paint", () => function () { unpainted.add(this); });
    } catch (e) {
      restore(); // another BokehJS: built in one task, as it was
      paint = null;
    }
    return {
      restore,
      async done() {
        if (!paint) return;
        await Promise.all(layouts);
        while (unpainted.size) {
          const [plot] = unpainted;
          unpainted.delete(plot);
          await gaveBack("paint");
          paint.call(plot);
        }
        restore();
        for (const view of resized) view.after_resize();
      },
    };
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

  /* ---------------- progress and errors ---------------- */

  const $ = (id) => document.getElementById(id);

  function setStage(next, detail) {
    if (next !== stage) stageStart = performance.now();
    stage = next;
    if (!document.body) return;
    document.body.setAttribute("data-stage", next);
    const label = $("kv-stage");
    if (label) setText(label, next === "ready" ? TEXT.shell_ready : TEXT[STAGE_TEXT[next]]);
    if (next === "ready") {
      $("kv-loader").hidden = true;
      document.body.classList.remove("kv-loading");
    }
    tick();
  }

  // The bar moves ten times a second, in steps a reader's eye follows (a transition between them kept
  // the compositor drawing at every vsync of the boot: about 0.1 s of the CPU a second, beside Pyodide's
  // boot and the preview's clicks; docs/performance.md); each value is written only when it changed.
  let shown = null;
  function tick() {
    const bar = $("kv-bar");
    if (!bar || failed || stage === "ready") return;
    const [a, b, tau] = STAGES[stage];
    const f = (a + (b - a) * (1 - Math.exp(-(performance.now() - stageStart) / tau))).toFixed(3);
    if (f === shown) return;
    const percent = String(Math.round(f * 100));
    bar.style.transform = `scaleX(${f})`;
    const meter = $("kv-meter");
    if (meter.getAttribute("aria-valuenow") !== percent) meter.setAttribute("aria-valuenow", percent);
    shown = f;
  }

  // Before the page is live: what failed to load, and a retry. After: the page stopped (the worker died)
  // or a callback failed (soft): said where the reader is looking, with a reload that keeps the URL
  // state (the app keeps it on <body data-kv-state>).
  function showError(msg) {
    const box = $("kv-error");
    if (!box) return document.addEventListener("DOMContentLoaded", () => showError(msg));
    console.error("kv-explorable:", msg.where, msg.detail || msg.message);
    const after = live || msg.live;
    if (!msg.soft) failed = true;
    const files = [...new Set((msg.failures || []).map((f) => `${f.url} (${f.reason})`))];
    if (!files.length && msg.where && !after) files.push(msg.where);
    $("kv-failed").textContent = after ? (msg.soft ? TEXT.shell_pyerror : TEXT.shell_stopped) : TEXT.shell_failed;
    $("kv-error-message").textContent = msg.message || TEXT.shell_failed;
    $("kv-files-label").hidden = !files.length;
    const list = $("kv-error-files");
    list.replaceChildren(...files.map((f) => {
      const li = document.createElement("li");
      li.textContent = f;
      return li;
    }));
    $("kv-hint").textContent = after ? TEXT.shell_stopped_hint : TEXT.shell_hint;
    $("kv-retry").textContent = after ? TEXT.shell_reload : TEXT.shell_retry;
    $("kv-dismiss").hidden = !msg.soft;
    box.hidden = false;
    $("kv-progress").hidden = true;
    $("kv-loader").hidden = false;
    if (!msg.soft) {
      document.body.setAttribute("data-error", `${msg.where || ""}: ${msg.message || ""}`);
      if (worker) worker.terminate();
    }
  }

  function reloadKeepingState() {
    const query = document.body.dataset.kvState || location.search;
    location.replace(location.pathname + query + location.hash);
  }

  function retry() {
    if (live) return reloadKeepingState();
    $("kv-error").hidden = true;
    $("kv-progress").hidden = false;
    downloads.runtime.clear();
    downloads.packages.clear();
    startWorker();
  }

  function dismiss() {
    $("kv-error").hidden = true;
    $("kv-loader").hidden = true;
  }

  /* ---------------- embedding ---------------- */

  // In an iframe: tell the parent page the content's height whenever it changes, so the frame can fit
  // it both ways (docs/embedding.md). The content is <main>: the document's own scrollHeight is never
  // less than the frame, so a frame sized by it could grow but never shrink.
  // The handshake: a host running the snippet's script answers by setting the frame to the height
  // sent (this window is resized to it). A frame that stays shorter than its content without ever
  // being resized so is fixed (the host has no script, as many LMSs store a page): then the page makes
  // its own scrolling visible and offers the full page (frameCue).
  function reportHeight() {
    if (window.parent === window) return;
    const main = $("kv-main");
    let sent = 0, answered = false, judging = null;
    const asked = new Set(); // every height sent: the host may answer an earlier one late
    const content = () => Math.ceil(main.getBoundingClientRect().bottom + window.scrollY);
    // <html data-frame>: "judging" until the host had its time to answer, then "fitted" (it did),
    // "fixed" (it never did and the content is taller than the frame) or "fits" (no need so far)
    const judge = () => {
      const short = content() > window.innerHeight + 2;
      document.documentElement.dataset.frame = answered ? "fitted" : short ? "fixed" : "fits";
      frameCue(!answered && short);
    };
    addEventListener("resize", () => {
      if ([...asked].some((h) => Math.abs(window.innerHeight - h) <= 2)) answered = true;
      judge();
    });
    const send = () => {
      const height = content();
      if (height !== sent) {
        sent = height;
        asked.add(height);
        window.parent.postMessage({ type: "kv-explorable:height", height }, "*");
      }
      clearTimeout(judging);
      document.documentElement.dataset.frame = "judging";
      judging = setTimeout(judge, FRAME_ANSWER_MS);
    };
    new ResizeObserver(send).observe(main);
    send();
  }
  const FRAME_ANSWER_MS = 3000; // how long a host's script may take to fit the frame (a busy phone too)

  // In a frame of fixed height: a scroll bar that stays, and a line at the frame's bottom saying there
  // is more below (until the reader gets there) with a link that opens the page alone, in a new tab.
  function frameCue(on) {
    document.documentElement.classList.toggle("kv-fixed-frame", on);
    let cue = $("kv-frame-cue");
    if (!on) {
      if (cue) cue.hidden = true;
      return;
    }
    if (!cue) {
      cue = document.createElement("div");
      cue.id = "kv-frame-cue";
      cue.setAttribute("role", "note");
      const more = document.createElement("span");
      more.className = "kv-frame-more";
      more.textContent = "↓ " + TEXT.shell_frame_more;
      const link = document.createElement("a");
      // the page alone, in the reader's current state (the live page keeps it on <body>: a11y.js)
      const fullPage = () => {
        const full = new URL(document.body.dataset.kvState || window.location.search, window.location.href);
        full.searchParams.delete("embed");
        link.href = full.toString();
      };
      fullPage();
      for (const event of ["pointerdown", "focus", "mouseenter"]) link.addEventListener(event, fullPage);
      link.target = "_blank";
      link.rel = "noopener";
      link.textContent = TEXT.shell_frame_open + " ↗";
      cue.append(more, link);
      document.body.append(cue);
      const atEnd = () => cue.classList.toggle("kv-at-end",
        window.scrollY + window.innerHeight >= document.documentElement.scrollHeight - 4);
      addEventListener("scroll", atEnd, { passive: true });
      atEnd();
      // the page's end stays above the line, however many lines it takes (a phone wraps it)
      new ResizeObserver(() => document.documentElement.style.setProperty("--kv-cue-h", cue.offsetHeight + "px"))
        .observe(cue);
    }
    cue.hidden = false;
  }

  /* ---------------- start ---------------- */

  setInterval(tick, 100);
  // The worker starts at once, while the page's own scripts load: Pyodide's boot runs on the
  // other core. Measured with tests/bench_load.py: interactive 4.0 s -> 3.5 s; first paint
  // 0.8 s -> 1.1 s (the preview waits a little longer for the CPU).
  startWorker();

  let domReady = false;
  document.addEventListener("DOMContentLoaded", () => {
    // Guard: es-module-shims, if a page loads it, dispatches a second, synthetic DOMContentLoaded.
    if (domReady) return;
    domReady = true;
    document.title = TEXT.shell_title;
    $("kv-failed").textContent = TEXT.shell_failed;
    $("kv-files-label").textContent = TEXT.shell_files;
    $("kv-retry").textContent = TEXT.shell_retry;
    $("kv-hint").textContent = TEXT.shell_hint;
    $("kv-retry").addEventListener("click", retry);
    $("kv-dismiss").textContent = TEXT.shell_dismiss;
    $("kv-dismiss").addEventListener("click", dismiss);
    if (!failed) setStage(stage);
    reportHeight();
    performance.mark("kv-dom-ready");
    renderSnapshot();
    // BokehJS runs once Python is booted (the worker's "app" stage), not now: the preview answers first.
  });
})();
