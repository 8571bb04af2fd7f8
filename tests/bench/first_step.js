// tests/bench_load.py: the first step after the page is interactive. Clicks the step button (found
// by its label, in Bokeh's shadow DOM) and times, from the click, the moment the position text
// (.tpos) changes and the frame after it (painted). Returns {changed, painted} in ms.
async (label) => {
  const deep = (root, pred) => {
    for (const el of root.querySelectorAll("*")) {
      if (pred(el)) return el;
      if (el.shadowRoot) {
        const hit = deep(el.shadowRoot, pred);
        if (hit) return hit;
      }
    }
    return null;
  };
  const button = deep(document, (el) => el.tagName === "BUTTON" && el.textContent.trim() === label);
  const tpos = deep(document, (el) => el.classList && el.classList.contains("tpos"));
  if (!button || !tpos) return { error: `no ${button ? ".tpos" : "button " + label} on the page` };
  const root = tpos.getRootNode();
  const before = tpos.textContent;
  let t0;
  const changed = new Promise((resolve) => {
    const observer = new MutationObserver(() => {
      const now = root.querySelector(".tpos");
      if (now && now.textContent !== before) {
        observer.disconnect();
        resolve(performance.now());
      }
    });
    observer.observe(root, { childList: true, subtree: true, characterData: true });
  });
  t0 = performance.now();
  button.click();
  const at = await changed;
  await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
  return { changed: at - t0, painted: performance.now() - t0, text: root.querySelector(".tpos").textContent };
}
