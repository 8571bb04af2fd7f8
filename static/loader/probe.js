/* Test hooks apart from the page's state: counters of what the loader did, which the tests read
 * (tests/test_preview_browser.py) and the page never does. window.kv.preview shows them beside the
 * preview's state (`expose`), carrying neither. */

export const probe = {
  drawnEarly: null, // the state whose first part a click before the controls drew at once (static/early.js)
  foundAhead: null, // the last state whose changes were found ahead (preview.js findAhead)
  usedAhead: 0, // swaps that applied changes found ahead
  splitAhead: 0, // of those, the swaps whose changes in sight were found ahead too (preview.js splitOps)
  drawnLater: 0, // changes out of the reader's sight, drawn in the frame after the answer's (swapPreview)
  parsedInSwap: [], // the states parsed by the swap that draws them, not ahead (swapPreview)
  passedOver: 0, // moves not drawn: the reader had asked for another (controls.js passedOver)
  fontsAsked: false, // every text of the font samples laid out (fonts.js askForFonts)
  fontsWaited: 0, // times a text of them waited for a press's click (askForFonts)
};

// One object that reads each of `sources`' properties, live (later sources win a name both have).
export function expose(...sources) {
  const view = {};
  for (const source of sources) {
    for (const key of Object.keys(source)) {
      Object.defineProperty(view, key, { get: () => source[key], enumerable: true, configurable: true });
    }
  }
  return view;
}
