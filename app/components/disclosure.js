// Scripts of app/components/widgets.py Disclosure: a heading whose button opens and closes its section
// (the WAI-ARIA disclosure pattern: a real <button> with aria-expanded). A press goes to Python, which
// opens (and on the first time builds) the section and answers with `expanded`.
// @script render
button.setAttribute('aria-expanded', String(data.expanded));
label.textContent = data.label;
// @script expanded
button.setAttribute('aria-expanded', String(data.expanded));
// @script label
label.textContent = data.label;
// @script toggle
data.presses += 1;
