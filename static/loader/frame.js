/* In an iframe: the content's height, told to the course page whenever it changes, so the frame can fit
 * it both ways (docs/embedding.md). (The course page's own messages, a theme and where its screen
 * begins, are heard from the first paint: static/boot.js.) The content is <main>: the document's own
 * scrollHeight is never less than the frame, so a frame sized by it could grow but never shrink.
 *
 * The handshake: a host running the snippet's script answers by setting the frame to the height sent
 * (this window is resized to it). A frame that stays shorter than its content without ever being resized
 * so is fixed (the host has no script, as many LMSs store a page): then the page makes its own scrolling
 * visible and offers the full page (`frameCue`). */
import { TEXT } from "./state.js";
import { $ } from "./dom.js";

const FRAME_ANSWER_MS = 3000; // how long a host's script may take to fit the frame (a busy phone too)

export function reportHeight() {
  if (window.parent === window) return;
  const main = $("kv-main");
  let sent = 0, answered = false, judging = null;
  const asked = new Set(); // every height sent: the host may answer an earlier one late
  const content = () => Math.ceil(main.getBoundingClientRect().bottom + window.scrollY);
  // <html data-frame>: "judging" until the host had its time to answer, then "fitted" (it did),
  // "fixed" (it never did and the content is taller than the frame) or "fits" (no need so far)
  const judge = () => {
    const short = content() > window.innerHeight + 2;
    document.documentElement.dataset.frame = answered ? "fitted" : short ? "fixed" : "fits";
    frameCue(!answered && short);
  };
  addEventListener("resize", () => {
    if ([...asked].some((h) => Math.abs(window.innerHeight - h) <= 2)) answered = true;
    judge();
  });
  const send = () => {
    const height = content();
    if (height !== sent) {
      sent = height;
      asked.add(height);
      window.parent.postMessage({ type: "kv-explorable:height", height }, "*");
    }
    clearTimeout(judging);
    document.documentElement.dataset.frame = "judging";
    judging = setTimeout(judge, FRAME_ANSWER_MS);
  };
  new ResizeObserver(send).observe(main);
  send();
}

// The link to the page alone, in the reader's current state (the live page keeps it on <body>: a11y.js).
function fullPageLink() {
  const link = document.createElement("a");
  const fullPage = () => {
    const full = new URL(document.body.dataset.kvState || window.location.search, window.location.href);
    full.searchParams.delete("embed");
    link.href = full.toString();
  };
  fullPage();
  for (const event of ["pointerdown", "focus", "mouseenter"]) link.addEventListener(event, fullPage);
  link.target = "_blank";
  link.rel = "noopener";
  link.textContent = TEXT.shell_frame_open + " ↗";
  return link;
}

// In a frame of fixed height: at its top (the first screen a reader sees of it) a note that it scrolls
// inside, that the course page goes on past its end, and a link that opens the page alone, in a new tab;
// a scroll bar that stays; and a line at the frame's bottom saying there is more below (until the reader
// gets there), with the link again. Nothing contains the scroll: a swipe past the frame's end (or above
// its top) scrolls the course page (static/style.css).
function frameCue(on) {
  document.documentElement.classList.toggle("kv-fixed-frame", on);
  frameNote(on);
  let cue = $("kv-frame-cue");
  if (!on) {
    if (cue) cue.hidden = true;
    return;
  }
  if (!cue) {
    cue = document.createElement("div");
    cue.id = "kv-frame-cue";
    cue.setAttribute("role", "note");
    const more = document.createElement("span");
    more.className = "kv-frame-more";
    more.textContent = "↓ " + TEXT.shell_frame_more;
    cue.append(more, fullPageLink());
    document.body.append(cue);
    const atEnd = () => cue.classList.toggle("kv-at-end",
      window.scrollY + window.innerHeight >= document.documentElement.scrollHeight - 4);
    addEventListener("scroll", atEnd, { passive: true });
    atEnd();
    // the page's end stays above the line, however many lines it takes (a phone wraps it)
    new ResizeObserver(() => document.documentElement.style.setProperty("--kv-cue-h", cue.offsetHeight + "px"))
      .observe(cue);
  }
  cue.hidden = false;
}

// The note at the frame's top, the first thing in <main>: what it pushes down, the frame's scroll
// follows (a reader already inside keeps their place).
function frameNote(on) {
  let note = $("kv-frame-note");
  if (!note && !on) return;
  if (!note) {
    note = document.createElement("p");
    note.id = "kv-frame-note";
    note.setAttribute("role", "note");
    note.append(TEXT.shell_frame_note + " ", fullPageLink());
    note.hidden = true;
    $("kv-main").prepend(note);
  }
  if (note.hidden === !on) return;
  const before = note.offsetHeight;
  note.hidden = !on;
  if (window.scrollY > 0) window.scrollBy(0, note.offsetHeight - before);
}
