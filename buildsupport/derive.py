"""Derived files, cached by the hashes of their inputs: the slimmed and compiled wheels, the
slimmed standard library (each with its *-lazy.zip) and the app archive (app/ + model/ + the
checkpoint, with bytecode beside the sources)."""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from .common import PYTHON_IN_PYODIDE, RECIPE, ROOT, dir_digest, hashed_name, log, sha256_bytes, sha256_file, short_key
from .packages import Package, Runtime
from .pyodide_node import compile_trees, trace_imports
from .wheels import OPTIMIZE, compile_list, lazy_path, pack_wheel, split_lazy, unpack_slim
from .zips import write_zip

APP_PACKAGES = ("app", "model")
APP_SUFFIXES = (".py", ".js", ".css", ".html", ".po")  # app/'s browser code, markup, styles and texts travel with it
APP_DIR_IN_BROWSER = "/home/pyodide/kv/"  # static/worker.js unpacks the app archive there


@dataclass
class Derived:
    """The cache paths of what the site ships; None where --cdn leaves a file to Pyodide's CDN."""

    wheels: list[tuple[Package, Path | None]]
    stdlib: Path | None
    app: Path


@dataclass
class Job:
    """A tree to slim and compile in one Pyodide run, and the archive it becomes."""

    source: Path
    rule: str
    out: Path
    prefix: str
    sourceless: bool = True


def app_tree(dest: Path) -> Path:
    """app/ and model/ sources and the lesson's checkpoint, as create_app imports them, and the
    manifest of the other checkpoints (app/state/checkpoints.py fetches them when a reader picks one)."""
    for pkg in APP_PACKAGES:
        for p in sorted((ROOT / pkg).rglob("*")):
            rel = p.relative_to(ROOT)
            if p.is_file() and "__pycache__" not in rel.parts and (p.suffix in APP_SUFFIXES or "weights" in rel.parts):
                (dest / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(p, dest / rel)
    manifest = {
        name: {f: {"url": url, "sha256": sha256_bytes(data)} for f, (url, data) in files.items()}
        for name, files in checkpoint_assets().items()
    }
    (dest / "app" / "checkpoints.json").write_text(json.dumps(manifest, indent=1, sort_keys=True), encoding="utf-8")
    return dest


def checkpoint_assets() -> dict[str, dict[str, tuple[str, bytes]]]:
    """name -> file -> (its name in assets/, bytes) for every checkpoint in model/checkpoints/: each
    ships as its own file, next to the worker that fetches it (the URL is relative to it)."""
    out: dict[str, dict[str, tuple[str, bytes]]] = {}
    for folder in sorted(p for p in (ROOT / "model" / "checkpoints").iterdir() if p.is_dir()):
        for f in sorted(folder.glob("*")):
            if f.suffix in (".npz", ".json"):
                data = f.read_bytes()
                out.setdefault(folder.name, {})[f.name] = (hashed_name(f"ckpt-{folder.name}-{f.name}", data), data)
    return out


def derived_path(inputs, package: Package, mods_key: str) -> Path:
    key = short_key(sha256_file(package.wheel), RECIPE, inputs.version, "True", mods_key)
    return inputs.derived / "wheels" / key / package.wheel.name


def plan(inputs, runtime: Runtime, packages: list[Package], app_src: Path, mods_key: str, cdn: bool):
    """The Derived paths, and the Jobs for those not in the cache yet."""
    site_packages = f"/lib/{PYTHON_IN_PYODIDE}/site-packages/"
    wheels = [(p, derived_path(inputs, p, mods_key) if p.wheel else None) for p in packages]
    jobs = [Job(p.wheel, p.rule, out, site_packages) for p, out in wheels if out and not out.is_file()]
    stdlib_src = runtime.dir / "python_stdlib.zip"
    stdlib = (
        None
        if cdn
        else (inputs.derived / "stdlib" / f"{sha256_file(stdlib_src)[:16]}-{RECIPE}-{mods_key}" / "python_stdlib.zip")
    )
    if stdlib and not stdlib.is_file():
        jobs.append(Job(stdlib_src, "stdlib", stdlib, f"/lib/{PYTHON_IN_PYODIDE}/"))
    app = inputs.derived / "app" / f"{dir_digest(app_src)[:16]}-{RECIPE}" / "app.zip"
    if not app.is_file():
        jobs.append(Job(app_src, "app", app, APP_DIR_IN_BROWSER, sourceless=False))
    return Derived(wheels, stdlib, app), jobs


# The model's command-line tools, which the page never imports: they ship as source only (the
# sandbox's `import model` sees them, app/sandbox model_files), without bytecode.
APP_SOURCE_ONLY = frozenset(f"model/{m}.py" for m in ("train", "bench", "bench_extras", "seeds", "drift"))


def unpack_job(job: Job, tree: Path, modules: frozenset) -> dict:
    """Unpack a job's source into tree; its compile_pyc job (the app keeps its sources: tracebacks)."""
    if job.rule == "app":
        shutil.copytree(job.source, tree)
        only = sorted(rel for p in tree.rglob("*.py") if (rel := p.relative_to(tree).as_posix()) not in APP_SOURCE_ONLY)
        return {"dir": tree.name, "sourceless": False, "prefix": job.prefix, "only": only, "optimize": OPTIMIZE["app"]}
    unpack_slim(job.source, tree, job.rule)
    return {
        "dir": tree.name,
        "sourceless": True,
        "prefix": job.prefix,
        "only": compile_list(tree, modules),
        "optimize": OPTIMIZE.get(job.rule, 0),
    }


def pack_job(job: Job, tree: Path) -> None:
    """The compiled tree as its archive; what start-up does not import goes to the lazy archive."""
    if job.rule != "app":
        split_lazy(tree, lazy_path(job.out))
    if job.out.suffix == ".whl":
        pack_wheel(tree, job.out)
    else:
        write_zip(tree, job.out)


def run_jobs(inputs, runtime: Runtime, jobs: list[Job], modules: frozenset) -> None:
    """Slim, compile (one Pyodide run for all trees) and pack the jobs."""
    if not jobs:
        return
    inputs.derived.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=inputs.derived) as tmp:
        trees = [Path(tmp) / f"t{i}" for i in range(len(jobs))]
        specs = [unpack_job(job, tree, modules) for job, tree in zip(jobs, trees, strict=True)]
        started = time.time()
        log(f"compiling {len(jobs)} trees to Python 3.13 bytecode with Pyodide under Node.js")
        report = compile_trees(runtime, Path(tmp), specs)
        log(f"  compiled in {time.time() - started:.1f}s: {report}")
        for job, tree in zip(jobs, trees, strict=True):
            job.out.parent.mkdir(parents=True, exist_ok=True)
            pack_job(job, tree)


def derive(
    inputs, runtime: Runtime, packages: list[Package], cpython_modules: list[str], queries: list[str], cdn: bool
) -> Derived:
    """Everything the site ships from Python sources: traced, slimmed, compiled, packed, cached."""
    with tempfile.TemporaryDirectory(dir=inputs.cache) as tmp:
        app_src = app_tree(Path(tmp))
        traced = None if cdn else trace_imports(inputs, runtime, packages, app_src, queries)
        modules = frozenset(traced if traced is not None else cpython_modules)
        mods_key = short_key("\n".join(sorted(modules)), n=12)
        derived, jobs = plan(inputs, runtime, packages, app_src, mods_key, cdn)
        run_jobs(inputs, runtime, jobs, modules)
    return derived
