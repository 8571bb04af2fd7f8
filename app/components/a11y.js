// Scripts of app/components/a11y.py A11y: the polite live region, the page's language, its state on <body>,
// prefers-reduced-motion, and the keyboard (never on a key the focused control needs itself).
// @script message
region.textContent = data.message;
// @script lang
// only when it changes: set, even to its own value, it restyles and lays out the whole page again
if (document.documentElement.lang !== data.lang) document.documentElement.lang = data.lang;
// @script theme
// The URL's theme (the static site's shell has set it already; a host may change it later, live)
if (data.theme === 'light' || data.theme === 'dark') document.documentElement.dataset.kvTheme = data.theme;
// @script page_state
const get = (k) => data.page_state instanceof Map ? data.page_state.get(k) : (data.page_state || {})[k];
// the static site's preview, while it is shown, keeps the place the reader sees (static/loader/controls.js);
// the live page's takes over with it (static/loader/live.js handOver)
if (get('query') !== undefined) {
  document.body.dataset.kvLiveState = get('query');
  if (!document.getElementById('kv-snapshot')) document.body.dataset.kvState = get('query');
}
if (get('weights') !== undefined) document.body.dataset.kvWeights = get('weights');
// the reader's milestones and quiz (app/state/progress.py), for the course: static/loader/course.js
const progress = get('progress');
if (progress !== undefined) {
  const plain = (v) => v instanceof Map ? Object.fromEntries([...v].map(([k, x]) => [k, plain(x)])) : v;
  const text = JSON.stringify(plain(progress));
  if (document.body.dataset.kvProgress !== text) document.body.dataset.kvProgress = text;
}
// @script beat
// Once the page has drawn what came before this beat (the animation's last step: its changes arrive
// in order, and the figures paint in the next frame), say so: the next step waits for it, so a slow
// screen is never buried under steps it has not shown yet.
const beat = data.beat;
requestAnimationFrame(() => { data.shown = beat; });
// @script render
self.page_state();
self.lang();
self.theme();
self.keep_focus();
self.watch_roots();
self.keep_bars();
region.textContent = data.message;
const media = window.matchMedia ? window.matchMedia('(prefers-reduced-motion: reduce)') : null;
data.reduced_motion = !!(media && media.matches);
if (media && media.addEventListener) {
  media.addEventListener('change', (e) => { data.reduced_motion = e.matches; });
}
const keys = {ArrowRight: 'step', n: 'step', N: 'step', ArrowLeft: 'back', b: 'back', B: 'back',
              ' ': 'play', p: 'play', P: 'play', c: 'toggle', C: 'toggle', r: 'reset', R: 'reset'};
