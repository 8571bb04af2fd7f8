/* Progress and errors: the loading stage (runtime, packages, app) in the card between the preview's
 * controls and its figure, where the reader is looking (the bar itself moves from the first paint:
 * static/boot.js); on a failure, what failed and a retry. */
import { page, TEXT } from "./state.js";
import { $, setText } from "./dom.js";

const STAGE_TEXT = { runtime: "shell_runtime", packages: "shell_packages", app: "shell_app" };

export function setStage(next) {
  const bar = page.boot.bar;
  if (next !== page.stage) bar.since = performance.now();
  page.stage = bar.stage = next;
  if (!document.body) return;
  document.body.setAttribute("data-stage", next);
  const label = $("kv-stage");
  if (label) setText(label, next === "ready" ? TEXT.shell_ready : TEXT[STAGE_TEXT[next]]);
  if (next === "ready") {
    $("kv-loader").hidden = true;
    document.body.classList.remove("kv-loading");
  }
  page.boot.tick();
}

// Before the page is live: what failed to load, and a retry. After: the page stopped (the worker died)
// or a callback failed (soft): said where the reader is looking, with a reload that keeps the URL
// state (the app keeps it on <body data-kv-state>).
export function showError(msg) {
  const box = $("kv-error");
  if (!box) return document.addEventListener("DOMContentLoaded", () => showError(msg), { once: true });
  console.error("kv-explorable:", msg.where, msg.detail || msg.message);
  const after = page.live || msg.live;
  if (!msg.soft) page.failed = page.boot.bar.stopped = true;
  // a failure names its file and why: a script that could not be loaded in the reader's language, else
  // the worker's own words (an HTTP status, a download's error)
  const why = (f) => (f.script ? TEXT.shell_script_failed : f.reason);
  const files = [...new Set((msg.failures || []).map((f) => `${f.url} (${why(f)})`))];
  if (!files.length && msg.where && !after) files.push(msg.where);
  $("kv-failed").textContent = after ? (msg.soft ? TEXT.shell_pyerror : TEXT.shell_stopped) : TEXT.shell_failed;
  $("kv-error-message").textContent = msg.message || TEXT.shell_failed;
  $("kv-files-label").hidden = !files.length;
  $("kv-error-files").replaceChildren(...files.map((f) => {
    const li = document.createElement("li");
    li.textContent = f;
    return li;
  }));
  $("kv-hint").textContent = after ? TEXT.shell_stopped_hint : TEXT.shell_hint;
  $("kv-retry").textContent = after ? TEXT.shell_reload : TEXT.shell_retry;
  $("kv-dismiss").hidden = !msg.soft;
  box.hidden = false;
  $("kv-progress").hidden = true;
  $("kv-loader").hidden = false;
  if (!msg.soft) {
    document.body.setAttribute("data-error", `${msg.where || ""}: ${msg.message || ""}`);
    if (page.worker) page.worker.terminate();
  }
}

// A retry starts over (`restart`: the worker again, at the reader's position); after the hand-over it
// reloads the page at the reader's state.
function retry(restart) {
  if (page.live) {
    const query = document.body.dataset.kvState || location.search;
    return location.replace(location.pathname + query + location.hash);
  }
  $("kv-error").hidden = true;
  $("kv-progress").hidden = false;
  restart();
}

function dismiss() {
  $("kv-error").hidden = true;
  $("kv-loader").hidden = true;
}

// The card's texts in the page's language (index.html has the default language's), its buttons live.
export function startProgress(restart) {
  $("kv-failed").textContent = TEXT.shell_failed;
  $("kv-files-label").textContent = TEXT.shell_files;
  $("kv-retry").textContent = TEXT.shell_retry;
  $("kv-hint").textContent = TEXT.shell_hint;
  $("kv-retry").addEventListener("click", () => retry(restart));
  $("kv-dismiss").textContent = TEXT.shell_dismiss;
  $("kv-dismiss").addEventListener("click", dismiss);
  if (!page.failed) setStage(page.stage);
}
