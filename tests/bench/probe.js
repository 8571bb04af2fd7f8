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
  // answer (static/loader.js kv.answers) was done (the first frame whose animation callbacks find it
  // made draws it; a task posted from them runs after that frame's style, layout and paint).
  window.__probe.clicks = [];
  window.__probe.frames = [];
  addEventListener("pointerdown", (e) => {
    const kv = window.kv;
    const button = e.target.closest && e.target.closest("#kv-snapshot [data-kv=step]");
    if (button && kv && kv.preview && !kv.preview.done) {
      window.__probe.clicks.push({ at: e.timeStamp, answer: kv.preview.log.length + 1 }); // its go()'s
    }
  }, true);
  const frames = () => {
    const p = window.__probe;
    const answered = ((window.kv && window.kv.answers) || []).length;
    if (answered > p.frames.length) {
      const channel = new MessageChannel();
      channel.port1.onmessage = () => { while (p.frames.length < answered) p.frames.push(performance.now()); };
      channel.port2.postMessage(0);
    }
    if (p.ready === undefined && p.error === undefined) requestAnimationFrame(frames);
  };
  requestAnimationFrame(frames);
  const tick = () => {
    const p = window.__probe;
    const B = window.Bokeh;
    const mark = performance.getEntriesByName("kv-first-paint")[0];
    if (p.fp === undefined && mark) p.fp = mark.startTime;
    if (p.fp === undefined && B && B.index && B.index.roots && B.index.roots.length) {
      requestAnimationFrame(() => { if (p.fp === undefined) p.fp = performance.now(); });
    }
    const b = document.body;
    if (p.ready === undefined && b && (b.dataset.ready === "true" || b.dataset.baseline === "rendered")) {
      p.ready = performance.now();
    }
    if (b && b.dataset.error !== undefined) p.error = b.dataset.error;
    if (p.ready === undefined && p.error === undefined) setTimeout(tick, 10);
  };
  tick();
})();
