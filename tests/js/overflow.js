// What sticks out of the page sideways: () => {pageWidth, viewport, outside: [...], cut: [...]}.
// `outside`: elements whose visible part (their box cut by every ancestor that clips, across shadow
// roots) ends beyond the viewport's right edge; `cut`: text cut off by an ancestor that hides what
// overflows (overflow: hidden or clip), which a reader cannot scroll to.
() => {
  const W = document.documentElement.clientWidth;
  const parentOf = (el) => el.parentElement || (el.getRootNode() && el.getRootNode().host) || null;
  const clips = (style) => style.overflowX !== "visible";
  const visibleRight = (el, rect) => {
    let right = rect.right;
    for (let a = parentOf(el); a; a = parentOf(a)) {
      const style = getComputedStyle(a);
      if (style.position === "fixed") break;
      if (clips(style)) right = Math.min(right, a.getBoundingClientRect().right);
    }
    return right;
  };
  const describe = (el) => {
    const cls = typeof el.className === "string" ? el.className : "";
    return `${el.tagName.toLowerCase()}${cls ? "." + cls.trim().split(/\s+/).join(".") : ""}`
      + ` "${(el.textContent || "").trim().slice(0, 50)}"`;
  };
  const outside = [], cut = [];
  const walk = (root) => {
    for (const el of root.querySelectorAll("*")) {
      const rect = el.getBoundingClientRect();
      const style = getComputedStyle(el);
      if (rect.width > 0 && rect.height > 0 && style.visibility !== "hidden") {
        const right = visibleRight(el, rect);
        if (right > W + 1) outside.push(`${describe(el)} ends at ${Math.round(right)} px`);
        const text = el.childNodes && [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim());
        if (text && (style.overflowX === "hidden" || style.overflowX === "clip") && el.scrollWidth > el.clientWidth + 1
            && style.textOverflow !== "ellipsis" && !el.closest(".sr-only")) {
          cut.push(`${describe(el)}: ${el.scrollWidth} px of text in ${el.clientWidth} px`);
        }
      }
      if (el.shadowRoot) walk(el.shadowRoot);
    }
  };
  walk(document);
  return {pageWidth: document.documentElement.scrollWidth, viewport: W, outside, cut};
}
