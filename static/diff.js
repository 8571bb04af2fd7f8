/* The preview's diff: the changes that make a node of the preview be the same node of another state,
 * touching only what differs. A step changes one token, one bar, one column and a few numbers (and at
 * the prompt's first step the clock's plot comes), so the browser restyles and lays out those alone;
 * replacing the whole preview would restyle and lay out all of it on every step. The changes are found
 * without touching the page and applied later, in order, so the step the reader most likely takes next
 * is found ahead, in idle time, and the click only applies it (static/loader/preview.js).
 *
 * A classic script, run before the first paint (the build puts it into index.html's one script,
 * buildsupport/site.py CLASSIC): a click made while the page is parsed is drawn with it
 * (static/early.js); the modules take it from window.kvDiff. Plain DOM methods only, no globals
 * (tests/js/loader/diff.test.mjs runs it under Node on a small stand-in for the DOM).
 *
 *   const ops = []; kvDiff.diff(old, fresh, ops); for (const [, op] of ops) op();
 *
 * Each change is [the node where it is drawn, the change]: the ones out of the reader's sight wait for
 * the frame after the answer (static/loader/preview.js swapPreview). An insertion is placed by the node
 * it goes before, which a later change may replace: the two are drawn in the same frame, in their order.
 */
(function (root) {
  "use strict";

  const ELEMENT = 1; // Node.ELEMENT_NODE
  const AHEAD = 4; // how many nodes in a row may come or go between two that stay

  const similar = (a, b) => a.nodeType === b.nodeType && a.nodeName === b.nodeName &&
    (a.nodeType !== ELEMENT || a.getAttribute("class") === b.getAttribute("class"));

  // A node's children, walked (an Array.from of a NodeList goes through its iterator: far slower)
  function childrenOf(node) {
    const out = [];
    for (let n = node.firstChild; n; n = n.nextSibling) out.push(n);
    return out;
  }

  // Attributes by name and value as strings (`attributes` would make an Attr object for each).
  function attributeOps(old, fresh, ops) {
    for (const name of old.getAttributeNames()) if (!fresh.hasAttribute(name)) ops.push([old, () => old.removeAttribute(name)]);
    for (const name of fresh.getAttributeNames()) {
      const value = fresh.getAttribute(name);
      if (old.getAttribute(name) !== value) ops.push([old, () => old.setAttribute(name, value)]);
    }
  }

  // How many nodes came (`came`) or went (`went`) before olds[i] and news[j] meet again, looking up to
  // AHEAD ahead; null if they do not within that.
  function gap(olds, news, i, j) {
    for (let k = 1; k <= AHEAD; k++) {
      if (i + k < olds.length && similar(olds[i + k], news[j])) return { went: k };
      if (j + k < news.length && similar(olds[i], news[j + k])) return { came: k };
    }
    return null;
  }

  // The children, in order: nodes that came or went (up to AHEAD in a row) found by looking ahead.
  function childOps(old, fresh, ops) {
    const olds = childrenOf(old);
    const news = childrenOf(fresh);
    let i = 0;
    let j = 0;
    while (i < olds.length && j < news.length) {
      const found = similar(olds[i], news[j]) ? null : gap(olds, news, i, j);
      if (found && found.went) {
        for (const gone of olds.slice(i, i + found.went)) ops.push([gone, () => gone.remove()]);
        i += found.went;
      } else if (found) {
        const before = olds[i];
        for (const came of news.slice(j, j + found.came)) ops.push([before, () => old.insertBefore(came, before)]);
        j += found.came;
      } else {
        diff(olds[i++], news[j++], ops);
      }
    }
    for (const node of olds.slice(i)) ops.push([node, () => node.remove()]);
    // an appended node is drawn where the last child is (below it): a section's card that comes at the
    // end of the figures is drawn with the changes out of sight when that end is
    const last = old.lastElementChild || old;
    for (const node of news.slice(j)) ops.push([last, () => old.appendChild(node)]);
  }

  // The changes that make `old` be `fresh`, pushed to `ops`.
  function diff(old, fresh, ops) {
    if (old.nodeType !== fresh.nodeType || old.nodeName !== fresh.nodeName) return ops.push([old, () => old.replaceWith(fresh)]);
    if (old.nodeType !== ELEMENT) {
      if (old.nodeValue !== fresh.nodeValue) ops.push([old, () => { old.nodeValue = fresh.nodeValue; }]);
      return;
    }
    if (old.isEqualNode(fresh)) return; // most of the preview: compared natively, left alone
    attributeOps(old, fresh, ops);
    childOps(old, fresh, ops);
  }

  // The changes from the preview's first part drawn now (`part`: the title and the text, two pictures,
  // and the control bar) to another state's (`fresh`). The pictures become the new state's; the
  // controls stay the same buttons (a reader's focus stays on them, the speed keeps the URL's), their
  // state copied from the new one.
  function firstPartOps(part, fresh, ops) {
    const bar = part.querySelector("[data-says]");
    const next = fresh.querySelector("[data-says]");
    const pictures = fresh.querySelectorAll(".kv-picture");
    part.querySelectorAll(".kv-picture").forEach((picture, i) => diff(picture, pictures[i], ops));
    ops.push([bar, () => {
      bar.dataset.says = next.dataset.says;
      bar.dataset.kvState = next.dataset.kvState;
    }]);
    for (const sel of [".bar-t", ".said", ".kv-strip"]) diff(bar.querySelector(sel), next.querySelector(sel), ops);
    for (const b of bar.querySelectorAll("[data-mode]")) diff(b, next.querySelector(`[data-mode="${b.dataset.mode}"]`), ops);
  }

  const diffs = { diff, firstPartOps, similar };
  root.kvDiff = diffs;
  if (typeof module === "object" && module.exports) module.exports = diffs;
})(typeof self !== "undefined" ? self : globalThis);
