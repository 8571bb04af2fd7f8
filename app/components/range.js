// Scripts of app/components/widgets.py RangeInput: a native <input type="range"> (keyboard, screen readers and
// touch as the browser provides them), named by aria-label; the value goes to Python when committed.
// @script render
input.min = data.start;
input.max = data.end;
input.step = data.step;
input.value = data.value;
input.setAttribute('aria-label', data.label);
label.textContent = data.label;
out.textContent = Number(data.value).toFixed(data.digits);
// @script value
input.value = data.value;
out.textContent = Number(data.value).toFixed(data.digits);
// @script label
input.setAttribute('aria-label', data.label);
label.textContent = data.label;
// @script show
out.textContent = Number(input.value).toFixed(data.digits);
// @script commit
data.value = Number(input.value);
