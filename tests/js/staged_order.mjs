// Staged BokehJS bundles (buildsupport/bokehjs.py) run by the loader's own staging module
// (static/loader/staging.js runStaged), without a browser: each bundle's script hands its modules over;
// every module is replaced by a stand-in that asks for what the real one asks for (staging.js askedFor),
// in the same order, and records which modules it finds half run (a cycle). The modules run twice: as
// the bundle would (its require of the entry) and as the loader does (runStaged, then the entry); the
// two runs must agree, and each of runStaged's requires must run its module alone, or its cycle
// (tests/test_bokehjs.py). Input (stdin): {"bundles": [paths]}, in the page's order.
import fs from "node:fs";
import vm from "node:vm";
import { askedFor, moduleKey, runOrder, runStaged } from "../../static/loader/staging.js";

const input = JSON.parse(fs.readFileSync(0, "utf8"));

const ctx = {};
ctx.globalThis = ctx;
ctx.__kvStage = (bundle) => { ctx.handed = bundle; };
vm.createContext(ctx);
globalThis.Bokeh = { register_plugin() {} }; // a plugin registers once its modules ran

// A run of stand-ins over `asked` (module -> the modules it asks for): a module records what it finds
// half run, then asks on. halfRun: module -> the modules it found running.
class Run {
  constructor(asked) {
    this.asked = asked;
    this.state = new Map(); // id -> "running" | "done"
    this.halfRun = new Map();
    this.current = [];
    this.runs = []; // the modules each require from outside a module ran (runStaged's: one, or a cycle's)
  }
  require(id) {
    if (!this.current.length) this.runs.push([]);
    if (this.state.has(id)) {
      if (this.state.get(id) === "running") this.halfRun.get(this.current[this.current.length - 1]).push(id);
      return;
    }
    this.state.set(id, "running");
    this.runs[this.runs.length - 1].push(id);
    this.halfRun.set(id, []);
    this.current.push(id);
    for (const dep of this.asked.get(id) || []) this.require(dep);
    this.current.pop();
    this.state.set(id, "done");
  }
}

let core = null; // bokeh.min.js's, as handed to runStaged: its require is the current run's
let run = null;
const report = [];
for (const path of input.bundles) {
  ctx.handed = null;
  vm.runInContext(fs.readFileSync(path, "utf8"), ctx, { filename: path });
  const bundle = ctx.handed;
  if (!bundle) {
    report.push({ path, handed: false });
    continue;
  }
  if (!bundle.plugin) {
    core = { ...bundle, require: (id) => run.require(id), main: () => run.require(entryOf(bundle)), done() {} };
  } else {
    Object.assign(core.modules, bundle.modules);
    Object.assign(core.aliases, bundle.aliases);
  }
  const ids = Object.keys(bundle.modules).map(moduleKey);
  const asked = new Map(ids.map((id) => [id, askedFor(core.modules, id, core.normalize)]));
  const entry = entryOf(bundle);
  run = new Run(asked);
  await runStaged(bundle.plugin ? bundle : core, async () => {});
  const runs = run.runs.filter((ran) => ran.length);
  // a require of runStaged's that ran more than its module ran a cycle: each of them asks back for the first
  const notCycles = runs.filter((ran) => ran.length > 1 && !ran.every((id) => reaches(asked, id, ran[0])));
  run.require(entry); // a plugin's entry, as BokehJS runs it once registered (the core's ran in main())
  const staged = run.halfRun;
  const natural = new Run(asked);
  natural.require(entry);
  const differ = [...natural.halfRun.keys()].filter(
    (id) => JSON.stringify(natural.halfRun.get(id)) !== JSON.stringify(staged.get(id) || null));
  report.push({
    path, handed: true, plugin: !!bundle.plugin, modules: ids.length, ordered: runOrder(entry, asked).length,
    natural: natural.halfRun.size, staged: staged.size,
    cycles: [...natural.halfRun.values()].filter((v) => v.length).length, differ, runs: runs.map((ran) => ran.length), notCycles, reached: [...natural.halfRun.keys()], ids,
  });
}
process.stdout.write(JSON.stringify(report));

function reaches(asked, from, to) {
  const seen = new Set();
  const todo = [...(asked.get(from) || [])];
  while (todo.length) {
    const id = todo.pop();
    if (id === to) return true;
    if (!seen.has(id)) {
      seen.add(id);
      todo.push(...(asked.get(id) || []));
    }
  }
  return false;
}

function entryOf(bundle) {
  return moduleKey(core.normalize(bundle.entry));
}
