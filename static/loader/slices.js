/* The live page's first render, drawn in slices. BokehJS builds the live page's views (asynchronously,
 * one `lazy_initialize` each), then draws each root in one synchronous `build`: its DOM, then its layout
 * (children's after_render, styles, a forced style and layout of the whole tree, the plots' measures),
 * then each plot's canvas. For this render only, the loader makes it give the page back: every
 * RENDER_SLICE_MS while the views are built and the DOM is made (a view with what it holds whole: a plot,
 * a card, a line of text), between the children's after_render, and before the styles, the plots'
 * measures, the layout and each plot's first paint. What cannot be split is one step each: decoding the
 * document, the browser's style and layout of the page, the layout of the tallest root.
 *
 * The live page is laid out out of sight meanwhile (#kv-live.kv-building: no height, clipped; a course
 * page's frame is not resized) and Bokeh's resize observers wait for the layout (a root's observer before
 * its layout would render it all again). A click in between is answered by the preview and replayed
 * (controls.js endPreview). Another BokehJS than the one this was written for (a method not where it is
 * looked for) is drawn as it was, in one task. */
import { page } from "./state.js";
import { yieldToPage } from "./dom.js";

// Longer than the staging's slices (staging.js SLICE_MS): a click waits for the steps that cannot be
// split anyway, and fewer slices are fewer frames laid out in between.
export const RENDER_SLICE_MS = 30;

const ownerOf = (proto, name) => {
  while (proto && !Object.prototype.hasOwnProperty.call(proto, name)) proto = Object.getPrototypeOf(proto);
  return proto;
};

// The prototypes whose methods the render's slices replace, from the document's first root's view:
// [[proto, name]] for lazy_initialize, build, after_resize, a plot's paint, invalidate_layout, render_to.
function bokehParts(docs_json) {
  const Bokeh = globalThis.Bokeh;
  const [doc] = Object.values(docs_json);
  const type = doc.roots[0].name; // {type: "object", name: "panel.models.layout.Column", id, ...}
  const view = Bokeh.Models.get(type).prototype.default_view.prototype;
  let base = view;
  while (Object.getPrototypeOf(base) && "lazy_initialize" in Object.getPrototypeOf(base)) base = Object.getPrototypeOf(base);
  const plot = Bokeh.Models.get("Plot").prototype.default_view.prototype;
  const parts = [[ownerOf(base, "lazy_initialize"), "lazy_initialize"], [ownerOf(view, "build"), "build"],
    [ownerOf(view, "after_resize"), "after_resize"], [ownerOf(plot, "paint"), "paint"],
    [ownerOf(view, "invalidate_layout"), "invalidate_layout"], [ownerOf(view, "render_to"), "render_to"]];
  if (parts.some(([proto, name]) => !proto || typeof proto[name] !== "function")) throw new Error("another BokehJS");
  return parts.map(([proto]) => proto);
}

class SlicedRender {
  constructor() {
    this.undo = [];
    this.layouts = []; // each root's layout, a task after its DOM
    this.unpainted = new Set(); // plots whose first paint waits for its own task
    this.resized = new Set(); // views whose resize observer fired before the layouts were done
    this.toLayOut = new Set(); // layout roots whose styles are set and whose layout waits a task
    this.paint = null; // PlotView's own paint, for the plots' first (null: not sliced)
    this.making = null; // {root, views}: the root whose DOM is being made
    this.since = performance.now(); // the current slice's start, whatever its phase
    page.kv.renderSlices = []; // the render's phase at each time it gave the page back (tests/test_preview_browser.py)
  }

  patch(proto, name, make) {
    const original = proto[name];
    proto[name] = make(original);
    this.undo.push(() => { proto[name] = original; });
    return original;
  }

  restore() {
    while (this.undo.length) this.undo.pop()();
  }

  async gaveBack(phase) {
    page.kv.renderSlices.push(phase);
    await yieldToPage();
  }

