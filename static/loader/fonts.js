/* Every font the states will need, asked for once the first paint is on the screen. A browser fetches
 * each font, at each size and weight, the first time a text needs it (Chromium from its browser process,
 * on the main thread), and a click's layout would wait for the fonts of the texts it brings. index.html
 * carries, inert, a sample of every kind of text the states show with the characters its own state does
 * not (<template id="kv-fonts">, app/figure/font_samples.py): laid out here, one text of it at a time, in
 * its place's chain of elements, each in a task of its own (a font's fetch cannot be cut: a click waits
 * for one at most) that takes its turn with the page's other tasks; first what a click on the first
 * paint brings, then the rest, each in the order the page shows them (the live region's first). None
 * while a press waits for its click: neither the first paint nor a click's frame lays them out. Hidden,
 * inert, of no size; removed at the hand-over (live.js). */
import { pv } from "./state.js";
import { probe } from "./probe.js";
import { $, afterPaint } from "./dom.js";

const TEXT_NODE = 3; // Node.TEXT_NODE
// A press on the page (a button or a finger down): its click comes at the release. Until the frame
// after the release (the click's answer drawn in it), the font samples wait, so that the release finds
// no text of theirs being laid out. A release the page never hears of waits this long at most (ms).
const RELEASE_WAIT_MS = 2000;
let pressing = false;
let presses = 0;
const released = []; // what waits for the release

function release() {
  pressing = false;
  for (const fn of released.splice(0)) fn();
}

function pressed(ago) {
  const press = ++presses;
  pressing = true;
  setTimeout(() => { if (press === presses) release(); }, RELEASE_WAIT_MS - ago);
}

// `input`: static/boot.js's input times (a press made while the page was parsed and not released yet).
export function watchPresses(input) {
  const capture = { capture: true, passive: true };
  addEventListener("pointerdown", () => pressed(0), capture);
  for (const type of ["pointerup", "pointercancel"]) addEventListener(type, () => afterPaint(release), capture);
  if (input.down !== null) pressed(Math.min(RELEASE_WAIT_MS, performance.now() - input.down));
}

// One text of the samples, in its place's chain of elements (its style is theirs), its own text only.
function sampleOf(el, tree) {
  let chain = el.cloneNode(false);
  for (const n of el.childNodes) if (n.nodeType === TEXT_NODE) chain.appendChild(n.cloneNode());
  for (let up = el.parentElement; up !== tree; up = up.parentElement) chain = up.cloneNode(false).appendChild(chain).parentNode;
  return chain;
}

export function askForFonts() {
  const samples = $("kv-fonts"); // a <template>: inert until now
  if (!samples || pv.done) return;
  const tree = samples.content.firstElementChild;
  const into = tree.cloneNode(false);
  samples.replaceWith(into);
  const texts = Array.from(tree.querySelectorAll("*"))
    .filter((el) => Array.from(el.childNodes).some((n) => n.nodeType === TEXT_NODE));
  const channel = new MessageChannel(); // a task of its own, in turn with the page's others
  const slice = () => {
    if (pv.done) return; // the live page took over (the samples went with the preview)
    if (pressing) { // the click first
      probe.fontsWaited += 1;
      return void released.push(() => channel.port2.postMessage(0));
    }
    into.appendChild(sampleOf(texts.shift(), tree));
    void into.offsetWidth; // laid out now (the fonts fetched here), not in a frame's
    if (texts.length && !pv.done) channel.port2.postMessage(0);
    else probe.fontsAsked = !pv.done;
  };
  channel.port1.onmessage = slice;
  if (texts.length) channel.port2.postMessage(0);
}
