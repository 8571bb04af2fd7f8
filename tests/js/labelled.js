// True once every form field of the page (open shadow roots included) carries a name: a label with
// text, or aria-label. Newly opened sections get their labels a moment after their fields; tests wait
// for this before checking the page, then check it all (axe-core) anyway.
() => {
  const fields = [];
  const walk = (root) => {
    for (const el of root.querySelectorAll("input, select, textarea")) fields.push(el);
    for (const el of root.querySelectorAll("*")) if (el.shadowRoot) walk(el.shadowRoot);
  };
  walk(document);
  return fields.every((el) => el.type === "hidden" || el.getAttribute("aria-label")
    || (el.labels && [...el.labels].some((l) => l.textContent.trim())) || (el.closest("label") && el.closest("label").textContent.trim()));
}
