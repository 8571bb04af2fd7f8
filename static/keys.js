/* The preview's commands: the one a key gives (the live page's keys, app/components/a11y.js: the same
 * map and the same rule, never a key the focused control needs itself) and the one a click on the
 * preview gives. A classic script, run before the first paint (the build puts it into index.html's one
 * script, buildsupport/site.py CLASSIC): a key or a click made while the page is parsed is kept with it
 * (static/early.js); the modules take it from window.kvKeys (static/loader/controls.js).
 *
 *   kvKeys.keyCommand(keydownEvent) -> "step" | "back" | "play" | "toggle" | "reset" | null
 *   kvKeys.clickCommand(clickedElement, modeShown) -> the same, or null
 */
(function (root) {
  "use strict";

  const KEYS = { ArrowRight: "step", n: "step", N: "step", ArrowLeft: "back", b: "back", B: "back",
                 " ": "play", p: "play", P: "play",
                 c: "toggle", C: "toggle", r: "reset", R: "reset" };
  const INPUT_ROLES = { radio: "radio", checkbox: "checkbox", range: "slider", number: "spinbutton",
                        button: "button", submit: "button", reset: "button" };
  const TAG_ROLES = { button: "button", select: "listbox", textarea: "textbox", summary: "button" };

  function roleOf(el) {
    const tag = el.tagName.toLowerCase();
    const type = (el.getAttribute("type") || "").toLowerCase();
    return el.getAttribute("role") || (tag === "input" ? INPUT_ROLES[type] || "textbox" : TAG_ROLES[tag] || "");
  }

  // Whether the focused element needs the key itself (typing, a button's space, a slider's arrows).
  function ownKey(el, key) {
    if (!el || !el.tagName) return false;
    const role = roleOf(el);
    if (role === "textbox" || role === "listbox" || role === "combobox" || el.isContentEditable) return true;
    if (["button", "radio", "checkbox", "switch", "link"].includes(role) && key === " ") return true;
    if (["slider", "radio", "spinbutton", "tab", "listbox", "menuitem"].includes(role) && key.startsWith("Arrow")) return true;
    return false;
  }

  // The command a key gives the preview, or null (another's: a modifier, a key the focused control needs).
  function keyCommand(event) {
    if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey) return null;
    const name = Object.prototype.hasOwnProperty.call(KEYS, event.key) ? KEYS[event.key] : undefined;
    return name && !ownKey(event.target, event.key) ? name : null;
  }

  // The command a click on the preview gives: its button's, the mode switch's only to the other mode.
  function clickCommand(target, mode) {
    const button = target && target.closest ? target.closest("[data-kv]") : null;
    if (!button) return null;
    const cmd = button.dataset.kv;
    return cmd !== "mode" ? cmd : button.dataset.mode !== mode ? "toggle" : null;
  }

  const keys = { KEYS, ownKey, keyCommand, clickCommand };
  root.kvKeys = keys;
  if (typeof module === "object" && module.exports) module.exports = keys;
})(typeof self !== "undefined" ? self : globalThis);
