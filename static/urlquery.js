/* The page's URL parameters, read before Python runs exactly as the app reads them
 * (app/state/settings.py, Settings.from_query): a key given twice counts once, with its last value; a
 * value is trimmed of spaces; choices are case-insensitive (with their aliases); numbers are plain
 * ASCII digits within their bounds, at most `max_digits` characters. The rules themselves (keys,
 * kinds, choices, aliases, bounds, defaults) come from the app through the build: config.query,
 * Settings.url_rules(). tests/test_urlquery.py runs this file and the app on the same URLs.
 *
 *   kvReadQuery("?lang=en&t=40&t=12", rules) -> {values: {lang: "en", t: 12, ...}, given: {lang: true, t: true}}
 *
 * A missing or bad value gives the default (the app also shows a notice for it).
 */
(function (root) {
  "use strict";

  const own = (obj, key) => Object.prototype.hasOwnProperty.call(obj, key);

  function trimmer(spaces) {
    const set = spaces.replace(/[\\\]^-]/g, "\\$&");
    return new RegExp(`^[${set}]+|[${set}]+$`, "g");
  }

  function parseInteger(text, rule, rules) {
    if (text.length > rules.max_digits || !new RegExp(`^(?:${rules.integer})$`).test(text)) return undefined;
    const value = BigInt(text);
    const [lo, hi] = rule.bounds;
    return value >= BigInt(lo) && value <= BigInt(hi) ? Number(value) : undefined;
  }

  function parseNumber(text, rule, rules) {
    if (text.length > rules.max_digits || !new RegExp(`^(?:${rules.number})$`).test(text)) return undefined;
    const value = Number(text);
    const [lo, hi] = rule.bounds;
    return value >= lo && value <= hi ? value : undefined;
  }

  function parseValue(raw, rule, rules) {
    const text = raw.replace(trimmer(rules.spaces), "");
    const low = text.toLowerCase();
    switch (rule.kind) {
      case "bool":
        return rules.true.includes(low) ? true : rules.false.includes(low) ? false : undefined;
      case "choice": {
        const value = own(rule.aliases, low) ? rule.aliases[low] : low;
        return rule.choices.includes(value) ? value : undefined;
      }
      case "int":
        return parseInteger(text, rule, rules);
      default:
        return parseNumber(text, rule, rules);
    }
  }

  function readQuery(search, rules) {
    const params = new URLSearchParams(search);
    const values = {};
    const given = {};
    for (const [key, rule] of Object.entries(rules.params)) {
      values[key] = rule.default;
      const all = params.getAll(key);
      if (!all.length) continue;
      const value = parseValue(all[all.length - 1], rule, rules);
      if (value !== undefined) {
        values[key] = value;
        given[key] = true;
      }
    }
    return { values, given };
  }

  root.kvReadQuery = readQuery;
  if (typeof module === "object" && module.exports) module.exports = { readQuery };
})(typeof self !== "undefined" ? self : globalThis);
