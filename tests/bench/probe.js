// tests/bench_load.py's probe, run in every page before its own scripts: when the page first
// painted (the static site: its kv-first-paint mark; the panel convert baseline: BokehJS has
// rendered its document) and when it became interactive (body[data-ready], or the baseline's
// body[data-baseline="rendered"]); and the main thread's long tasks (over 50 ms).
(() => {
  window.__probe = { long: [] };
  try {
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) window.__probe.long.push([e.startTime, e.duration]);
    }).observe({ type: "longtask", buffered: true });
  } catch (e) { /* no Long Tasks API: no list */ }
  // A reader who goes on clicking the preview's Avanzar while the page loads (tests/bench_load.py,
  // the storm visit): each click's input time (the event's own timestamp, so a wait behind a running
  // task counts) and which answer it waits for; frames[k]: when the frame that drew the loader's k-th
  // answer (static/loader/controls.js kv.answers) was done (the first frame whose animation callbacks find it
  // made draws it; a task posted from them runs after that frame's style, layout and paint, and after
  // the tasks already queued: an upper bound, for the clicks Event Timing cannot time, below).
  window.__probe.clicks = [];
  window.__probe.frames = [];
  addEventListener("pointerdown", (e) => {
    const kv = window.kv;
    const button = e.target.closest && e.target.closest("#kv-snapshot [data-kv=step]");
    if (button && kv && kv.preview && !kv.preview.done) {
      window.__probe.clicks.push({ at: e.timeStamp, answer: kv.preview.log.length + 1 }); // its go()'s
      if (!framing) { framing = true; requestAnimationFrame(frames); }
    }
  }, true);
  // Each of those clicks timed by the browser's own Event Timing (the measure behind INP): the click
  // event's entry, [startTime (the event's timeStamp), processingEnd, duration (to the presentation of
  // the next frame after its handlers, to 8 ms)]; and, heard last (the window, bubbling: the page's
  // handler and its promise jobs have run), whether the click's answer was made in its own handling, so
  // that the frame Event Timing times is the frame that draws it; and whether, made before the preview's
  // controls started, the click's step was drawn in its own handling in the preview's first part (the
  // title, the controls and the text; static/early.js drawEarly), the rest coming when they start.
  window.__probe.events = [];
  window.__probe.downs = []; // the pointerdowns' entries: [startTime, duration] (INP's other half of a click)
  try {
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) {
        if (e.name === "click") window.__probe.events.push([e.startTime, e.processingEnd, e.duration]);
        else if (e.name === "pointerdown") window.__probe.downs.push([e.startTime, e.duration]);
      }
    }).observe({ type: "event", durationThreshold: 16, buffered: true });
  } catch (e) { /* no Event Timing: the frames below time every click */ }
  addEventListener("click", (e) => {
    const c = window.__probe.clicks[window.__probe.clicks.length - 1];
    if (!e.isTrusted || !c || c.clickAt !== undefined) return;
    c.clickAt = e.timeStamp;
    c.inClick = ((window.kv && window.kv.answers) || []).length >= c.answer;
    c.firstPart = c.answer === 1 && !!(window.kv && window.kv.preview && window.kv.preview.drawnEarly);
  });
  // The frames are looked at only while a click waits for its answer's (a look each frame, and a timer
  // every 10 ms until the first paint, are work on a throttled main thread that a reader's page does
  // not have: the clicks' times were longer for them).
  let framing = false;
  const frames = () => {
    const p = window.__probe;
    const answered = ((window.kv && window.kv.answers) || []).length;
    if (answered > p.frames.length) {
      const channel = new MessageChannel();
      channel.port1.onmessage = () => { while (p.frames.length < answered) p.frames.push(performance.now()); };
      channel.port2.postMessage(0);
    }
    const last = p.clicks[p.clicks.length - 1];
    framing = last !== undefined && answered < last.answer && p.ready === undefined && p.error === undefined;
    if (framing) requestAnimationFrame(frames);
  };
  // The first paint: polled (the panel convert baseline has no mark: BokehJS has rendered its document);
  // then interactive and a failure from the body's attributes, when they change.
  const settled = () => {
    const p = window.__probe;
    const b = document.body;
    if (p.ready === undefined && (b.dataset.ready === "true" || b.dataset.baseline === "rendered")) p.ready = performance.now();
    if (b.dataset.error !== undefined && p.error === undefined) p.error = b.dataset.error;
  };
  const tick = () => {
    const p = window.__probe;
    const B = window.Bokeh;
    const mark = performance.getEntriesByName("kv-first-paint")[0];
    if (p.fp === undefined && mark) p.fp = mark.startTime;
    if (p.fp === undefined && B && B.index && B.index.roots && B.index.roots.length) {
      requestAnimationFrame(() => { if (p.fp === undefined) p.fp = performance.now(); });
    }
    const b = document.body;
    if (b) settled();
    if (p.fp !== undefined && b) {
      new MutationObserver(settled).observe(b, { attributes: true, attributeFilter: ["data-ready", "data-baseline", "data-error"] });
    } else if (p.ready === undefined && p.error === undefined) setTimeout(tick, 10);
  };
  tick();
})();
