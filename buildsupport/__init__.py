"""The static site builder behind build.py, one module per kind of work:

common        paths, pins, BuildError, hashes, the recommended CSP
inputs        the npm tarball, the pure wheels (PyPI) and the compiled Pyodide wheels, checked
lockfile      build.lock.json: load it, check the installed Panel against it, or record new hashes
              (--update-lock)
packages      the unpacked Pyodide runtime and the packages the page installs
prerender     the app built in CPython (its own process): snapshots, page scripts, versions
pyodide_node  Pyodide under Node.js: compile to the browser's bytecode, trace start-up imports
in_pyodide/   the JavaScript and Python that run there (run.js, compile_pyc.py, trace_imports.py)
wheels        slimming rules, the lazy split, wheel repacking
zips          the one deterministic zip writer
derive        the cached derived files: slimmed+compiled wheels, stdlib, app archive
site          the assembly of dist/, one step per part of the page
output        writing dist/ atomically, precompressed copies, build-info.json
serve         the development server (build.py serve, tests, benchmarks)
paneldev      build.py dev: the app under Panel's own server, the sandbox's runtime from the cache

and one for the repository, not the site: pins, the environment's pins in pyproject.toml ([tool.uv]),
rewritten by `python -m buildsupport.pins`.
"""
