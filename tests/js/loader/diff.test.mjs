// static/diff.js (a classic script, required as Node requires one) on a small stand-in for the DOM: the
// changes it finds make the old tree the new one, touching only what differs.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { h, html } from "./fakedom.mjs";

const { diff } = createRequire(import.meta.url)("../../../static/diff.js");

// The changes from `old` to `fresh`, applied: [ops, the old tree written back].
function apply(old, fresh) {
  const ops = [];
  diff(old, fresh, ops);
  for (const [, op] of ops) op();
  return ops;
}

const bars = (...values) => h("div", { class: "bars" }, ...values.map((v) => h("span", { class: "bar", "data-v": v }, v)));

test("the same tree: no change", () => {
  assert.deepEqual(apply(bars("1", "2"), bars("1", "2")), []);
});

test("a text and an attribute that changed: those alone", () => {
  const old = bars("1", "2", "3");
  const untouched = old.childNodes[0];
  const ops = apply(old, bars("1", "2", "4"));
  assert.equal(html(old), html(bars("1", "2", "4")));
  assert.equal(old.childNodes[0], untouched);
  assert.equal(ops.length, 2); // data-v and the text
  assert.deepEqual(ops.map(([node]) => node), [old.childNodes[2], old.childNodes[2].firstChild]);
});

test("a node that came in the middle is inserted before the one it precedes", () => {
  const old = h("p", {}, h("b", {}, "a"), h("i", {}, "c"));
  const i = old.childNodes[1];
  const ops = apply(old, h("p", {}, h("b", {}, "a"), h("u", {}, "b"), h("i", {}, "c")));
  assert.equal(html(old), "<p><b>a</b><u>b</u><i>c</i></p>");
  assert.equal(ops.length, 1);
  assert.equal(ops[0][0], i); // drawn where the node it goes before is
  assert.equal(old.childNodes[2], i); // the others stay the same nodes
});

test("nodes that went are removed", () => {
  const old = h("p", {}, h("b", {}, "a"), h("u", {}, "b"), h("s", {}, "x"), h("i", {}, "c"));
  apply(old, h("p", {}, h("b", {}, "a"), h("i", {}, "c")));
  assert.equal(html(old), "<p><b>a</b><i>c</i></p>");
});

test("a node appended is drawn where the last child is", () => {
  const old = bars("1", "2");
  const ops = apply(old, bars("1", "2", "3"));
  assert.equal(html(old), html(bars("1", "2", "3")));
  assert.equal(ops.length, 1);
  assert.equal(ops[0][0], old.childNodes[1]);
});

test("another kind of node, or another class, is replaced whole", () => {
  const old = h("div", {}, h("span", { class: "a" }, "x"), "text");
  apply(old, h("div", {}, h("span", { class: "b" }, "x"), h("em", {}, "text")));
  assert.equal(html(old), '<div><span class="b">x</span><em>text</em></div>');
});

test("more nodes in a row than it looks ahead for: each changed in place", () => {
  const old = h("p", {}, h("b", {}, "a"), h("i", {}, "z"));
  const fresh = h("p", {}, h("b", {}, "a"), ...["1", "2", "3", "4", "5"].map((t) => h("u", {}, t)), h("i", {}, "z"));
  apply(old, fresh);
  assert.equal(html(old), "<p><b>a</b><u>1</u><u>2</u><u>3</u><u>4</u><u>5</u><i>z</i></p>");
});
