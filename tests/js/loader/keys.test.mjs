// static/keys.js (a classic script, required as Node requires one): the command a key or a click gives.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";

const { keyCommand, clickCommand } = createRequire(import.meta.url)("../../../static/keys.js");

const element = (tag, attrs = {}, more = {}) => ({
  tagName: tag.toUpperCase(),
  getAttribute: (name) => (name in attrs ? attrs[name] : null),
  ...more,
});
const key = (k, target = element("body"), more = {}) => ({ key: k, target, defaultPrevented: false, ...more });

test("the live page's keys", () => {
  const got = ["ArrowRight", "n", "ArrowLeft", "B", " ", "p", "c", "R", "x", "Enter"].map((k) => keyCommand(key(k)));
  assert.deepEqual(got, ["step", "step", "back", "back", "play", "play", "toggle", "reset", null, null]);
  assert.equal(keyCommand(key("constructor")), null);
});

test("never with a modifier, nor a key another handler took", () => {
  for (const more of [{ ctrlKey: true }, { metaKey: true }, { altKey: true }, { defaultPrevented: true }]) {
    assert.equal(keyCommand(key("n", element("body"), more)), null);
  }
});

test("never a key the focused control needs itself", () => {
  assert.equal(keyCommand(key("n", element("input"))), null); // a text field types it
  assert.equal(keyCommand(key("n", element("input", { type: "range" }))), "step");
  assert.equal(keyCommand(key("ArrowRight", element("input", { type: "range" }))), null); // a slider moves
  assert.equal(keyCommand(key(" ", element("button"))), null); // a button presses itself
  assert.equal(keyCommand(key("n", element("button"))), "step");
  assert.equal(keyCommand(key("ArrowLeft", element("div", { role: "tab" }))), null);
  assert.equal(keyCommand(key("p", element("div", {}, { isContentEditable: true }))), null);
  assert.equal(keyCommand(key("r", element("select"))), null);
});

test("a click: its button's command, the mode switch's only to the other mode", () => {
  const button = (data) => ({ closest: (sel) => (sel === "[data-kv]" ? { dataset: data } : null) });
  assert.equal(clickCommand(button({ kv: "step" }), "cache"), "step");
  assert.equal(clickCommand(button({ kv: "mode", mode: "full" }), "cache"), "toggle");
  assert.equal(clickCommand(button({ kv: "mode", mode: "cache" }), "cache"), null);
  assert.equal(clickCommand({ closest: () => null }, "cache"), null);
  assert.equal(clickCommand({}, "cache"), null); // a text node's click: no element
});
