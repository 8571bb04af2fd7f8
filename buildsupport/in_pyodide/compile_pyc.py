"""Compile .py files to bytecode with the interpreter this runs in: inside Pyodide, the browser's
own CPython, so the magic number and the bytecode are the page's.

A job: {"root": folder, "prefix": the folder's path in the browser (shown in tracebacks),
"sourceless": ship name.pyc instead of name.py (else __pycache__/ beside the source),
"only": relative paths to compile (default: all), "optimize": 0 or 2 (like python -OO)}.
Hash-based pycs (unchecked): they never depend on a timestamp, so the output is reproducible.
"""

from __future__ import annotations

import importlib.util
import json
import os
import py_compile


def python_files(root: str, only: list[str] | None) -> list[str]:
    """Relative paths of the .py files to compile under root (no __pycache__)."""
    found = []
    for dirpath, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for f in sorted(files):
            rel = os.path.relpath(os.path.join(dirpath, f), root)
            if f.endswith(".py") and (only is None or rel in only):
                found.append(rel)
    return found


def compile_job(job: dict) -> list[int]:
    """[compiled, failed] for one job; a file that fails stays as source (it fails again on import)."""
    ok = failed = 0
    for rel in python_files(job["root"], job.get("only")):
        path = os.path.join(job["root"], rel)
        cfile = path + "c" if job["sourceless"] else importlib.util.cache_from_source(path)
        try:
            py_compile.compile(
                path,
                cfile=cfile,
                dfile=job["prefix"] + rel,
                doraise=True,
                invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH,
                optimize=job.get("optimize", 0),
            )
        except py_compile.PyCompileError:
            failed += 1
            continue
        ok += 1
        if job["sourceless"]:
            os.remove(path)
    return [ok, failed]


def compile_jobs(jobs_json: str) -> str:
    """JSON {root: [compiled, failed]} for a JSON list of jobs."""
    return json.dumps({job["root"]: compile_job(job) for job in json.loads(jobs_json)})
