"""A block call's way into a compiled chunk driver: validation, chunks, threads, the summed counts.

:func:`run_block` is the one place that writes a driver's positional arguments; each kernel module
names its driver (a :class:`Driver`) and how to build the driver's negative tables. Plain Python: the
drivers are compiled in their own modules (:mod:`._pairs`, :mod:`.batched`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from ..errors import ItemIndexError
from ._claim import claim_chunks
from ._common import chunk_bounds, chunk_states, literal_entry, validate_group, validate_inputs

__all__ = ["Driver", "read_only", "run_block"]


def read_only(a: np.ndarray) -> np.ndarray:
    """``a`` itself when it is read-only, else a read-only view of it (same memory, no copy)."""
    if not a.flags.writeable:
        return a
    view = a.view()
    view.flags.writeable = False
    return view


class Driver(NamedTuple):
    """A compiled chunk driver, as :func:`run_block` calls it.

    ``run_chunks(ids, offsets, bounds, states, W, C, keep_prob, negs, params, counts, losses, k0, k1,
    constant)`` trains chunks ``k0 .. k1 - 1`` of a block: chunk ``k`` is sequences ``[bounds[k],
    bounds[k + 1])`` trained from stream ``states[k]``; its (seen, kept, pairs, error, bad id) go to
    ``counts[k]`` and its loss sum to ``losses[k]``. ``negs`` is the driver's own negative tables,
    ``params`` the block's scalars (:meth:`Block.kernel_scalars`, then ``group``).
    """

    run_chunks: Callable[..., None]
    #: ``constant(dim, negs) -> (value, literal)``: the driver's last argument, and whether the driver is
    #: compiled for that value (a ``Literal[int]``, :func:`literal_entry`).
    constant: Callable[[int, tuple], tuple[int, bool]]


def run_block(
    driver: Driver,
    args: tuple,
    negatives: Callable[[np.ndarray, int], tuple],
    threads: int,
    group: object = None,
) -> tuple[int, int, int, float]:
    """Validate a block call, split it into chunks, run a compiled driver on ``threads`` threads and sum
    its counts: the one place that writes a driver's positional arguments.

    Parameters
    ----------
    driver : Driver
        The compiled chunk driver.
    args : tuple
        The 18 arguments of :func:`likewise.kernels.train_sgns_block`, in its order.
    negatives : callable
        ``negatives(neg_cum, n_rows)`` gives the driver's ``negs`` (called once the arguments are valid).
    threads : int
        Threads that claim the chunks (:func:`claim_chunks`; one: in order, the serial kernels).
    group : int, optional
        The batched kernel's ``group``, checked after ``args`` (the per-pair kernels: 1).

    Returns
    -------
    tuple of (int, int, int, float)
        Tokens seen, tokens kept, pairs trained and the loss sum of the block.

    Raises
    ------
    InputError
        A bad argument.
    ItemIndexError
        The first id outside ``[0, V)``, in chunk order.
    """
    ids, offsets, _, _, W, C, keep_prob, neg_cum = args[:8]
    p = validate_inputs(*args)
    params = p.kernel_scalars() + (1 if group is None else validate_group(group),)
    negs = negatives(neg_cum, W.shape[0])
    if p.seq_start == p.seq_end:
        return 0, 0, 0, 0.0
    bounds = chunk_bounds(offsets, p.seq_start, p.seq_end, p.n_chunks)
    states = chunk_states(p.seed, p.seq_start, p.n_chunks)
    counts = np.zeros((p.n_chunks, 5), dtype=np.int64)
    losses = np.zeros(p.n_chunks, dtype=np.float64)
    # The corpus always reaches the driver read-only (numba compiles a read-only array as another type):
    # a memory-mapped corpus and the in-memory copies auto-epochs trains on then share one compiled
    # specialisation, so a cold first run compiles the driver once, not twice.
    ids, offsets = read_only(ids), read_only(offsets)
    call = (ids, offsets, bounds, states, W, C, keep_prob, negs, params, counts, losses)
    value, literal = driver.constant(int(W.shape[1]), negs)
    run = literal_entry(driver.run_chunks, *call, 0, 0, value) if literal else driver.run_chunks
    claim_chunks(lambda k0, k1: run(*call, k0, k1, value), p.n_chunks, threads)
    failed = np.flatnonzero(counts[:, 3])
    if len(failed):
        raise ItemIndexError(int(counts[failed[0], 4]), W.shape[0])
    seen, kept, pairs = (int(v) for v in counts[:, :3].sum(axis=0))
    return seen, kept, pairs, float(sum(losses.tolist()))  # summed in chunk order: deterministic
