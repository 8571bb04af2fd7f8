/* The preview answers the lesson's controls. Avanzar, Animar (at the page's speed), the mode switch,
 * Reiniciar, the step back and their keys move through the prerendered states (the ones ahead fetched
 * in advance, so a click is answered in the frame it was made), and the live region says what the live
 * page says (each state carries the live page's words: app/figure/snapshot.py `says`). What only the
 * running model gives waits for it and says so: the step past the window (the lesson's IndexError) and
 * every action after it are kept, in order; the sections, the clock and the settings say they need the
 * model. The worker builds the app at the reader's position (a "position" message after each action:
 * the query of that state, and how many actions it holds) and moves it to their latest before the page
 * shows it (live.js); the page replays, once, the actions it does not hold (`endPreview`). */
import { page, pv, TEXT } from "./state.js";
import { otherMode, positionQuery, stateName, stepPeriod, tBounds } from "./config.js";
import { $, afterPaint, setText } from "./dom.js";
import { announce, bar, fetchAhead, loadState, says, stateTexts, swapPreview } from "./preview.js";
import { askForFonts } from "./fonts.js";
import { probe } from "./probe.js";

const keys = () => globalThis.kvKeys; // static/keys.js: a classic script (static/early.js keeps keys with it)
let chain = Promise.resolve(); // the states are drawn in the order of the actions (but `passedOver`)
let started = false;
let saidEarly = null; // said when a click's first part was drawn early (static/early.js), and nothing since

// An action the model answers once it runs: kept, in order; the page says it waits for the model.
function keep(cmd) {
  pv.kept = true;
  pv.seq += 1;
  pv.log.push({ seq: pv.seq, cmd, kept: true });
  document.body.dataset.kept = String(pv.log.filter((e) => e.kept).length);
  wakeRender(); // the live page, now
  chain = chain.then(() => announce(TEXT.shell_kept, TEXT.shell_kept));
}

// The page moves to (mode, t): the worker hears of it at once; the state is drawn when its HTML is
// here (at once when it was fetched ahead), in order (unless passed over), and `say` picks what the
// live region says.
// `since`: when the reader asked (kv.answers counts from it).
function go(mode, t, cmd, say, since = performance.now()) {
  Object.assign(pv, { mode, t, seq: pv.seq + 1 });
  const query = positionQuery(location.search, mode, t);
  pv.log.push({ seq: pv.seq, cmd, query });
  document.body.dataset.kvState = query;
  if (page.worker) page.worker.postMessage({ type: "position", seq: pv.seq, query });
  const name = stateName(page.lang, mode, t);
  const seq = pv.seq;
  chain = chain
    .then(() => (passedOver(seq) ? null : stateTexts.get(name) || loadState(name)))
    .then((html) => (html === null ? passOver(since) : answer(html, name, seq, say, since)))
    .catch((e) => {
      console.warn("preview state unavailable", e);
      pv.active = false; // the rest waits for the model (the worker already knows where the reader is)
      stopPlaying(true);
      announce(TEXT.shell_kept, TEXT.shell_kept);
    });
}

// A move whose turn comes when the reader has already asked for another move is not drawn: the next
// state is drawn from the one shown (the preview draws any state from any other), and it answers both.
// A reader who taps faster than the preview draws sees their latest place, not a queue of the ones before.
// The first answer is always drawn (its first part may be on the screen already: static/early.js).
const passed = []; // when the reader asked for each move passed over, answered with the next one drawn

// The reader's latest move on the preview (an action that changed its state; the kept ones come after
// every move), or null.
export function latestMove() {
  const moves = pv.log.filter((e) => !e.kept);
  return moves.length ? moves[moves.length - 1] : null;
}

function passedOver(seq) {
  return (page.kv.answers || []).length > 0 && latestMove().seq > seq;
}

function passOver(since) {
  passed.push(since);
  probe.passedOver += 1;
}

function answer(html, name, seq, say, since) {
  if (pv.done) return;
  swapPreview($("kv-snapshot"), html, name);
  pv.shown = seq;
  // how long the reader waited (tests/bench_load.py): the state is drawn in the next frame
  const at = performance.now();
  const kv = page.kv;
  kv.answers = (kv.answers || []).concat(passed.splice(0).map((asked) => at - asked), [at - since]);
  // marked after that frame (a mark here would reach the browser in the click's own task)
  if (kv.answers.length === 1) afterPaint(() => performance.mark("kv-first-answer", { startTime: at }));
  const words = says();
  const text = say(words);
  const said = saidEarly;
  saidEarly = null;
  if (said !== text || $("kv-say").textContent !== text) announce(text);
  setPlayLabel(words);
  afterPaint(fetchAhead); // the next states' requests after this frame, not before it
}

function setPlayLabel(words) {
  setText(bar().querySelector("[data-kv=play]"), pv.playing ? words.pause_label : words.play_label);
}

function period() {
  const reduced = globalThis.matchMedia && matchMedia("(prefers-reduced-motion: reduce)").matches;
  return stepPeriod(page.query.speed, reduced);
}

