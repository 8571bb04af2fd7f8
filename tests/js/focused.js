// The focused element, however deep in shadow roots, and how its focus shows:
// () => {tag, type, role, name, expanded, checked, ring} where `ring` says what marks the focus
// (an outline of at least 2 px, or a box shadow), or "" when nothing does.
() => {
  let el = document.activeElement;
  while (el && el.shadowRoot && el.shadowRoot.activeElement) el = el.shadowRoot.activeElement;
  if (!el || el === document.body) return null;
  const style = getComputedStyle(el);
  const outline = style.outlineStyle !== "none" && parseFloat(style.outlineWidth) >= 2
    ? `outline ${style.outlineWidth} ${style.outlineStyle}` : "";
  const shadow = style.boxShadow && style.boxShadow !== "none" ? `box-shadow ${style.boxShadow}` : "";
  const label = el.labels && el.labels.length ? el.labels[0].textContent
    : el.closest("label") ? el.closest("label").textContent : "";
  const name = (el.getAttribute("aria-label") || label || el.textContent || "").replace(/\s+/g, " ").trim();
  return {
    tag: el.tagName.toLowerCase(), type: el.type || "", role: el.getAttribute("role") || "", name,
    expanded: el.getAttribute("aria-expanded"), checked: !!el.checked, ring: outline || shadow,
  };
}