// what the focused element is, for the keys it needs: its ARIA role, else its native one
const roleOf = (el, tag, type) => {
  const role = el.getAttribute('role');
  if (role) return role;
  if (tag === 'input') return {radio: 'radio', checkbox: 'checkbox', range: 'slider', number: 'spinbutton',
                               button: 'button', submit: 'button', reset: 'button'}[type] || 'textbox';
  return {button: 'button', select: 'listbox', textarea: 'textbox', summary: 'button'}[tag] || '';
};
// keys the focused element needs for itself: leave them alone
const ownKey = (el, key) => {
  if (!el || !el.tagName) return false;
  const tag = el.tagName.toLowerCase();
  const role = roleOf(el, tag, (el.getAttribute('type') || '').toLowerCase());
  if (role === 'textbox' || role === 'listbox' || role === 'combobox' || el.isContentEditable) return true;
  if (['button', 'radio', 'checkbox', 'switch', 'link'].includes(role) && key === ' ') return true;
  if (['slider', 'radio', 'spinbutton', 'tab', 'listbox', 'menuitem'].includes(role) && key.startsWith('Arrow')) return true;
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
  data.command = name + ':' + Date.now() + ':' + Math.random();
};
document.addEventListener('keydown', window.__kvExplorableKeys);
// While the reader uses the keyboard (from a Tab or one of the page's keys to the next pointer press),
// the figure's control bar shows the keys' hint on a narrow screen too (app/style/bar.css).
if (!window.__kvKeyboardInUse) {
  window.__kvKeyboardInUse = true;
  const html = document.documentElement.style;
  document.addEventListener('keydown', (event) => {
    if (event.key === 'Tab' || keys[event.key]) {
      html.setProperty('--kv-keys-hint', 'block');
      html.setProperty('--kv-keys-said', 'none');
    }
  }, true);
  document.addEventListener('pointerdown', () => {
    html.removeProperty('--kv-keys-hint');
    html.removeProperty('--kv-keys-said');
  }, true);
}
// A tap on a figure shows what a hover shows: BokehJS's hover tool answers a pointer's moves, and a touch
// that does not move makes none, so the tap's click is passed to the figure's event layer as a move there
// (after the touch has left it; `view` gives it the page's coordinates BokehJS reads); its tooltip stays
// until the next touch.
if (!window.__kvTapHover) {
  window.__kvTapHover = true;
  document.addEventListener('click', (event) => {
    if (event.pointerType !== 'touch' && event.pointerType !== 'pen') return;
    const target = event.composedPath ? event.composedPath()[0] : event.target;
    if (!target || !target.classList || !target.classList.contains('bk-events')) return;
    target.dispatchEvent(new PointerEvent('pointermove', {
      bubbles: true, composed: true, isPrimary: true, pointerType: 'mouse', view: window,
      clientX: event.clientX, clientY: event.clientY,
    }));
  }, true);
}
// @script watch_roots
// Every shadow root of the page, now and later, is watched: for Bokeh's number inputs, which draw
// two unnamed arrow buttons beside the field (the field itself takes ArrowUp/ArrowDown, so the
// buttons stay for the mouse and leave the keyboard's and screen readers' way), for the figures'
// focusable event layers, and for the focus (keep_focus).
const quiet = (root) => {
  for (const b of root.querySelectorAll('.bk-spin-btn:not([aria-hidden])')) {
    b.tabIndex = -1;
    b.setAttribute('aria-hidden', 'true');
  }
  // a figure's event layer takes the focus for keyboard tools: these figures have none (hovering is
  // for the mouse; the data table says the same to the keyboard), so it is no stop on the Tab path
  for (const layer of root.querySelectorAll('.bk-events[tabindex="0"]')) layer.tabIndex = -1;
};
const watched = window.__kvWatchedRoots || (window.__kvWatchedRoots = new WeakSet());
const watch = (root) => {
  if (watched.has(root)) return;
  watched.add(root);
  root.addEventListener('focusin', () => window.__kvRecordFocus && window.__kvRecordFocus());
  quiet(root);
  walk(root);
  new MutationObserver((changes) => {
    quiet(root);
    if (window.__kvRefocus) window.__kvRefocus(root);
    for (const change of changes) {
      for (const node of change.addedNodes) {
        if (node.nodeType !== 1) continue;
        if (node.shadowRoot) watch(node.shadowRoot);
        walk(node);
      }
    }
  }).observe(root, {childList: true, subtree: true});
};
// shadow roots below `node`, however deep (each watched once)
const walk = (node) => {
  for (const el of node.querySelectorAll('*')) {
    if (el.shadowRoot) watch(el.shadowRoot);
  }
};
if (!window.__kvWatchingRoots) {
  window.__kvWatchingRoots = true;
  const attach = Element.prototype.attachShadow;
  Element.prototype.attachShadow = function (init) {
    const root = attach.call(this, init);
    queueMicrotask(() => watch(root));
    return root;
  };
}
watch(document);                          // and the roots made before this script ran, once they are
requestAnimationFrame(() => walk(document));   // in the page
// @script keep_focus
// Bokeh redraws a button when its label changes (Animar -> Pausa, a new language): the focused element
// is replaced and the focus falls to the page, where a keyboard user loses their place. The control
// that takes its place (same kind, same position in the same shadow root) gets the focus back.
if (!window.__kvRefocus) {
  let last = null;
  const deepest = () => {
    let el = document.activeElement;
    while (el && el.shadowRoot && el.shadowRoot.activeElement) el = el.shadowRoot.activeElement;
    return el;
  };
  const kindOf = (el) => el.tagName.toLowerCase() + [...el.classList].filter((c) => c !== 'bk-active')
    .map((c) => '.' + CSS.escape(c)).join('');
  // focusin, on every shadow root (app/components/a11y.js watch): a move inside one shadow tree does not reach
  // the document
  window.__kvRecordFocus = () => {
    const el = deepest();
    if (!el || el === document.body) return;
    const root = el.getRootNode();
    const kind = kindOf(el);
    last = {el, root, kind, index: [...root.querySelectorAll(kind)].indexOf(el)};
  };
  window.__kvRefocus = (root) => {
    if (!last || last.root !== root || last.el.isConnected) return;
    const now = deepest();                   // the page, or the host whose content was redrawn
    if (now && now !== document.body && now.shadowRoot !== root) return;
    const same = [...root.querySelectorAll(last.kind)];
    const next = same[last.index] || same[0];
    if (next) next.focus({preventScroll: true});
  };
}
// @script keep_bars
// The cost bars stay where the reader watches them while what is above them changes height (the text
// takes a line more every few steps): the browser's own scroll anchoring does nothing here (Bokeh sets
// the sizes of the panes above, which suspends it), so the page scrolls by what the bars moved, in the
// frame they moved (a ResizeObserver's callback comes after layout, before paint). Only while the bars
// are on the screen and the text's first line above it, as the reader's last scroll left them (their
// place is taken at every scroll, and only then are they looked for: nothing while the page renders).
if (window.__kvKeepBars || !window.ResizeObserver) return;
window.__kvKeepBars = true;
const deep = (root, sel) => {
  const hit = root.querySelector(sel);
  if (hit) return hit;
  for (const el of root.querySelectorAll('*')) {
    const found = el.shadowRoot && deep(el.shadowRoot, sel);
    if (found) return found;
  }
  return null;
};
const found = {};
const get = (sel) => (found[sel] && found[sel].isConnected ? found[sel] : (found[sel] = deep(document, sel)));
let last = null;  // the bars' top on the screen where the reader last saw them, if they are to stay there
const take = () => {
  const bars = get('.kv-bars'), first = bars && get('.tpos');
  if (!bars || !first) return (last = null);
  const box = bars.getBoundingClientRect();
  const onScreen = box.height > 0 && box.top >= 0 && box.top < window.innerHeight;
  last = onScreen && first.getBoundingClientRect().top < 0 ? box.top : null;
};
new ResizeObserver(() => {
  const bars = found['.kv-bars'];
  if (last === null || !bars || !bars.isConnected) return (last = null);
  const moved = bars.getBoundingClientRect().top - last;
  if (Math.abs(moved) >= 1) window.scrollBy(0, moved);  // its scroll event takes the place again
}).observe(document.body);
window.addEventListener('scroll', take, {passive: true});
