"""BLAS threads for a query: the one policy, applied at the edges where queries run concurrently.

A single query is a matrix-vector product too short to share: split over BLAS threads it waits for the
slowest of them, and concurrent callers (the service's request threads) queue on OpenBLAS's lock, so a
query that takes 1.8 ms on one thread took 7.6 ms with two on a busy machine. A batch is a matrix
product long enough to share. So: one BLAS thread while any small query runs, the library's own count
while a batch runs (a batch wins when both are in flight), and the caller's setting otherwise.

The count is process-wide (BLAS has no per-call setting), so entries and exits are counted under a
lock and the setting changes only when the wanted count does. threadpoolctl finds the BLAS libraries
once, on the first query; without threadpoolctl, or without a BLAS it knows, this does nothing.

threadpoolctl 3.8 lets only one thread (the first to set an OpenBLAS count, while it lives) change an
OpenBLAS pool; others' settings are silently dropped. The service's requests run on many worker threads,
so each change here takes that control under the lock and gives it back at once (:func:`_set`).

Because the count is process-wide, the library's queries never change it themselves (a Python caller's
BLAS setting stays theirs): the front ends apply the policy around the queries they run, the HTTP
service per request (``service/respond.answer``) and the command line per command. A Python program that
answers queries from many threads does the same with ``with likewise.query_threads(n): ...``.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["BATCH_MIN_QUERIES", "blas_threads_for", "query_threads"]

#: From this many queries in one call, a product gets every BLAS thread.
BATCH_MIN_QUERIES = 16

_lock = threading.Lock()
# libs: threadpoolctl's BLAS controllers (found once); clears: their classes' clear_controlling_thread
# (threadpoolctl >= 3.8, see _set); base: their counts when the first query of a busy spell came in
# (restored when the last one leaves); single / batch: queries of each kind in flight.
_state: dict[str, Any] = {"libs": None, "clears": [], "base": [], "single": 0, "batch": 0, "current": None}


def blas_threads_for(n_queries: int, base: int) -> int:
    """BLAS threads for a call with ``n_queries`` queries when the library's own count is ``base``.

    Parameters
    ----------
    n_queries : int
        Query vectors answered by one matrix product.
    base : int
        The BLAS thread count outside queries.

    Returns
    -------
    int
        1 below :data:`BATCH_MIN_QUERIES` queries, ``base`` from there on.
    """
    return 1 if n_queries < BATCH_MIN_QUERIES else max(1, int(base))


def _libs() -> list[Any]:
    """The BLAS libraries loaded now (under ``_lock``, between busy spells).

    Looking them up costs a millisecond, so the list is kept; a BLAS library comes with an extension
    module (numpy's, scipy's ...), so the list is made again when modules were imported since.
    """
    if _state["libs"] is None or _state.get("modules") != len(sys.modules):
        try:
            from threadpoolctl import ThreadpoolController
        except ImportError:  # a core dependency, but queries stay right without it (only slower under load)
            _state["libs"] = []
        else:
            _state["libs"] = ThreadpoolController().select(user_api="blas").lib_controllers
        classes = {type(lib) for lib in _state["libs"]}
        _state["clears"] = [
            c.clear_controlling_thread for c in classes if hasattr(c, "clear_controlling_thread")
        ]
        _state["modules"] = len(sys.modules)  # threadpoolctl's own imports count as seen
    return _state["libs"]


def _set(counts: list[int]) -> None:
    """Set each BLAS library's count, from whichever thread holds the lock (see the module's note)."""
    # threadpoolctl >= 3.8: only the controlling thread's setting takes effect; take control for this
    # change (other threads' changes wait on _lock) and give it back, so the caller's own
    # threadpool_limits keep working
    for clear in _state["clears"]:
        clear(force=True)
    for lib, n in zip(_state["libs"], counts, strict=True):
        lib.set_num_threads(n)
    for clear in _state["clears"]:
        clear()


def _enter(kind: str) -> None:
    libs = _state["libs"]
    if _state["single"] + _state["batch"] == 0:  # a busy spell starts: remember the caller's setting
        _state["base"] = [lib.num_threads for lib in libs]
        _state["current"] = None
    _state[kind] += 1
    _apply()


def _exit(kind: str) -> None:
    _state[kind] -= 1
    if _state["single"] + _state["batch"] == 0:
        _set(_state["base"])
        _state["current"] = None
    else:
        _apply()


def _apply() -> None:
    """Give the queries in flight the count they want: one thread unless a batch is among them."""
    want = "base" if _state["batch"] else "one"
    if want != _state["current"]:
        _set(_state["base"] if want == "base" else [1] * len(_state["base"]))
        _state["current"] = want


@contextmanager
def query_threads(n_queries: int) -> Iterator[int]:
    """Run the body with the BLAS threads a product of ``n_queries`` queries should get.

    Parameters
    ----------
    n_queries : int
        Queries the body answers with one product.

    Yields
    ------
    int
        The BLAS thread count in force for the body (:func:`blas_threads_for`); 0 when no BLAS library
        was found (nothing is changed then).
    """
    kind = "single" if n_queries < BATCH_MIN_QUERIES else "batch"
    with _lock:
        libs = _libs() if _state["single"] + _state["batch"] == 0 else _state["libs"]
        if libs:
            _enter(kind)
            base = max(_state["base"], default=1)
    if not libs:
        yield 0
        return
    try:
        yield blas_threads_for(n_queries, base)
    finally:
        with _lock:
            _exit(kind)
