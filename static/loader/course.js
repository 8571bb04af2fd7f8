/* The course around the page hears what the reader did (docs/embedding.md):
 *
 * - in a frame, the parent gets {type: "kv-explorable:progress", version: 1, t, mode, reachedEnd,
 *   sawIndexError, quiz: {answered, correct, total}, challengePassed} at once and at every change;
 * - in an LMS (static/lms.js found its API: window.kvLms), the same goes into the SCORM data model:
 *   the position in the location (a relaunch resumes there: static/lms.js), the milestones in
 *   suspend_data, incomplete until the reader has both reached t = LAST and met the IndexError past it,
 *   then completed; the quiz's score as a percentage of its questions (2004: also scaled, and passed or
 *   failed against the LMS's cmi.scaled_passing_score, else PASS_SCALED, once every question is
 *   answered). A commit at each milestone and when the page is hidden; the end (Terminate, LMSFinish)
 *   only when the page is unloaded.
 *
 * Where the reader is comes from <body data-kv-state> (the preview's and the live page's query); what
 * they did, from <body data-kv-progress> (the app's: app/state/progress.py). What an earlier visit
 * kept (suspend_data) only adds: a milestone once met stays met. */
import { page } from "./state.js";
import { tBounds } from "./config.js";

export const PASS_SCALED = 0.8; // the quiz is passed with 4 of its 5 questions right
const POSITION_KEYS = ["mode", "t", "seed", "top_p", "speed", "kv_heads", "precision"];
const FIELDS = {
  "2004": {
    location: "cmi.location", suspend: "cmi.suspend_data", completion: "cmi.completion_status",
    raw: "cmi.score.raw", min: "cmi.score.min", max: "cmi.score.max", time: "cmi.session_time",
  },
  "1.2": {
    location: "cmi.core.lesson_location", suspend: "cmi.suspend_data", completion: "cmi.core.lesson_status",
    raw: "cmi.core.score.raw", min: "cmi.core.score.min", max: "cmi.core.score.max", time: "cmi.core.session_time",
  },
};

const flag = (v) => v === true;

// The reader's progress: the position (a query, and the page's bounds) and the app's record (or none yet).
export function progressOf(query, record, bounds, seenEnd) {
  const params = new URLSearchParams(query || "");
  const t = Number.parseInt(params.get("t"), 10);
  const quiz = (record && record.quiz) || {};
  const num = (v) => (Number.isFinite(v) ? v : 0);
  const at = Number.isFinite(t) ? t : bounds.PROMPT;
  return {
    type: "kv-explorable:progress",
    version: 1,
    t: at,
    mode: params.get("mode") || "cache",
    reachedEnd: flag(record && record.reachedEnd) || seenEnd || at >= bounds.LAST,
    sawIndexError: flag(record && record.sawIndexError),
    quiz: { answered: num(quiz.answered), correct: num(quiz.correct), total: num(quiz.total) },
    challengePassed: flag(record && record.challengePassed),
  };
}

// This visit's progress with what earlier visits kept (suspend_data): milestones only add; the quiz is
// this visit's once it has an answer.
export function merged(stored, now) {
  const earlier = stored.quiz && stored.quiz.answered > 0 ? stored.quiz : null;
  const quiz = now.quiz.answered > 0 || !earlier ? now.quiz : earlier;
  return {
    reachedEnd: now.reachedEnd || flag(stored.reachedEnd),
    sawIndexError: now.sawIndexError || flag(stored.sawIndexError),
    quiz: { answered: quiz.answered | 0, correct: quiz.correct | 0, total: quiz.total | 0 },
    challengePassed: now.challengePassed || flag(stored.challengePassed),
  };
}

// The position a relaunch resumes at: the query's position keys (static/lms.js RESUME_KEYS).
export function positionOf(query) {
  const params = new URLSearchParams(query || "");
  const kept = new URLSearchParams();
  for (const key of POSITION_KEYS) if (params.has(key)) kept.set(key, params.get(key));
  return kept.toString();
}

