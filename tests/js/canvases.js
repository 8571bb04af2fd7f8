// The computed filter of every Bokeh figure shown on the page (open shadow roots included): the
// element whose shadow root holds the figure's .bk-Canvas, which app/style's CANVAS_CSS styles as :host.
() => {
  const filters = [];
  const walk = (root) => {
    for (const el of root.querySelectorAll('*')) {
      if (!el.shadowRoot) continue;
      if (el.shadowRoot.querySelector('.bk-Canvas')) {
        const box = el.getBoundingClientRect();
        if (box.width > 0 && box.height > 0) filters.push(getComputedStyle(el).filter);
      }
      walk(el.shadowRoot);
    }
  };
  walk(document);
  return filters;
}
