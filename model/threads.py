"""One BLAS thread for the mini-GPT.

Its matrices are 64 x 256 at most: a second BLAS thread only adds hand-offs,
and when the other core is busy it turns a 0.7 ms forward pass into 70 ms
(measured here with `python -m model.bench`). One thread is also what makes
training give the same bits on any machine with the same NumPy. Under
Pyodide there are no threads and nothing to do.
"""
from __future__ import annotations

_limiter = None


def one_blas_thread() -> bool:
    """Limit BLAS to one thread for the rest of the process. True if a limit was set."""
    global _limiter
    if _limiter is not None:
        return True
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:                     # Pyodide, or a minimal install: nothing to limit
        return False
    _limiter = threadpool_limits(limits=1, user_api="blas")
    return True
