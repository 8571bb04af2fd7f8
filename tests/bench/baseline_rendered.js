// The panel convert baseline's "interactive" for tests/bench_load.py: Panel removes body.pn-loading
// when it has embedded the live document.
new MutationObserver((_, observer) => {
  const body = document.body;
  if (!body.classList.contains("pn-loading")) {
    body.dataset.baseline = "rendered";
    observer.disconnect();
  }
}).observe(document.body, { attributes: true });