// The animation (the live page's Controls.tick): a step every period, counted from one step's start
// to the next, each after the one before is drawn; it stops at the window's end (the step past it
// is the reader's).
function tickPreview() {
  if (!pv.playing || pv.done) return;
  const start = performance.now();
  act("step");
  if (pv.t >= tBounds(page.cfg).LAST || !pv.active || pv.kept) return stopPlaying(true);
  chain.then(() => {
    if (pv.playing && !pv.done) pv.timer = setTimeout(tickPreview, Math.max(0, period() - (performance.now() - start)));
  });
}

function stopPlaying(quiet) {
  if (!pv.playing) return;
  pv.playing = false;
  clearTimeout(pv.timer);
  chain = chain.then(() => {
    if (pv.done) return;
    const words = says();
    setPlayLabel(words);
    if (!quiet) announce(words.pause);
  });
}

function play() {
  if (pv.playing) return stopPlaying(false);
  if (pv.t >= tBounds(page.cfg).LAST) return void (chain = chain.then(() => announce(says().full)));
  pv.playing = true;
  chain = chain.then(() => {
    const words = says();
    setPlayLabel(words);
    announce(words.play);
  });
  fetchAhead();
  pv.timer = setTimeout(tickPreview, period());
}

// `since`: when the reader asked (kv.answers counts from it); a kept early input's own time.
export function act(cmd, since) {
  if (pv.done || page.live) return;
  if (pv.kept || !pv.active) return keep(cmd);
  const other = otherMode(page.cfg, pv.mode);
  const { PROMPT, LAST } = tBounds(page.cfg);
  switch (cmd) {
    case "step":
      if (pv.t >= LAST) return keep(cmd); // past the window: the model's own IndexError
      return go(pv.mode, pv.t + 1, cmd, (w) => w.step, since);
    case "toggle":
      return go(other, pv.t, cmd, (w) => w.mode[other], since);
    case "reset":
      stopPlaying(true);
      return go(pv.mode, PROMPT, cmd, (w) => w.reset, since);
    case "back":
      stopPlaying(true);
      if (pv.t <= PROMPT) return void (chain = chain.then(() => announce(says().back_none)));
      return go(pv.mode, pv.t - 1, cmd, (w) => w.back, since);
    case "play":
      return play();
  }
}

function onKey(event) {
  const name = pv.done ? null : keys().keyCommand(event);
  if (!name) return;
  event.preventDefault();
  act(name);
}

function onClick(event, since) {
  if (event.target.closest("[data-kv]")) {
    const cmd = keys().clickCommand(event.target, pv.mode);
    if (cmd) act(cmd, since);
    return;
  }
  if (event.target.closest(".cardhead, .speed, .card")) {
    announce(TEXT.shell_wait, TEXT.shell_wait);
    pv.wanted = true;
    wakeRender();
  }
}

// The controls start once the document is parsed; the inputs kept before (static/early.js) are answered
// now, in their order, each waited for since its input.
export function startControls(holder) {
  if (started || page.live) return;
  started = true;
  holder.addEventListener("click", onClick);
  document.addEventListener("keydown", onKey);
  const kept = page.early.take();
  saidEarly = page.early.said;
  performance.mark("kv-controls");
  page.kv.times.controls = performance.now() - page.t0;
  for (const event of kept) {
    if (event.type === "click") onClick(event, event.timeStamp);
    else act(keys().KEYS[event.key], event.timeStamp);
  }
  // The requests, and the next step's changes after the first paint; the font samples once it is on
  // the screen. A kept input's answer comes first: these wait for its frame.
  const later = kept.length ? (fn) => chain.then(() => afterPaint(fn)) : (fn) => fn();
  later(() => fetchAhead(true));
  page.boot.firstPainted.then(() => later(askForFonts));
}

// The live page takes over: the preview stops answering; the actions the app was not built with
// (after the first `seq`), and the animation if it runs, go to it, once.
export function endPreview(seq) {
  pv.done = true;
  clearTimeout(pv.timer);
  document.removeEventListener("keydown", onKey);
  page.early.take(); // the controls never started: nothing more is kept for them
  delete document.body.dataset.kept;
  const commands = pv.log.filter((e) => e.seq > seq).map((e) => e.cmd);
  if (pv.playing) commands.push("play");
  pv.playing = false;
  return commands;
}

// The live page's first render waits for the reader's pause. It keeps the main thread busy (in slices,
// slices.js: a click in between is answered, but a frame or two later than by the preview alone), so
// while the reader is clicking, stepping or scrolling the preview (which answers them) it waits until
// QUIET_MS pass without an input (static/boot.js keeps their times from the start); an action only the
// model answers (a kept one, a section, the speed) starts it at once (`wakeRender`).
export const QUIET_MS = 1200;

let waker = null; // the render waiting for the pause, woken by an action only the model answers

export const lastInput = () => page.boot.input.last;

export function wakeRender() {
  if (waker) waker();
}

export function readerPaused() {
  return new Promise((resolve) => {
    let timer = null;
    const check = () => {
      const wait = lastInput() + QUIET_MS - performance.now();
      if (wait > 0 && !pv.kept && !pv.wanted && pv.active && !pv.done) return void (timer = setTimeout(check, wait));
      waker = null;
      resolve();
    };
    waker = () => {
      clearTimeout(timer);
      check();
    };
    check();
  });
}
