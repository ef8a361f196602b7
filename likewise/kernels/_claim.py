"""The kernels' threads: Python threads that claim a block's chunks one at a time.

The parallel and the serial kernels run one compiled driver (``driver(..., k0, k1)`` trains chunks
``k0 .. k1 - 1``); only how its calls are spread over threads differs, so one thread gives the serial
result bit for bit. Plain Python, no numba.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable

__all__ = ["claim_chunks"]


def claim_chunks(train: Callable[[int, int], object], n_chunks: int, threads: int) -> None:
    """Run ``train(k0, k1)`` (chunks ``k0 .. k1 - 1``) over chunks ``0 .. n_chunks - 1`` on ``threads``.

    The caller's thread is one of them; each thread claims the next chunk, one at a time, so on a busy
    machine a thread the OS leaves out holds back one chunk, not a fixed share (as numba's ``prange``
    would). One thread calls ``train(0, n_chunks)``: the chunks in order, the serial kernels' order. The
    serial and the parallel kernels thus run one compiled driver, so one thread gives the serial result
    bit for bit. ``train`` must release the GIL (a ``nogil`` compiled driver).

    Parameters
    ----------
    train : callable
        ``train(k0, k1)`` trains chunks ``k0 .. k1 - 1``.
    n_chunks : int
        Number of chunks.
    threads : int
        Threads to use (at most ``n_chunks`` run).

    Raises
    ------
    BaseException
        The first error a thread raised, after every thread has stopped.
    """
    threads = max(1, min(int(threads), n_chunks))
    if threads == 1:
        train(0, n_chunks)
        return
    claim = itertools.count()
    errors: list[BaseException] = []

    def work() -> None:
        try:
            while (k := next(claim)) < n_chunks:  # itertools.count is atomic under the GIL
                train(k, k + 1)
        except BaseException as e:  # re-raised in the caller
            errors.append(e)

    helpers = [threading.Thread(target=work, name=f"likewise-train-{i}") for i in range(threads - 1)]
    for t in helpers:
        t.start()
    work()
    for t in helpers:
        t.join()
    if errors:
        raise errors[0]
