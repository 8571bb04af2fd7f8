// The LMS's side of the page: static/lms.js (a classic script: required under Node, it gives its pure
// functions) finds the API and survives a bad one; static/loader/course.js turns the reader's progress
// into the SCORM data model's values.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { merged, positionOf, progressOf, reports, sessionTime } from "../../../static/loader/course.js";

const { discover, resumedSearch, parseStored, speaker, VERSIONS } = createRequire(import.meta.url)("../../../static/lms.js");
const [V2004, V12] = VERSIONS;

// A window chain: {name, parent, opener, API...}; `foreign` windows throw on any read, as another origin's do.
function win(props = {}, foreign = false) {
  const w = { ...props };
  w.parent = props.parent || w;
  return foreign ? new Proxy(w, { get: (t, k) => (k === "parent" ? t.parent : (() => { throw new Error("SecurityError"); })()) }) : w;
}
const api12 = () => ({ LMSInitialize: () => "true", LMSGetLastError: () => "0" });
const api2004 = () => ({ Initialize: () => "true", GetLastError: () => "0" });

test("discovery: the nearest parent with an API, 2004's before 1.2's, past windows of another origin", () => {
  const top = win({ API: api12(), API_1484_11: api2004() });
  const middle = win({ parent: top }, true);
  const frame = win({ parent: middle });
  const found = discover(frame);
  assert.equal(found.version.name, "2004");
  assert.equal(found.api, top.API_1484_11);
  assert.equal(discover(win({ parent: win({ API: api12() }) })).version.name, "1.2");
});

test("discovery: the opener's chain when the parents have none; nothing at all: null", () => {
  const lmsWindow = win({ API: api12() });
  assert.equal(discover(win({ opener: win({ parent: lmsWindow }) })).api, lmsWindow.API);
  assert.equal(discover(win({ parent: win({}, true) })), null);
  assert.equal(discover(win({ API: { notAnApi: true } })), null);
});

test("the resume: the location's position keys into the launch's query, its language kept", () => {
  assert.equal(resumedSearch("?lang=en&embed=1", "mode=full&t=64&seed=0"), "?lang=en&embed=1&mode=full&t=64&seed=0");
  assert.equal(resumedSearch("?lang=es&embed=1", ""), null);
  assert.equal(resumedSearch("?lang=es", "lang=pt&evil=<x>&t=<script>"), null); // only position keys, plain values
  assert.deepEqual(parseStored('{"reachedEnd":true}'), { reachedEnd: true });
  for (const bad of ["", "[1]", "{", "null", "3"]) assert.deepEqual(parseStored(bad), {});
});

// An API whose calls answer from `behave(name)`; the console lines said.
function lmsWith(version, behave, lastError = () => "0") {
  const calls = [];
  const api = {};
  for (const fn of [version.init, version.get, version.set, version.commit, version.finish]) {
    api[fn] = (...args) => { calls.push([fn, ...args]); return behave(fn, args); };
  }
  api[version.error] = lastError;
  const said = [];
  return { api, calls, said, lms: speaker(api, version, (line) => said.push(line)) };
}

test("a good API: the calls go through, and nothing is said", () => {
  const { lms, calls, said } = lmsWith(V12, (fn) => (fn === "LMSGetValue" ? "mode=full&t=9" : "true"));
  assert.equal(lms.init(), true);
  assert.equal(lms.get("cmi.core.lesson_location"), "mode=full&t=9");
  assert.equal(lms.set("cmi.core.lesson_status", "incomplete"), true);
  assert.equal(lms.commit(), true);
  assert.equal(lms.finish(), true);
  assert.equal(lms.set("cmi.core.lesson_status", "completed"), false); // nothing after the end
  assert.deepEqual(calls.map((c) => c[0]), ["LMSInitialize", "LMSGetValue", "LMSSetValue", "LMSCommit", "LMSFinish"]);
  assert.deepEqual(said, []);
});

test('an API that answers "false" or leaves error codes: one line for the whole visit, the calls go on', () => {
  const { lms, calls, said } = lmsWith(V2004, (fn) => (fn === "SetValue" ? "false" : "true"),
    () => (calls.at(-1)[0] === "Commit" ? "391" : "0"));
  assert.equal(lms.init(), true);
  assert.equal(lms.set("cmi.location", "t=3"), false);
  assert.equal(lms.commit(), false);
  assert.equal(lms.set("cmi.location", "t=4"), false);
  assert.equal(calls.length, 4); // still talking
  assert.equal(said.length, 1);
  assert.match(said[0], /^kv-explorable: the course platform \(SCORM 2004\) refused cmi\.location; the page goes on without it\.$/);
});

test("2004's 'not initialized' (403) on a GetValue is no fault: an element never set reads empty", () => {
  const { lms, said } = lmsWith(V2004, (fn) => (fn === "GetValue" ? "" : "true"), () => "403");
  assert.equal(lms.get("cmi.location"), "");
  assert.deepEqual(said, []);
});

