/* The URL and the page's configuration (index.html's JSON, read by static/boot.js with the URL): what
 * the modules derive from them. Pure: no DOM, no page state (tests/js/loader/config.test.mjs). */

// The shell's texts come from the app's catalogs (app/i18n/LANG.po, the keys shell_*): the build puts
// every language's into the configuration. A text a language lacks reads the default language's.
export function shellTexts(cfg, lang) {
  return Object.assign({}, cfg.text[cfg.defaultLang], cfg.text[lang]);
}

// A prerendered state's name, as the build names its file (app/figure/snapshot.py state_name).
export const stateName = (lang, mode, t) => `${lang}-${mode}-${t}`;

// The positions a state can have: the prompt's end and the window's.
export function tBounds(cfg) {
  const [prompt, last] = cfg.query.params.t.bounds;
  return { PROMPT: prompt, LAST: last };
}

export const otherMode = (cfg, mode) => cfg.query.params.mode.choices.find((m) => m !== mode);

// The URL's query at the reader's position: the page's own query with its mode and t.
export function positionQuery(search, mode, t) {
  const params = new URLSearchParams(search);
  params.set("mode", mode);
  params.set("t", String(t));
  return "?" + params.toString();
}

// The states one action from (mode, t): the other mode, the prompt and the step back, and the next
// step (the next three while the animation runs). The next step's first: see `nextStep`.
export function namesAhead(cfg, lang, { mode, t, playing }) {
  const { PROMPT, LAST } = tBounds(cfg);
  const names = [stateName(lang, otherMode(cfg, mode), t)];
  if (t !== PROMPT) names.push(stateName(lang, mode, PROMPT), stateName(lang, mode, t - 1));
  for (let k = 1; k <= (playing ? 3 : 1) && t + k <= LAST; k++) names.push(stateName(lang, mode, t + k));
  return names;
}

// The animation's period (ms) at a speed in steps a second; a reader who asked for less motion gets at
// most two a second.
export const stepPeriod = (speed, reduced) => 1000 / (reduced ? Math.min(speed, 2) : speed);

// What the loading card's note says under the preview: that it is a preview, or where the page will go
// (another seed or top-p: the preview shows the prompt).
export function previewNote(TEXT, preview, query) {
  if (preview.later === null) return TEXT.shell_snapshot;
  return TEXT.shell_later.replace("{t}", preview.later).replace("{seed}", query.seed).replace("{top_p}", query.top_p);
}

// The reader's code sandbox (app/sandbox/host.js, window.kvSandboxConfig) runs on the same runtime files
// as the app: its configuration with every address absolute.
export function sandboxConfig(sandbox, abs) {
  const out = Object.assign({}, sandbox);
  for (const key of ["worker", "pyodide", "indexURL", "stdLibURL", "lockFileURL", "packageBaseUrl"]) {
    if (sandbox[key]) out[key] = abs(sandbox[key]);
  }
  return out;
}
