// The text's token boxes (however deep in shadow roots): how many, and which break across lines
// (more than one box on the screen) or end beyond their text's right edge.
() => {
  const out = {count: 0, split: [], beyond: []};
  const walk = (root) => {
    for (const text of root.querySelectorAll(".text")) {
      const edge = text.getBoundingClientRect().right;
      for (const tok of text.querySelectorAll(".tok")) {
        out.count += 1;
        if (tok.getClientRects().length !== 1) out.split.push(tok.textContent);
        if (tok.getBoundingClientRect().right > edge + 1) out.beyond.push(tok.textContent);
      }
    }
    for (const el of root.querySelectorAll("*")) if (el.shadowRoot) walk(el.shadowRoot);
  };
  walk(document);
  return out;
}
