"""The per-pair SGNS kernels' compiled code: one chunk driver and one pair step, for :mod:`.sgns` and
:mod:`.typed_negatives`.

The two kernels choose the same pairs with the same draws and train them with word2vec's update (exact
sigmoid); they differ only in where a pair's negatives come from: all rows (``neg_cum``) or the rows of
the centre's type (:mod:`.typed_negatives`'s four tables). The driver takes that table as ``negs``; two small
steps, :func:`negative_range` and :func:`negative_row`, read it, and numba picks their implementation
from its type when the driver compiles (``overload``, inlined). Each kernel is thus compiled as if it
were written alone, one specialisation per kind of table; a branch on a flag known only at run time
compiled the typed kernel differently (its vectors changed in the last bits). This module is private;
the kernels import its public names (STYLE rule 11).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, types
from numba.extending import overload

from ._block import Driver
from ._common import (
    F_MAX,
    F_SETTLED,
    U32,
    longest_sequence,
    lr_at,
    next32,
    sampled_other,
    stop_chunk,
    subsample,
    window_span,
)

__all__ = [
    "PAIR_DRIVER",
    "first_above",
    "negative_range",
    "negative_row",
    "run_pair_chunks",
    "train_pair",
    "untyped",
]


def untyped(neg_cum: np.ndarray, n_rows: int) -> np.ndarray:
    """The driver's ``negs`` for negatives drawn from all ``n_rows`` rows by ``neg_cum``."""
    return neg_cum


@njit(nogil=True, cache=True, inline="always")
def first_above(cum, lo, hi, r):
    """The first position ``p`` in ``[lo, hi)`` with ``cum[p] > r`` (a binary search; ``hi`` if none)."""
    while lo < hi:
        mid = (lo + hi) >> 1
        if cum[mid] <= r:
            lo = mid + 1
        else:
            hi = mid
    return lo


# The two steps that read ``negs``. Compiled code only: each Python stub stands for the implementation
# numba picks by the type of ``negs`` (an array: ``neg_cum``; a tuple: the type tables) and inlines
# (``inline="always"``), so the driver stays one self-contained function (._common, "Compiled steps").


def negative_range(negs, centre):
    """``(cum, lo, hi, total)``: a negative of ``centre`` is the first position ``p`` in ``[lo, hi)``
    with ``cum[p] > r``, ``r`` drawn uniformly in ``[0, total)``."""
    raise NotImplementedError("negative_range runs inside the compiled drivers only")


def negative_row(negs, position):
    """The row at ``position`` of the table :func:`negative_range` gave."""
    raise NotImplementedError("negative_row runs inside the compiled drivers only")


def _all_rows(negs, centre):
    """All rows: ``negs`` is ``neg_cum``."""
    n = negs.shape[0]
    return negs, 0, n, np.uint64(negs[n - 1])


def _of_type(negs, centre):
    """The rows of ``centre``'s type: ``negs`` is ``(item_type, type_start, type_order, type_cum)``."""
    item_type, type_start, type_order, type_cum = negs
    t = item_type[centre]
    a = type_start[t]
    b = type_start[t + 1]
    return type_cum, a, b, np.uint64(type_cum[b - 1])


@overload(negative_range, inline="always")
def _negative_range(negs, centre):
    """:func:`negative_range` for this kind of ``negs``."""
    return _all_rows if isinstance(negs, types.Array) else _of_type


def _same_row(negs, position):
    """All rows: the position is the row."""
    return position


def _typed_row(negs, position):
    """The rows of a type: ``type_order`` maps the position to its row."""
    item_type, type_start, type_order, type_cum = negs
    return type_order[position]


@overload(negative_row, inline="always")
def _negative_row(negs, position):
    """:func:`negative_row` for this kind of ``negs``."""
    return _same_row if isinstance(negs, types.Array) else _typed_row


