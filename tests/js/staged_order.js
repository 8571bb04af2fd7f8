// Reads staged BokehJS bundles (buildsupport/bokehjs.py) as static/loader.js does, without a browser:
// each bundle's script hands its modules over; the loader's own askedFor and runOrder order them.
// Then, with every module replaced by a stand-in that asks for what the real one asks for, in the
// same order, it runs them twice: as the bundle would (require of the entry) and as the loader does
// (each module of the order, then the entry), and reports, per module, which modules it found half
// run (a cycle): the two runs must agree. Input (stdin): {"loader": path, "bundles": [paths]}.
const fs = require("fs");
const vm = require("vm");

const input = JSON.parse(fs.readFileSync(0, "utf8"));
const loader = fs.readFileSync(input.loader, "utf8");
function grab(name) {
  const start = loader.indexOf(`  function ${name}(`);
  const end = loader.indexOf("\n  }\n", start);
  if (start < 0 || end < 0) throw new Error(`static/loader.js has no function ${name}`);
  return loader.slice(start, end + 4);
}
const keyLine = loader.split("\n").find((l) => l.includes("const moduleKey ="));
if (!keyLine) throw new Error("static/loader.js has no moduleKey");
let core = null;
const moduleKey = eval(keyLine.replace(/^\s*const moduleKey =/, "(").replace(/;\s*(\/\/.*)?$/, ")"));
const askedFor = eval(`(${grab("askedFor").trim()})`);
const runOrder = eval(`(${grab("runOrder").trim()})`);

const ctx = {};
ctx.globalThis = ctx;
ctx.__kvStage = (bundle) => { ctx.handed = bundle; };
vm.createContext(ctx);

// the same module graph with stand-ins: a module records what it finds half run, then asks on
function simulate(entry, asked, order) {
  const state = new Map(); // id -> "running" | "done"
  const halfRun = new Map(); // id -> ids it found running
  const require = (id) => {
    if (state.has(id)) {
      if (state.get(id) === "running") halfRun.get(current[current.length - 1]).push(id);
      return;
    }
    state.set(id, "running");
    halfRun.set(id, []);
    current.push(id);
    for (const dep of asked.get(id) || []) require(dep);
    current.pop();
    state.set(id, "done");
  };
  const current = [];
  for (const id of order) require(id);
  require(entry);
  return halfRun;
}

const report = [];
for (const path of input.bundles) {
  ctx.handed = null;
  vm.runInContext(fs.readFileSync(path, "utf8"), ctx, { filename: path });
  const bundle = ctx.handed;
  if (!bundle) { report.push({ path, handed: false }); continue; }
  if (!bundle.plugin) core = bundle;
  else { Object.assign(core.modules, bundle.modules); Object.assign(core.aliases, bundle.aliases); }
  const ids = Object.keys(bundle.modules).map(moduleKey);
  const asked = new Map(ids.map((id) => [id, askedFor(core.modules, id)]));
  const entry = moduleKey(core.normalize(bundle.entry));
  const order = runOrder(entry, asked);
  const natural = simulate(entry, asked, []);
  const staged = simulate(entry, asked, order);
  const differ = [...natural.keys()].filter(
    (id) => JSON.stringify(natural.get(id)) !== JSON.stringify(staged.get(id) || null));
  report.push({
    path, handed: true, plugin: !!bundle.plugin, modules: ids.length, ordered: order.length,
    natural: natural.size, staged: staged.size,
    cycles: [...natural.values()].filter((v) => v.length).length, differ, reached: [...natural.keys()], ids,
  });
}
process.stdout.write(JSON.stringify(report));
