/* The page's loader, main thread: the entry of its modules. index.html loads it as a module script,
 * deferred: it runs once the document is parsed. What must act before (the page's language and theme,
 * the preview's state, the worker started, the loading bar, clicks and keys on the painted preview) is
 * done by the classic script in index.html's <head> (static/boot.js, static/early.js), which the modules
 * take up from here.
 *
 * 1. While the page is parsed (static/boot.js): the URL read (static/urlquery.js, the app's own rules),
 *    the Pyodide worker started. The URL's state is already on the page as plain HTML: index.html
 *    carries the default state's preview, the build prerendered every other state a URL can ask for
 *    (language, mode, t) and the right one is fetched and swapped in before it shows.
 * 2. The reader sees that state while Python boots; embed=1 hides the title. Its controls answer at once
 *    (controls.js; before the page is parsed, static/early.js): the loader draws the prerendered states,
 *    fetched ahead (preview.js), and says the live page's words; what only the model answers is kept
 *    for it.
 * 3. The loading stage (runtime, packages, app) shows in a progress bar between the preview's controls
 *    and its figure, where the reader is looking; on a failure, what failed and a retry (progress.js).
 * 4. When the worker sends the live document (built at the reader's position on the preview), it is
 *    rendered (BokehJS, staged and run after the first paint: staging.js, slices.js), the preview
 *    dropped, both documents linked (the protocol of Panel's pyodide-worker handler), the reader's
 *    actions it was not built with replayed once and <body data-ready="true"> marked (live.js).
 *
 * In an iframe it posts the content's height to the parent page whenever it changes (frame.js), and the
 * reader's progress to the parent, and to an LMS if it runs in one (course.js, static/lms.js).
 *
 * Test hooks: body[data-stage], body[data-ready], body[data-error], #kv-error, #kv-snapshot[data-state],
 * body[data-kept], #kv-say, performance marks "kv-first-paint", "kv-controls", "kv-first-answer" and
 * "kv-ready", window.kv (kv.preview: the preview's state with probe.js's counters, kv.answers,
 * kv.replayed). */
import { page, pv, startState, TEXT } from "./state.js";
import { expose, probe } from "./probe.js";
import { previewNote, sandboxConfig, shellTexts } from "./config.js";
import { $, setText } from "./dom.js";
import { inlined, loadState, markPainted, readAhead, startPreview, swapPreview } from "./preview.js";
import { startControls } from "./controls.js";
import { watchPresses } from "./fonts.js";
import { startStaging } from "./staging.js";
import { restartWorker, startChannel } from "./live.js";
import { startProgress } from "./progress.js";
import { reportHeight } from "./frame.js";
import { startCourse } from "./course.js";

// The preview of the URL's state in place, its note said, the speed the URL's.
function settlePreview(holder) {
  const speed = holder.querySelector(".speed b");
  const rule = page.cfg.query.params.speed;
  if (speed && page.query.speed !== rule.default) {
    speed.textContent = String(page.query.speed);
    const [low, high] = rule.bounds; // the slider's thumb there (app/figure/snapshot.css)
    holder.querySelector(".speed i").style.setProperty("--at", String((page.query.speed - low) / (high - low)));
  }
  setText($("kv-note"), previewNote(TEXT, page.preview, page.query));
  document.documentElement.classList.remove("kv-swap");
}

async function showPreview() {
  if (page.live) return;
  const holder = $("kv-snapshot");
  performance.mark("kv-snapshot-start");
  readAhead();
  if (!inlined()) {
    try {
      swapPreview(holder, await loadState(page.preview.name), page.preview.name);
    } catch (e) {
      pv.active = false; // another state shows: every action waits for the model
      console.warn("preview unavailable", e);
    }
  }
  settlePreview(holder);
  markPainted();
  startControls(holder);
}

function start() {
  const boot = globalThis.kvBoot;
  startState(boot, globalThis.kvEarly, shellTexts(boot.cfg, boot.lang));
  probe.drawnEarly = boot.kv.preview.drawnEarly;
  boot.kv.preview = expose(pv, probe);
  if (page.cfg.sandbox) globalThis.kvSandboxConfig = sandboxConfig(page.cfg.sandbox, boot.abs);
  document.title = TEXT.shell_title;
  startPreview(page.early);
  watchPresses(boot.input);
  startStaging();
  startProgress(restartWorker);
  startChannel();
  reportHeight();
  startCourse();
  performance.mark("kv-dom-ready");
  showPreview();
  // BokehJS runs once Python is booted (the worker's "app" stage), not now: the preview answers first.
}

start();
