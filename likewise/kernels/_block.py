"""A block call's way into a compiled chunk driver: validation, chunks, threads, the summed counts.

:class:`BlockKernel` is a block kernel that takes its hyper-parameters whole (a
:class:`~likewise.kernels.params.KernelParams`), as training calls it; the positional kernels of
:mod:`.sgns`, :mod:`.batched` and :mod:`.typed_negatives` are thin adapters onto one. Its call is the one
place that writes a compiled driver's positional arguments. Each kernel module names its driver (a
:class:`Driver`) and how to build the driver's negative tables. Plain Python: the drivers are compiled
in their own modules (:mod:`._pairs`, :mod:`.batched`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from ..errors import ItemIndexError
from ._claim import claim_chunks
from ._common import chunk_bounds, chunk_states, literal_entry, validate_inputs
from .params import KernelParams

__all__ = ["BlockKernel", "Driver", "read_only"]


def read_only(a: np.ndarray) -> np.ndarray:
    """``a`` itself when it is read-only, else a read-only view of it (same memory, no copy)."""
    if not a.flags.writeable:
        return a
    view = a.view()
    view.flags.writeable = False
    return view


class Driver(NamedTuple):
    """A compiled chunk driver, as :class:`BlockKernel` calls it.

    ``run_chunks(ids, offsets, bounds, states, W, C, keep_prob, negs, params, counts, losses, k0, k1,
    constant)`` trains chunks ``k0 .. k1 - 1`` of a block: chunk ``k`` is sequences ``[bounds[k],
    bounds[k + 1])`` trained from stream ``states[k]``; its (seen, kept, pairs, error, bad id) go to
    ``counts[k]`` and its loss sum to ``losses[k]``. ``negs`` is the driver's own negative tables,
    ``params`` the block's scalars (:meth:`~likewise.kernels._common.Block.scalars`).
    """

    run_chunks: Callable[..., None]
    #: ``constant(dim, negs) -> (value, literal)``: the driver's last argument, and whether the driver is
    #: compiled for that value (a ``Literal[int]``, :func:`literal_entry`).
    constant: Callable[[int, object], tuple[int, bool]]
    #: It trains groups of contexts: ``KernelParams.group`` is checked (>= 1) and used.
    grouped: bool = False


@dataclasses.dataclass(frozen=True)
class BlockKernel:
    """A block kernel: ``kernel(params, ids, offsets, seq_start, seq_end, W, C, keep_prob, neg_cum,
    words_before, total_words, seed, n_chunks)``.

    The arguments are those of :func:`likewise.kernels.train_sgns_block` with the hyper-parameters
    whole in ``params``; the call validates them (:func:`~likewise.kernels._common.validate_inputs`),
    cuts the block into chunks, runs the driver and returns (tokens seen, tokens kept, pairs trained,
    loss sum).

    Parameters
    ----------
    driver : Driver
        The compiled chunk driver.
    negatives : callable
        ``negatives(neg_cum, n_rows)`` gives the driver's ``negs`` (called once the arguments are valid,
        so it may check tables of its own).
    serial : bool
        True: one thread, chunks in order (bit-identical across runs); False: ``numba.get_num_threads()``
        threads claim the chunks (:func:`claim_chunks`).
    """

    driver: Driver
    negatives: Callable[[np.ndarray, int], object]
    serial: bool = False

    def __call__(
        self,
        params: KernelParams,
        ids: np.ndarray,
        offsets: np.ndarray,
        seq_start: int,
        seq_end: int,
        W: np.ndarray,
        C: np.ndarray,
        keep_prob: np.ndarray,
        neg_cum: np.ndarray,
        words_before: int,
        total_words: int,
        seed: int,
        n_chunks: int,
    ) -> tuple[int, int, int, float]:
        """Train the block; raise :class:`InputError` for a bad argument and :class:`ItemIndexError` for
        the first id outside ``[0, V)`` in chunk order (chunks before it may be trained)."""
        p = validate_inputs(
            params, ids, offsets, seq_start, seq_end, W, C, keep_prob, neg_cum, words_before, total_words,
            seed, n_chunks, grouped=self.driver.grouped,
        )  # fmt: skip
        negs = self.negatives(neg_cum, W.shape[0])
        if p.seq_start == p.seq_end:
            return 0, 0, 0, 0.0
        bounds = chunk_bounds(offsets, p.seq_start, p.seq_end, p.n_chunks)
        states = chunk_states(p.seed, p.seq_start, p.n_chunks)
        counts = np.zeros((p.n_chunks, 5), dtype=np.int64)
        losses = np.zeros(p.n_chunks, dtype=np.float64)
        # The corpus always reaches the driver read-only (numba compiles a read-only array as another
        # type): a memory-mapped corpus and the in-memory copies auto-epochs trains on then share one
        # compiled specialisation, so a cold first run compiles the driver once, not twice.
        ids, offsets = read_only(ids), read_only(offsets)
        call = (ids, offsets, bounds, states, W, C, keep_prob, negs, p.scalars(), counts, losses)
        value, literal = self.driver.constant(int(W.shape[1]), negs)
        run = literal_entry(self.driver.run_chunks, *call, 0, 0, value) if literal else self.driver.run_chunks
        claim_chunks(lambda k0, k1: run(*call, k0, k1, value), p.n_chunks, self._threads())
        failed = np.flatnonzero(counts[:, 3])
        if len(failed):
            raise ItemIndexError(int(counts[failed[0], 4]), W.shape[0])
        seen, kept, pairs = (int(v) for v in counts[:, :3].sum(axis=0))
        return seen, kept, pairs, float(sum(losses.tolist()))  # summed in chunk order: deterministic

    def _threads(self) -> int:
        if self.serial:
            return 1
        import numba

        return numba.get_num_threads()
