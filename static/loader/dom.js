/* The page's small helpers: an element by id, a text written only when it changes, and when to run
 * (after the next paint, in idle time, back to the page at once). The document is read only when one
 * is called (Node imports this module without one). */

export const $ = (id) => document.getElementById(id);

// A text only when it changes: the same words written again are laid out again.
export function setText(el, text) {
  if (el.textContent !== text) el.textContent = text;
}

// After the next paint (a task queued from an animation frame runs once the frame is drawn); a page
// that never paints (a hidden frame) runs it all the same, a little later.
export function afterPaint(fn) {
  let done = false;
  const once = () => {
    if (!done) {
      done = true;
      fn();
    }
  };
  requestAnimationFrame(() => setTimeout(once, 0));
  setTimeout(once, 1000);
}

export function whenIdle() {
  return new Promise((resolve) => {
    if (globalThis.requestIdleCallback) requestIdleCallback(() => resolve(), { timeout: 300 });
    else setTimeout(resolve, 0);
  });
}

// Back to the page (input, frames) and on: at once, ahead of other tasks where the browser can.
export function yieldToPage() {
  const scheduler = globalThis.scheduler;
  if (scheduler && typeof scheduler.yield === "function") return scheduler.yield();
  return new Promise((resolve) => {
    const channel = new MessageChannel();
    channel.port1.onmessage = () => resolve();
    channel.port2.postMessage(0);
  });
}

// Once the document is parsed (the modules run then; a page that imports them otherwise waits).
export function whenParsed() {
  return new Promise((resolve) => {
    if (document.readyState !== "loading") resolve();
    else document.addEventListener("DOMContentLoaded", resolve, { once: true });
  });
}
