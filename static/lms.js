/* The LMS, when the page runs inside one (a SCORM package: buildsupport/scorm.py, docs/embedding.md).
 * A classic script of index.html's <head> (buildsupport/loader.py CLASSIC), before static/boot.js: the
 * LMS's API is synchronous, so the place the reader left (its `location`) is put into the page's URL
 * before the page reads it, and the preview and the worker start there.
 *
 * - The API is found by SCORM's discovery: this window and its parents, nearest first, then the opener
 *   and its parents; SCORM 2004's `API_1484_11` before SCORM 1.2's `API`. A window of another origin is
 *   skipped without a word. No API: nothing here acts (window.kvLms stays undefined), nothing is said.
 * - `window.kvLms` speaks one language for both versions (`get`, `set`, `commit`, `finish`), and
 *   survives the LMS: a call that throws, answers "false" or leaves an error code is said once in the
 *   console (one line for the whole visit) and otherwise ignored; one that throws (the API is gone) or
 *   an initialization refused ends the talking. static/loader/course.js reports through it.
 *
 * Under Node (require) it gives its pure functions and does nothing else (tests/js/loader/lms.test.mjs).
 */
(function () {
  "use strict";

  const VERSIONS = [
    {
      name: "2004", key: "API_1484_11", init: "Initialize", get: "GetValue", set: "SetValue", commit: "Commit",
      finish: "Terminate", error: "GetLastError",
      location: "cmi.location", suspend: "cmi.suspend_data", exit: "cmi.exit",
      unset: "403", // GetValue of an element never set: "not initialized", no fault
    },
    {
      name: "1.2", key: "API", init: "LMSInitialize", get: "LMSGetValue", set: "LMSSetValue", commit: "LMSCommit",
      finish: "LMSFinish", error: "LMSGetLastError",
      location: "cmi.core.lesson_location", suspend: "cmi.suspend_data", exit: "cmi.core.exit",
      unset: null,
    },
  ];
  const MAX_PARENTS = 7; // SCORM's sample discovery climbs at most this far
  // The position keys a resume brings back (the rest of the URL is the launch's: its language, embed=1)
  const RESUME_KEYS = ["mode", "t", "seed", "top_p", "speed", "kv_heads", "precision"];
  const PLAIN = /^[\w.]{1,24}$/;

  // The object a window holds under `key`, if it is an API (of this origin; another's throws on reading)
  function apiOf(win, key) {
    try {
      const api = win[key];
      return api && (typeof api === "object" || typeof api === "function") ? api : null;
    } catch (e) {
      return null;
    }
  }

  function parentOf(win) {
    try {
      return win.parent && win.parent !== win ? win.parent : null;
    } catch (e) {
      return null;
    }
  }

  function openerOf(win) {
    try {
      return win.opener || null;
    } catch (e) {
      return null;
    }
  }

  // {api, version} of the nearest window that has one, or null.
  function discover(start) {
    const chains = [start];
    const opener = openerOf(start);
    if (opener) chains.push(opener);
    for (const first of chains) {
      for (let win = first, up = 0; win && up <= MAX_PARENTS; win = parentOf(win), up++) {
        for (const version of VERSIONS) {
          const api = apiOf(win, version.key);
          if (api && typeof api[version.init] === "function") return { api, version };
        }
      }
    }
    return null;
  }

  // The search of `url` with the resume's position keys of `location` (a query string) put in.
  function resumedSearch(search, location) {
    const saved = new URLSearchParams(location || "");
    const params = new URLSearchParams(search);
    let changed = false;
    for (const key of RESUME_KEYS) {
      const value = saved.get(key);
      if (value !== null && PLAIN.test(value)) {
        params.set(key, value);
        changed = true;
      }
    }
    return changed ? "?" + params.toString() : null;
  }

  // What was kept in suspend_data (course.js writes it): an object, or {} for anything else.
  function parseStored(text) {
    try {
      const value = JSON.parse(text || "{}");
      return value && typeof value === "object" && !Array.isArray(value) ? value : {};
    } catch (e) {
      return {};
    }
  }

  // The one language both versions are spoken in; `say` gets the one console line.
  function speaker(api, version, say) {
    let alive = true, said = false;
    const fault = (what, detail, fatal) => {
      if (fatal) alive = false;
      if (!said) {
        said = true;
        say(`kv-explorable: the course platform (SCORM ${version.name}) refused ${what}${detail}; the page goes on without it.`);
      }
    };
    const call = (fn, args, what) => {
      if (!alive) return null;
      let result, code = "0";
      try {
        result = api[fn](...args);
        code = String(api[version.error]());
      } catch (e) {
        fault(what, ` (${e && e.name ? e.name : "error"})`, true);
        return null;
      }
      if (result === false || result === "false" || (code !== "0" && code !== version.unset)) {
        fault(what, code !== "0" ? ` (error ${code})` : "", fn === version.init);
        return null;
      }
      return result;
    };
    return {
      version: version.name,
      alive: () => alive,
      init: () => call(version.init, [""], version.init) !== null,
      get: (key) => {
        const value = call(version.get, [key], key);
        return value === null ? "" : String(value);
      },
      set: (key, value) => call(version.set, [key, String(value)], key) !== null,
      commit: () => call(version.commit, [""], version.commit) !== null,
      finish: () => {
        const done = call(version.finish, [""], version.finish) !== null;
        alive = false; // nothing after the end
        return done;
      },
    };
  }

  if (typeof module === "object" && module.exports) {
    module.exports = { discover, resumedSearch, parseStored, speaker, VERSIONS };
    return;
  }

  const found = discover(window);
  if (!found) return;
  const lms = speaker(found.api, found.version, (line) => console.warn(line));
  if (!lms.init()) return;
  const v = found.version;
  lms.keys = v;
  lms.stored = parseStored(lms.get(v.suspend));
  lms.set(v.exit, "suspend"); // the next launch resumes (cmi.entry "resume"), its data kept
  const search = resumedSearch(location.search, lms.get(v.location));
  if (search !== null && search !== location.search) {
    try {
      history.replaceState(history.state, "", location.pathname + search + location.hash);
    } catch (e) { /* the URL stays the launch's: the page starts at its state */ }
  }
  window.kvLms = lms;
})();