test("an API that throws (gone mid-visit), or refuses to start: one line, then silence", () => {
  const gone = lmsWith(V12, (fn) => { if (fn === "LMSSetValue") throw new TypeError("gone"); return "true"; });
  assert.equal(gone.lms.init(), true);
  assert.equal(gone.lms.set("cmi.core.lesson_location", "t=3"), false);
  assert.equal(gone.lms.alive(), false);
  gone.lms.commit();
  gone.lms.finish();
  assert.deepEqual(gone.calls.map((c) => c[0]), ["LMSInitialize", "LMSSetValue"]);
  assert.equal(gone.said.length, 1);
  assert.match(gone.said[0], /refused cmi\.core\.lesson_location \(TypeError\)/);
  const refused = lmsWith(V12, () => "false");
  assert.equal(refused.lms.init(), false);
  assert.equal(refused.lms.alive(), false);
});

const bounds = { PROMPT: 2, LAST: 64 };
const record = (o = {}) => ({ reachedEnd: false, sawIndexError: false, quiz: { answered: 0, correct: 0, total: 5 }, challengePassed: false, ...o });

test("the progress event: the position from the state's query, the milestones from the app's record", () => {
  const p = progressOf("?lang=es&mode=full&t=30&seed=0", record({ quiz: { answered: 2, correct: 1, total: 5 } }), bounds, false);
  assert.deepEqual(p, {
    type: "kv-explorable:progress", version: 1, t: 30, mode: "full", reachedEnd: false, sawIndexError: false,
    quiz: { answered: 2, correct: 1, total: 5 }, challengePassed: false,
  });
  const early = progressOf("?lang=es&embed=1", null, bounds, false); // the preview, before the app says anything
  assert.deepEqual([early.t, early.mode, early.reachedEnd, early.quiz.total], [2, "cache", false, 0]);
  assert.equal(progressOf("?t=64", null, bounds, false).reachedEnd, true); // 64 on the preview counts
  assert.equal(progressOf("?t=10", null, bounds, true).reachedEnd, true); // and stays
});

test("an earlier visit's milestones only add; its quiz stands until this visit answers", () => {
  const stored = { reachedEnd: true, sawIndexError: true, quiz: { answered: 5, correct: 4, total: 5 } };
  const now = progressOf("?t=2", record(), bounds, false);
  assert.deepEqual(merged(stored, now), { reachedEnd: true, sawIndexError: true, quiz: stored.quiz, challengePassed: false });
  const answered = progressOf("?t=2", record({ quiz: { answered: 1, correct: 0, total: 5 } }), bounds, false);
  assert.deepEqual(merged(stored, answered).quiz, { answered: 1, correct: 0, total: 5 });
  const unanswered = { quiz: { answered: 0, correct: 0, total: 0 } }; // kept before the live page was there
  assert.deepEqual(merged(unanswered, now).quiz, { answered: 0, correct: 0, total: 5 });
  assert.equal(positionOf("?lang=es&mode=full&t=64&seed=0&speed=4&top_p=0.9&embed=1&theme=dark"), "mode=full&t=64&seed=0&top_p=0.9&speed=4");
});

test("the data model's values: incomplete until both milestones, the score in percent, 2004's threshold", () => {
  const kept = (o) => merged({}, progressOf("?t=64", record(o), bounds, false));
  const values = (version, o, passing) => Object.fromEntries(reports(version, kept(o), passing));
  assert.equal(values("1.2", {})["cmi.core.lesson_status"], "incomplete"); // at 64, no IndexError yet
  assert.equal(values("1.2", { sawIndexError: true })["cmi.core.lesson_status"], "completed");
  assert.equal(values("1.2", {})["cmi.core.score.raw"], undefined); // no answer, no score
  const some = values("2004", { quiz: { answered: 3, correct: 3, total: 5 } });
  assert.deepEqual([some["cmi.score.raw"], some["cmi.score.min"], some["cmi.score.max"], some["cmi.score.scaled"], some["cmi.success_status"]],
    ["60", "0", "100", "0.6", "unknown"]);
  const four = { quiz: { answered: 5, correct: 4, total: 5 } };
  assert.equal(values("2004", four)["cmi.success_status"], "passed"); // 0.8: the documented threshold
  assert.equal(values("2004", four, 0.9)["cmi.success_status"], "failed"); // the LMS's own, when it has one
  assert.equal(values("1.2", four)["cmi.success_status"], undefined);
  assert.deepEqual(JSON.parse(values("1.2", four)["cmi.suspend_data"]).quiz, four.quiz);
  assert.equal(sessionTime("2004", 3723400), "PT1H2M3S");
  assert.equal(sessionTime("1.2", 3723400), "0001:02:03");
});
