// tests/bench_load.py's probe, run in every page before its own scripts: when the page first
// painted (the static site: its kv-first-paint mark; the panel convert baseline: BokehJS has
// rendered its document) and when it became interactive (body[data-ready], or the baseline's
// body[data-baseline="rendered"]).
(() => {
  window.__probe = {};
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
