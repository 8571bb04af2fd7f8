// Scripts of app/components/widgets.py RangeInput: a native <input type="range"> (keyboard, screen readers and
// touch as the browser provides them), named by aria-label; the value goes to Python when committed. The
// value beside the label is written as the page's language writes a decimal (app/i18n number_style).
// @script render
input.min = data.start;
input.max = data.end;
input.step = data.step;
input.value = data.value;
input.setAttribute('aria-label', data.label);
label.textContent = data.label;
self.show();
// @script value
input.value = data.value;
self.show();
// @script label
input.setAttribute('aria-label', data.label);
label.textContent = data.label;
// @script point
self.show();
// @script trim
self.show();
// @script show
let shown = Number(input.value).toFixed(data.digits);
if (data.trim) shown = String(Number(shown));
out.textContent = shown.replace('.', data.point);
// @script commit
data.value = Number(input.value);
