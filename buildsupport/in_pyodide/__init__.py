"""Python the build runs inside Pyodide under Node.js (run.js loads the runtime and calls one
function of these modules): compile_pyc compiles the page's modules to the browser's bytecode,
trace_imports runs the page's start-up and lists what it imports. Plain Python, so CPython's
tests run them too."""