// The SCORM data model's values for (version, merged progress): [[element, value], ...], in order.
export function reports(version, kept, passing = PASS_SCALED) {
  const f = FIELDS[version];
  const done = kept.reachedEnd && kept.sawIndexError;
  const out = [[f.completion, done ? "completed" : "incomplete"]];
  const { answered, correct, total } = kept.quiz;
  if (answered > 0 && total > 0) {
    const percent = Math.round((100 * correct) / total);
    out.push([f.min, "0"], [f.max, "100"], [f.raw, String(percent)]);
    if (version === "2004") {
      out.push(["cmi.score.scaled", String(percent / 100)]);
      const status = answered < total ? "unknown" : percent / 100 >= passing ? "passed" : "failed";
      out.push(["cmi.success_status", status]);
    }
  }
  out.push([f.suspend, JSON.stringify(kept)]);
  return out;
}

// How long the visit took, in the version's format.
export function sessionTime(version, ms) {
  const s = Math.max(0, Math.round(ms / 1000));
  if (version === "2004") return `PT${Math.floor(s / 3600)}H${Math.floor(s / 60) % 60}M${s % 60}S`;
  const two = (n) => String(n).padStart(2, "0");
  return `${String(Math.floor(s / 3600)).padStart(4, "0")}:${two(Math.floor(s / 60) % 60)}:${two(s % 60)}`;
}

function readRecord() {
  try {
    return JSON.parse(document.body.dataset.kvProgress || "null");
  } catch (e) {
    return null;
  }
}

// The LMS's side: the values set when they change, a commit at each milestone, the end at pagehide.
function lmsReporter(lms) {
  const f = FIELDS[lms.version];
  const stored = lms.stored || {};
  const passing = Number.parseFloat(lms.version === "2004" ? lms.get("cmi.scaled_passing_score") : "");
  // a record the LMS already holds as done is never set back to incomplete (whatever suspend_data says)
  const wasDone = ["completed", "passed"].includes(lms.get(f.completion));
  const last = new Map();
  let milestones = null;
  const put = (now) => {
    const kept = merged(stored, now);
    const values = [[f.location, positionOf(document.body.dataset.kvState || location.search)],
      ...reports(lms.version, kept, Number.isFinite(passing) ? passing : PASS_SCALED)]
      .filter(([key, value]) => !(wasDone && key === f.completion && value === "incomplete"));
    for (const [key, value] of values) {
      if (last.get(key) !== value && lms.set(key, value)) last.set(key, value);
    }
    // a milestone: the status or the score changed, or the challenge was passed
    const reached = JSON.stringify([values.filter(([key]) => key !== f.location && key !== f.suspend), kept.challengePassed]);
    if (reached !== milestones) {
      milestones = reached;
      lms.commit(); // the first one says the attempt began (incomplete)
    }
  };
  return {
    put,
    hidden: () => lms.commit(),
    end: () => {
      lms.set(f.time, sessionTime(lms.version, performance.now())); // since the page's navigation
      lms.commit();
      lms.finish();
    },
  };
}

export function startCourse() {
  const lms = globalThis.kvLms && globalThis.kvLms.alive() ? globalThis.kvLms : null;
  const inFrame = window.parent !== window;
  if (!lms && !inFrame) return;
  const bounds = tBounds(page.cfg);
  const reporter = lms ? lmsReporter(lms) : null;
  let sent = "", seenEnd = false;
  const update = () => {
    const query = document.body.dataset.kvState || location.search;
    const now = progressOf(query, readRecord(), bounds, seenEnd);
    seenEnd = now.reachedEnd;
    const text = JSON.stringify(now);
    if (text === sent) return;
    sent = text;
    page.kv.progress = now;
    if (inFrame) window.parent.postMessage(now, "*");
    if (reporter) reporter.put(now);
  };
  new MutationObserver(update).observe(document.body, {
    attributes: true, attributeFilter: ["data-kv-state", "data-kv-progress"],
  });
  update();
  if (!reporter) return;
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "hidden") reporter.hidden();
  });
  addEventListener("pagehide", () => reporter.end());
}
