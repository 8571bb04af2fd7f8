// A small stand-in for the DOM, enough for static/diff.js: elements with attributes (class among them)
// and children, text nodes; `h` builds a tree, `html` writes one back (to compare two).
class FakeNode {
  constructor(nodeType, nodeName) {
    this.nodeType = nodeType;
    this.nodeName = nodeName;
    this.parentNode = null;
    this.childNodes = [];
  }
  get firstChild() { return this.childNodes[0] || null; }
  get nextSibling() {
    const siblings = this.parentNode ? this.parentNode.childNodes : [];
    return siblings[siblings.indexOf(this) + 1] || null;
  }
  get lastElementChild() { return this.childNodes.filter((n) => n.nodeType === 1).pop() || null; }
  remove() {
    if (!this.parentNode) return;
    this.parentNode.childNodes.splice(this.parentNode.childNodes.indexOf(this), 1);
    this.parentNode = null;
  }
  replaceWith(node) {
    const parent = this.parentNode;
    node.remove();
    parent.childNodes.splice(parent.childNodes.indexOf(this), 1, node);
    node.parentNode = parent;
    this.parentNode = null;
  }
  insertBefore(node, before) {
    node.remove();
    this.childNodes.splice(this.childNodes.indexOf(before), 0, node);
    node.parentNode = this;
    return node;
  }
  appendChild(node) {
    node.remove();
    this.childNodes.push(node);
    node.parentNode = this;
    return node;
  }
  isEqualNode(other) { return html(this) === html(other); }
}

class FakeText extends FakeNode {
  constructor(value) {
    super(3, "#text");
    this.nodeValue = value;
  }
}

class FakeElement extends FakeNode {
  constructor(tag, attrs) {
    super(1, tag.toUpperCase());
    this.attrs = new Map(Object.entries(attrs || {}));
  }
  getAttribute(name) { return this.attrs.has(name) ? this.attrs.get(name) : null; }
  getAttributeNames() { return [...this.attrs.keys()]; }
  hasAttribute(name) { return this.attrs.has(name); }
  setAttribute(name, value) { this.attrs.set(name, String(value)); }
  removeAttribute(name) { this.attrs.delete(name); }
}

export function h(tag, attrs, ...children) {
  const el = new FakeElement(tag, attrs);
  for (const c of children) el.appendChild(typeof c === "string" ? new FakeText(c) : c);
  return el;
}

export function html(node) {
  if (node.nodeType === 3) return node.nodeValue;
  const attrs = [...node.attrs].sort().map(([k, v]) => ` ${k}="${v}"`).join("");
  return `<${node.nodeName.toLowerCase()}${attrs}>${node.childNodes.map(html).join("")}</${node.nodeName.toLowerCase()}>`;
}
