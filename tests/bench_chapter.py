"""Benchmark: the functions of the chapter's three sections (model/scheduler.py, paged.py,
wquant.py), timed where they run: CPython, or Pyodide (where the page runs them: NumPy without
BLAS, one thread) under Node.js.

    python -m tests.bench_chapter                 # CPython
    python -m tests.bench_chapter --pyodide       # Pyodide 0.29.3 under Node.js: needs the runtime a
                                                  # build left in the cache (python build.py) and
                                                  # NumPy's Pyodide wheel (KV_EXPLORABLE_PYODIDE_WHEELS)
    python -m tests.bench_chapter --serving [--pyodide]   # only the two policies served, as the page does

Each time is the best of a few calls (time.perf_counter). The corpus (MARIANELA) gives the
held-out text; without it the held-out measurements are left out. `--serving` instead serves the
16 window requests both ways in interleaved rounds (model.scheduler.serve_round, as the page's
continuous batching section does) and prints the medians, the measured ratios with their spread
(lowest and highest round), and beside them the model of cost (each step charged the best-of
step_batch of its occupied slots).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def best(fn, n: int = 3):
    """(result, best seconds of n calls)."""
    out, t = None, float("inf")
    for _ in range(n):
        t0 = time.perf_counter()
        out = fn()
        t = min(t, time.perf_counter() - t0)
    return out, t


def run(corpus: str | None) -> None:
    import platform

    import numpy as np

    from model import KVCache, MiniGPT, generate, paged, scheduler, wquant

    print(f"Python {platform.python_version()} ({sys.platform}), NumPy {np.__version__}")
    gpt = MiniGPT.load()
    line = lambda what, s: print(f"  {what:<58} {s * 1e3:>9.1f} ms")
    lengths, arrivals = scheduler.chapter_workload()
    line(
        "scheduler.compare: the chapter's 64 requests, both policies",
        best(lambda: scheduler.compare(lengths, 8, arrivals))[1],
    )
    reqs = scheduler.window_requests(gpt.tokenizer)
    for p in scheduler.POLICIES:
        line(
            f"scheduler.serve: 16 window requests, 4 slots, {p}",
            best(lambda p=p: scheduler.serve(gpt, reqs, 4, p), 2)[1],
        )
    ids = generate(gpt, "La Nela", 62, seed=0)

    def window(cache):
        gpt.prefill(ids[:2], cache)
        for tok in ids[2:]:
            gpt.step(tok, cache)

    line("62 steps on a KVCache", best(lambda: window(KVCache.empty(gpt.config)))[1])
    line(
        "62 steps on a PagedKVCache (blocks of 8)",
        best(lambda: window(paged.PagedKVCache(paged.BlockPool(gpt.config, 64, 8))))[1],
    )
    line("paged.run_scenario (blocks of 4, 18 steps)", best(lambda: paged.run_scenario(gpt, 4), 2)[1])
    for s in ("int8-row", "nf4"):
        line(f"wquant.quantized_model(gpt, {s!r})", best(lambda s=s: wquant.quantized_model(gpt, s))[1])
    prompts = [gpt.tokenizer.encode(p) for p in scheduler.PROMPTS[:4]]
    texts, t = best(lambda: wquant.greedy_texts(gpt, prompts, 40), 2)
    line("wquant.greedy_texts: 4 prompts x 40 tokens", t)
    q = wquant.quantized_model(gpt, "int4-group32")
    line(
        "wquant.agreement: those 160 positions", best(lambda: wquant.agreement(q, texts, [len(p) for p in prompts]))[1]
    )
    line("wquant.acceptance: the same, k = 4", best(lambda: wquant.acceptance(gpt, q, prompts, 40, 4), 2)[1])
    if corpus and Path(corpus).is_file():
        held = wquant.held_out_ids(gpt.tokenizer, Path(corpus).read_text(encoding="utf-8"))
        line("wquant.held_out_loss: 8 windows of 65 tokens", best(lambda: wquant.held_out_loss(q, held, 8))[1])
        line("wquant.held_out_loss: all 98 windows", best(lambda: wquant.held_out_loss(q, held), 1)[1])
        line(
            "wquant.report: 8 rows, 8 prompts x 56, 8 windows",
            best(lambda: wquant.report(gpt, held, n_windows=8), 1)[1],
        )


def serving(rounds: int = 9) -> None:
    """Both policies served on the clock in interleaved rounds, and the model of cost beside them."""
    import platform

    import numpy as np

    from model import MiniGPT, scheduler

    print(f"Python {platform.python_version()} ({sys.platform}), NumPy {np.__version__}")
    gpt = MiniGPT.load()
    reqs = scheduler.window_requests(gpt.tokenizer)
    tokens = sum(r.n_new for r in reqs)
    costs = scheduler.measure_step_seconds(gpt, range(1, 5))
    s, c = (scheduler.serve(gpt, reqs, 4, p).schedule.summary(costs) for p in scheduler.POLICIES)
    m = scheduler.served_clock([scheduler.serve_round(gpt, reqs, 4) for _ in range(rounds)], tokens)
    print(f"  serve: 16 window requests, 4 slots, {rounds} interleaved rounds (static, then continuous), medians")
    for p in scheduler.POLICIES:
        r = m[p]
        print(
            f"  {p:>10}: {r['seconds'] * 1e3:7.1f} ms, {r['per_second']:6,.0f} tokens/s, latency mean "
            f"{r['mean_s'] * 1e3:6.1f} ms, median {r['median_s'] * 1e3:6.1f}, p90 {r['p90_s'] * 1e3:6.1f}"
        )
    t, lat = m["throughput"], m["latency"]
    print(
        f"  measured, continuous / static: tokens/s {t.ratio:.2f}x (rounds {t.ratio_low:.2f}-{t.ratio_high:.2f}), "
        f"mean latency {lat.ratio:.2f}x lower (rounds {lat.ratio_low:.2f}-{lat.ratio_high:.2f})"
    )
    print(
        f"  modelled (step_batch of 1-4: {', '.join(f'{costs[b] * 1e3:.2f}' for b in range(1, 5))} ms): "
        f"tokens/s {c.tokens_per_second / s.tokens_per_second:.2f}x, "
        f"mean latency {s.latency_mean_seconds / c.latency_mean_seconds:.2f}x lower"
    )


RUNNER = r"""
const { loadPyodide } = require(process.argv[2]);
(async () => {
  const py = await loadPyodide({ indexURL: process.argv[3] });
  await py.loadPackage(process.argv[4]);
  py.FS.mkdir("/repo");
  py.FS.mount(py.FS.filesystems.NODEFS, { root: process.argv[5] }, "/repo");
  py.FS.mkdir("/corpus");
  py.FS.mount(py.FS.filesystems.NODEFS, { root: process.argv[6] }, "/corpus");
  py.pyimport("sys").path.insert(0, "/repo");
  py.pyimport("sys").dont_write_bytecode = true;
  const call = process.argv[8] === "serving" ? "b.serving()" : `b.run(${JSON.stringify(process.argv[7])})`;
  py.runPython(`import tests.bench_chapter as b; ${call}`);
})().catch((e) => { console.error(String(e)); process.exit(1); });
"""


def in_pyodide(corpus: Path, what: str = "run") -> int:
    cache = Path(os.environ.get("KV_EXPLORABLE_CACHE", Path.home() / ".cache" / "kv-explorable"))
    runtimes = sorted((cache / "derived").glob("pyodide-0.29.3-*/pyodide.js"))
    wheels_dir = Path(os.environ.get("KV_EXPLORABLE_PYODIDE_WHEELS", cache / "pyodide-0.29.3"))
    wheels = sorted(wheels_dir.glob("numpy-*-pyodide_*.whl"))
    if not runtimes or not wheels:
        print(
            f"no Pyodide runtime under {cache / 'derived'} or no NumPy wheel in {wheels_dir}: "
            f"run `python build.py` first",
            file=sys.stderr,
        )
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        js = Path(tmp) / "run.js"
        js.write_text(RUNNER, encoding="utf-8")
        return subprocess.run(
            [
                "node",
                str(js),
                str(runtimes[-1]),
                f"{runtimes[-1].parent}/",
                str(wheels[-1]),
                str(ROOT),
                str(corpus.parent),
                f"/corpus/{corpus.name}",
                what,
            ]
        ).returncode


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pyodide", action="store_true", help="in Pyodide under Node.js")
    ap.add_argument("--serving", action="store_true", help="only the two policies served, in interleaved rounds")
    args = ap.parse_args(argv)
    corpus = Path(os.environ.get("MARIANELA", ROOT.parent / "shared" / "corpus" / "marianela.txt"))
    if args.pyodide:
        return in_pyodide(corpus, "serving" if args.serving else "run")
    from model.threads import one_blas_thread

    one_blas_thread()
    if args.serving:
        serving()
    else:
        run(str(corpus))
    return 0


if __name__ == "__main__":
    sys.exit(main())
