"""A small browser-side helper: the polite live region and the keyboard.

The live region keeps one element alive and changes only its text, so screen
readers announce each step. The keyboard listener acts on the page, but never
on keys typed into an input, a select, a button or editable text. It reports
`prefers-reduced-motion` too. Works the same under `panel serve` and Pyodide.
"""
from __future__ import annotations

import param
from panel.reactive import ReactiveHTML


class A11y(ReactiveHTML):
    message = param.String(default="", doc="What the live region says now.")
    command = param.String(default="", doc="Last keyboard command, as 'name:counter'.")
    reduced_motion = param.Boolean(default=False, doc="The reader prefers reduced motion.")
    help_text = param.String(default="")
    page_state = param.Dict(default={}, doc="query: the URL query of the current state (a reload keeps it); "
                                            "weights: a checksum of the model's weights (tests).")

    _template = """
<div id="region" class="sr-only" role="status" aria-live="polite" aria-atomic="true" data-testid="live"></div>
<p id="help" class="kbd-help"></p>
"""

    _stylesheets = ["""
.sr-only { position: absolute; width: 1px; height: 1px; padding: 0; margin: -1px; overflow: hidden;
           clip: rect(0 0 0 0); white-space: nowrap; border: 0; }
.kbd-help { margin: 0; font-size: 0.85rem; color: #444; }
"""]

    _scripts = {
        # the live region stays the same element; only its text changes, so it is announced
        "message": "region.textContent = data.message;",
        "help_text": "help.textContent = data.help_text;",
        # on <body>, where the page's loader finds them: a reload after a failure keeps the reader's place
        "page_state": """
const get = (k) => data.page_state instanceof Map ? data.page_state.get(k) : (data.page_state || {})[k];
if (get('query') !== undefined) document.body.dataset.kvState = get('query');
if (get('weights') !== undefined) document.body.dataset.kvWeights = get('weights');
""",
        "render": """
self.page_state();
region.textContent = data.message;
help.textContent = data.help_text;
const media = window.matchMedia ? window.matchMedia('(prefers-reduced-motion: reduce)') : null;
data.reduced_motion = !!(media && media.matches);
if (media && media.addEventListener) {
  media.addEventListener('change', (e) => { data.reduced_motion = e.matches; });
}
const keys = {ArrowRight: 'step', n: 'step', N: 'step', ' ': 'play', p: 'play', P: 'play',
              c: 'toggle', C: 'toggle', r: 'reset', R: 'reset'};
// keys the focused element needs for itself: leave them alone
const ownKey = (el, key) => {
  if (!el || !el.tagName) return false;
  const tag = el.tagName.toLowerCase();
  const type = (el.getAttribute('type') || '').toLowerCase();
  const role = el.getAttribute('role') || '';
  if (tag === 'textarea' || tag === 'select' || el.isContentEditable) return true;
  if (tag === 'input' && !['button', 'submit', 'reset', 'checkbox', 'radio'].includes(type)) return true;
  if ((tag === 'button' || role === 'button' || tag === 'input') && key === ' ') return true;
  if (['slider', 'radio', 'spinbutton', 'tab', 'listbox'].includes(role) && key.startsWith('Arrow')) return true;
  return false;
};
if (window.__kvExplorableKeys) {
  document.removeEventListener('keydown', window.__kvExplorableKeys);
}
window.__kvExplorableKeys = (event) => {
  if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey) return;
  const name = keys[event.key];
  if (!name) return;
  const target = event.composedPath ? event.composedPath()[0] : event.target;
  if (ownKey(target, event.key)) return;
  event.preventDefault();
  state.count += 1;
  data.command = name + ':' + Date.now() + ':' + Math.random();
};
document.addEventListener('keydown', window.__kvExplorableKeys);
""",
    }