@njit(fastmath=True, nogil=True, cache=True, inline="always")
def train_pair(centre, ctx, W, C, negs, negative, lr, neu1e, state):
    """Train one (centre, context) pair; return the advanced stream state and the pair's loss.

    :mod:`.sgns`'s module docstring gives the update; the negatives come from ``negs``
    (:func:`negative_range`)."""
    dim = W.shape[1]
    for d in range(dim):
        neu1e[d] = np.float32(0.0)
    loss = 0.0
    cum, a, b, total = negative_range(negs, centre)
    for k in range(negative + 1):
        if k == 0:
            target = centre
        else:
            state, x = next32(state)
            target = negative_row(negs, first_above(cum, a, b, np.int64((x * total) >> U32)))
            if target == centre:
                continue
        f = np.float32(0.0)
        for d in range(dim):
            f += W[ctx, d] * C[target, d]
        settled = False
        if f > F_MAX:
            settled = k == 0 and f > F_SETTLED
            f = F_MAX
        elif f < -F_MAX:
            settled = k != 0 and f < -F_SETTLED
            f = -F_MAX
        z = -f if k == 0 else f
        e = np.float32(math.exp(z))
        q = e / (np.float32(1.0) + e)
        g = q * lr if k == 0 else -q * lr
        loss += math.log1p(e)
        if settled:  # learnt past doubt: no update (see SETTLED)
            continue
        for d in range(dim):
            c = C[target, d]
            neu1e[d] += g * c
            C[target, d] = c + g * W[ctx, d]
    for d in range(dim):
        W[ctx, d] += neu1e[d]
    return state, loss


# One compiled driver trains a range of a block's chunks; the parallel kernels run it on threads that
# claim chunks one at a time (``claim_chunks``), the serial ones on the chunks in order, so one thread
# gives the serial result bit for bit. The chunk loop is its body and everything it calls is inlined:
# it is the one compiled copy of this code in a process (._common, "Compiled steps", says why that
# matters for deterministic runs).


@njit(fastmath=True, nogil=True, cache=True)
def run_pair_chunks(ids, offsets, bounds, states, W, C, keep_prob, negs, params, counts, losses, k0, k1, dim):
    """Train chunks ``k0 .. k1 - 1`` of a block: chunk ``k`` is sequences ``[bounds[k], bounds[k + 1])``
    trained from stream ``states[k]``; its (seen, kept, pairs, error, bad id) go to ``counts[k]`` and its
    loss sum to ``losses[k]``.

    ``params`` holds the block's scalars (:meth:`._common.Block.kernel_scalars` and a ``group`` this
    driver does not use), ``negs`` the negatives' table (the module docstring) and ``dim`` is
    ``W.shape[1]``. ``counts[k, 3]`` is 1 when an id outside ``[0, V)`` stopped the chunk there, and
    ``counts[k, 4]`` is that id.
    """
    mode, window, negative, max_context, lr0, min_lr, words_before, total_words, _ = params
    base = offsets[bounds[0]]
    uwindow = np.uint64(window)
    for chunk in range(k0, k1):
        s0 = bounds[chunk]
        s1 = bounds[chunk + 1]
        state = states[chunk]
        out = counts[chunk]
        longest = longest_sequence(offsets, s0, s1)
        kept = np.empty(longest, dtype=np.int32)
        neu1e = np.empty(W.shape[1], dtype=np.float32)
        seen = 0
        n_kept = 0
        pairs = 0
        loss = 0.0
        stopped = False
        out[3] = 0
        for s in range(s0, s1):
            a = offsets[s]
            b = offsets[s + 1]
            seen += b - a
            n, state, bad = subsample(ids, a, b, keep_prob, kept, state)
            if bad >= 0:
                stop_chunk(out, seen, n_kept, pairs, ids[bad])
                stopped = True
                break
            n_kept += n
            if n < 2:
                continue
            lr = lr_at(a, base, words_before, total_words, lr0, min_lr)
            sampled = mode == 1 and n - 1 > max_context
            others = np.uint64(n - 1)
            for i in range(n):
                # One train_pair call site for all three ways of choosing contexts: each site inlines
                # all of it, and the compile time grows with the copies.
                lo, hi, state = window_span(i, n, mode, window, uwindow, state)
                j = lo - 1
                for _ in range(max_context if sampled else hi - lo - 1):
                    if sampled:
                        j, state = sampled_other(i, others, state)
                    else:
                        j += 1
                        if j == i:
                            j += 1
                    state, pl = train_pair(kept[i], kept[j], W, C, negs, negative, lr, neu1e, state)
                    loss += pl
                    pairs += 1
        if not stopped:
            out[0] = seen
            out[1] = n_kept
            out[2] = pairs
        losses[chunk] = loss


def _width(dim: int, negs: object) -> tuple[int, bool]:
    """The driver's constant: ``dim``, never a literal."""
    return dim, False


#: The per-pair kernels' driver, as :class:`._block.BlockKernel` runs it.
PAIR_DRIVER = Driver(run_pair_chunks, _width)
