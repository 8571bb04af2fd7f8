/* The live page's first render waits for the reader's pause. It keeps the main thread busy (in
 * slices, slices.js: a click in between is answered, but a frame or two later than by the preview
 * alone), so while the reader is clicking, stepping or scrolling the preview (which answers them) it
 * waits until QUIET_MS pass without an input (static/boot.js keeps their times from the start); an
 * action only the model answers (a kept one, a section, the speed) starts it at once (`wakeRender`). */
import { page, pv } from "./state.js";

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
