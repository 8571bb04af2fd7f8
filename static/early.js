/* Early input. The preview paints as index.html is parsed, and its controls start once it is parsed
 * (the loader's modules are deferred, and the states one action away come after the preview in
 * index.html). A click or a key the preview answers, made in between, is kept (the key's default
 * prevented, as the controls do) and answered, in order, when the controls start
 * (static/loader/controls.js startControls), never lost.
 *
 * The first of them that moves the preview, if it is Avanzar or the mode switch, is drawn at once in the
 * preview's first part (the title, the controls and the text: all a phone shows), from the first parts
 * of the two states index.html carries right after the preview's own (<template data-kv-first>; the
 * whole states come at the document's end, parsed after the frame that lays out the figures), and the
 * live region says its words. The rest of its answer (the figures) is the kept click's, when the
 * controls start: its changes in the first part are then none, and its words are not said again.
 *
 * A classic script (after static/boot.js in index.html's one script): it acts while the page is parsed.
 * The modules take up window.kvEarly: the inputs kept (`take`), the words said (`said`), the state drawn.
 */
(function () {
  "use strict";

  const boot = window.kvBoot;
  const { keyCommand, clickCommand } = window.kvKeys;
  const { firstPartOps } = window.kvDiff;
  const { cfg, preview, lang, kv } = boot;
  const early = (window.kvEarly = {
    events: [], // the inputs kept, in their order
    moved: false, // one of them moves the preview: the ones after it are not drawn early
    said: null, // what the live region said for the one drawn (the controls do not say it again)
    drawn: 0, // how many times the preview was drawn here (0 or 1)
    take,
  });
  // What the tests read while the page is parsed: the state drawn early, no action logged yet (the
  // modules show the preview's whole state and counters once they run: static/loader/probe.js).
  kv.preview = { drawnEarly: null, log: [] };

  const says = () => JSON.parse(document.querySelector("#kv-snapshot [data-says]").dataset.says);

  function keepEarly(event) {
    let cmd;
    if (event.type === "click") {
      if (!event.target.closest || !event.target.closest("#kv-snapshot")) return;
      cmd = clickCommand(event.target, preview.mode);
    } else {
      cmd = keyCommand(event);
      if (!cmd) return;
      event.preventDefault();
    }
    early.events.push(event);
    if (cmd && !early.moved) drawEarly(cmd);
    if (cmd) early.moved = true;
  }

  function drawEarly(cmd) {
    if (preview.later !== null || preview.name !== cfg.inlineState) return;
    const other = cfg.query.params.mode.choices.find((m) => m !== preview.mode);
    const name = cmd === "step" ? `${lang}-${preview.mode}-${preview.t + 1}`
      : cmd === "toggle" ? `${lang}-${other}-${preview.t}` : null;
    const tpl = name && document.querySelector(`#kv-snapshot > template[data-kv-first="${name}"]`);
    // a template the parser has gone past is whole (its content, parsed before it went on)
    const part = document.querySelector("#kv-snapshot > .kv-snap");
    if (!tpl || !tpl.nextSibling || !part) return;
    const ops = [];
    firstPartOps(part, tpl.content.firstElementChild, ops);
    for (const [, op] of ops) op();
    early.drawn += 1;
    kv.preview.drawnEarly = name; // tests/test_preview_browser.py
    const words = says();
    early.said = cmd === "step" ? words.step : words.mode[other];
    const region = document.getElementById("kv-say");
    if (region) region.textContent = early.said;
  }

  // The controls start: no more inputs kept here; the ones kept, in their order.
  function take() {
    document.removeEventListener("click", keepEarly, true);
    document.removeEventListener("keydown", keepEarly, true);
    return early.events.splice(0);
  }

  document.addEventListener("click", keepEarly, true);
  document.addEventListener("keydown", keepEarly, true);
})();
