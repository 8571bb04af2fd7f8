/* The hand-over. When the worker sends the live document (built at the reader's position on the
 * preview), it is rendered in place of the preview, once BokehJS has run and the reader has paused
 * (quiet.js), in slices (slices.js); the preview stops answering and the actions the app was not built
 * with are replayed (controls.js endPreview, channel.js link); a keyboard reader's focus goes on from the
 * live page's same control. The hand-over moves nothing: the preview is laid out as the live page is
 * (app/figure/snapshot.py, snapshot.css). */
import { page } from "./state.js";
import { $, whenParsed } from "./dom.js";
import { says } from "./preview.js";
import { endPreview } from "./controls.js";
import { asksForMore, defineModels, runOnDemand, scriptsNeeded, startBokehJS } from "./staging.js";
import { sliceRender } from "./slices.js";
import { lastInput, readerPaused } from "./quiet.js";
import { setStage, showError } from "./progress.js";

// The live document rendered in place of the preview: {views, replay}, or null (an error shown).
export async function renderLive(msg) {
  performance.mark("kv-render-start");
  scriptsNeeded();
  await whenParsed();
  try {
    await startBokehJS();
  } catch (e) {
    return null; // startBokehJS has shown the error
  }
  await readerPaused();
  performance.mark("kv-render-go");
  page.kv.lastInput = lastInput(); // tests/test_preview_browser.py: the render began after the reader's pause
  const docs_json = JSON.parse(msg.docs_json);
  defineModels(docs_json);
  if (asksForMore(docs_json)) {
    try {
      await runOnDemand();
    } catch (e) {
      return null; // runOnDemand has shown the error
    }
  }
  const views = await embed(msg, docs_json);
  return views ? handOver(msg, views) : null;
}

function mountPoints(container, rootIds, prefix) {
  const roots = {};
  rootIds.forEach((id, i) => {
    const el = document.createElement("div");
    el.id = `${prefix}-${i}`;
    container.appendChild(el);
    roots[id] = el.id;
  });
  return roots;
}

// BokehJS renders the document into #kv-live, laid out out of sight meanwhile (#kv-live.kv-building).
async function embed(msg, docs_json) {
  const render_items = JSON.parse(msg.render_items);
  const root_ids = JSON.parse(msg.root_ids);
  const holder = $("kv-live");
  render_items[0].roots = mountPoints(holder, root_ids, "kv-root");
  render_items[0].root_ids = root_ids;
  const slices = sliceRender(docs_json);
  holder.classList.add("kv-building");
  try {
    const [views] = await globalThis.Bokeh.embed.embed_items(docs_json, render_items);
    await slices.done();
    return views;
  } catch (e) {
    holder.classList.remove("kv-building");
    showError({ where: "BokehJS", message: String(e), failures: [] });
    return null;
  } finally {
    slices.restore();
  }
}

function handOver(msg, views) {
  const replay = endPreview(msg.seq || 0);
  const active = document.activeElement;
  const focused = active && active.closest ? active.closest("#kv-snapshot [data-kv]") : null;
  const focusLabel = focused && (focused.dataset.kv === "play" ? says().play_label : focused.textContent.replace(/^\u2713 /, ""));
  page.live = true;
  page.kv.replayed = replay;
  const main = $("kv-main");
  main.insertBefore($("kv-loader"), main.firstChild); // errors after this show at the top
  $("kv-snapshot").remove();
  for (const fonts of document.querySelectorAll(".kv-fonts, #kv-fonts")) fonts.remove(); // the preview's (fonts.js)
  $("kv-live").classList.remove("kv-building");
  if (focusLabel) focusLive(focusLabel);
  return { views, replay };
}

// The live page is linked to Python's (channel.js link): ready.
export function ready() {
  setStage("ready");
  document.body.setAttribute("data-ready", "true");
  performance.mark("kv-ready");
  page.kv.times.ready = performance.now() - page.t0;
}

// A keyboard reader on a preview's control goes on from the live page's same control (found by its
// label in Bokeh's shadow roots).
function focusLive(label) {
  const walk = (root) => {
    for (const el of root.querySelectorAll("button, *")) {
      if (el.tagName === "BUTTON" && el.textContent.trim() === label) return el;
      if (el.shadowRoot) {
        const found = walk(el.shadowRoot);
        if (found) return found;
      }
    }
    return null;
  };
  const button = walk($("kv-live"));
  if (button) button.focus({ preventScroll: true });
}