  async next(phase) {
    await this.gaveBack(phase);
    this.since = performance.now();
  }

  due(phase) {
    return performance.now() - this.since > RENDER_SLICE_MS ? this.next(phase) : null;
  }

  start(docs_json) {
    const [lazy, dom, ui, plots, layout, placed] = bokehParts(docs_json);
    this.since = performance.now();
    const render = this;
    this.patch(lazy, "lazy_initialize", (original) => async function () {
      await render.due("views");
      return original.call(this);
    });
    // a child (or a grandchild) of the root whose DOM is being made: in its place now, filled in its turn
    this.patch(placed, "render_to", (original) => function (target) {
      const parent = this.parent;
      const making = render.making;
      if (!making || !parent || (parent !== making.root && parent.parent !== making.root)) return original.call(this, target);
      target.appendChild(this.el);
      making.views.push(this);
    });
    this.patch(dom, "build", (original) => function (target) {
      if (!this.is_root) return original.call(this, target);
      render.layouts.push(render.buildRoot(this, target, dom));
    });
    this.patch(layout, "invalidate_layout", () => function () {
      if (layout.isPrototypeOf(this.parent)) return this.parent.invalidate_layout();
      this.update_layout();
      render.toLayOut.add(this);
    });
    this.patch(ui, "after_resize", () => function () { render.resized.add(this); });
    this.paint = this.patch(plots, "paint", () => function () { render.unpainted.add(this); });
  }

  // A root's DOM: the root, its children and theirs (each made in one piece), a slice at a time, in the
  // page's order; each element is in its place before it is filled. Then its styles, then its layout,
  // each in a task of its own.
  async buildRoot(root, target, dom) {
    const views = [root];
    target.appendChild(root.el);
    for (let i = 0; i < views.length; i++) {
      await this.due("dom");
      this.making = { root, views };
      views[i].render();
      this.making = null;
    }
    await this.afterRender(root, 0, dom);
    await this.layOut();
    root.notify_finished();
  }

  // DOMView.r_after_render in its order, the root's children and theirs a slice at a time; the root's
  // own after_render, in a task of its own, sets the styles of the whole tree (invalidate_layout).
  async afterRender(view, depth, dom) {
    if (depth === 2) {
      await this.due("after_render");
      return void view.r_after_render();
    }
    for (const child of view.children()) if (dom.isPrototypeOf(child)) await this.afterRender(child, depth + 1, dom);
    await (depth === 0 ? this.next("after_render") : this.due("after_render"));
    view.after_render();
    view._was_built = true;
  }

  // LayoutDOMView.compute_layout of each layout root: the plots' measures, then the boxes (the browser's
  // style and layout of the page, done in the frame between), then the layout.
  async layOut() {
    for (const view of this.toLayOut) {
      await this.next("after_render");
      view.measure_layout();
      await this.next("layout");
      view.update_bbox();
      view._compute_layout();
      view.after_layout();
      view._layout_computed = true;
    }
    this.toLayOut.clear();
  }

  // Once embed_items is done: the layouts, then each plot's first paint in a task of its own, then the
  // resize observers that fired meanwhile.
  async done() {
    if (!this.paint) return;
    await Promise.all(this.layouts);
    while (this.unpainted.size) {
      const [plot] = this.unpainted;
      this.unpainted.delete(plot);
      await this.gaveBack("paint");
      this.paint.call(plot);
    }
    this.restore();
    for (const view of this.resized) view.after_resize();
  }
}

// Slices for the render of docs_json: {done(), restore()}; done() after embed_items, restore() always.
export function sliceRender(docs_json) {
  const render = new SlicedRender();
  try {
    render.start(docs_json);
  } catch (e) {
    render.restore(); // another BokehJS: built in one task, as it was
    render.paint = null;
  }
  return { restore: () => render.restore(), done: () => render.done() };
}
