"""SGNS with negatives shared across a group of contexts ("HogBatch", Ji et al. 2016), compiled with numba.

The classic kernel (:mod:`.sgns`) trains one (centre, context) pair at a time: one input row against the
centre's output row and ``negative`` freshly drawn rows, each a dot product and two row updates. Most
of its time goes to drawing negatives and fetching their scattered rows. Here the contexts of a centre
are taken in groups of up to ``group``; each group draws one set of negatives, and the whole group is
trained at once as small dense products over rows copied into contiguous buffers:

    X = W[contexts]                      (B x D)   input rows of the group's contexts
    T = C[[centre] + negatives]          (K' x D)  output rows; label 1 for the centre, 0 for the rest
    G = lr * (label - sigmoid(clip(X T^T)))    (B x K')
    W[contexts] += G T,   C[targets] += G^T X

Both updates use the rows as they were before the group (a gradient step at one point), not the
one-pair-at-a-time order of word2vec. Negatives are drawn ``B`` times less often and each target row is
fetched once per group instead of once per pair. Two more savings: the sigmoid and the loss
``log(1 + e^z)`` are read from tables of ``TABLE_SIZE`` bins over ``[-MAX_EXP, MAX_EXP]`` (bin
``floor((z + MAX_EXP) * TABLE_SCALE)``, value at the bin's centre) instead of two libm calls per
(context, target); and a negative's search in ``neg_cum`` starts from a guide table of about one bucket
per item, which gives exactly the binary search's answer in O(1) expected steps.

With ``group=1`` this is the classic algorithm with the same random draws and pairs; it differs from
:mod:`.sgns` by the tabulated sigmoid, and when one pair draws the same negative twice (word2vec lets the
second draw see the first's update).

Everything else (corpus layout, chunks, random streams, subsampling, learning-rate schedule, windows,
basket sampling, the clip at ``MAX_EXP``, the loss) is as documented in :mod:`.sgns`, with one change
in the order of draws per kept position ``i``:

* sequence mode: draw the window shrink ``b`` (as in :mod:`.sgns`); the contexts in ``[i - r, i + r]``
  minus ``i``, ascending, are cut into consecutive groups of at most ``group``; for each group draw
  ``negative`` negatives (a draw equal to the centre is dropped, not redrawn), then train the group.
* basket mode: when ``n - 1 <= max_context`` the other positions, ascending, are grouped the same way;
  otherwise ``max_context`` contexts are sampled with replacement, and each group draws its (up to
  ``group``) contexts, then its negatives, then trains.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ._common import (
    F_MAX,
    LOG1P_EXP_TABLE,
    SIGMOID_TABLE,
    TABLE_SCALE,
    TABLE_SIZE,
    U32,
    longest_sequence,
    lr_at,
    next32,
    run_block,
    stop_chunk,
    subsample,
)

# Public name that lived here before ._common; ``NAME as NAME`` keeps it importable from here.
from ._common import validate_group as validate_group

__all__ = ["train_sgns_batched_block", "train_sgns_batched_block_serial"]


@njit(fastmath=True, nogil=True, cache=True, inline="always")
def _group(centre, ctx, nb, tg, nt, W, C, xb, tb, gm, dx, lr):
    """Train contexts ``ctx[:nb]`` against targets ``tg[:nt]`` (``tg[0]`` is the centre); return the loss."""
    dim = W.shape[1]
    for b in range(nb):
        r = ctx[b]
        for d in range(dim):
            xb[b, d] = W[r, d]
    for t in range(nt):
        r = tg[t]
        for d in range(dim):
            tb[t, d] = C[r, d]
    loss = 0.0
    for b in range(nb):
        for t in range(nt):
            f = np.float32(0.0)
            for d in range(dim):
                f += xb[b, d] * tb[t, d]
            if f > F_MAX:
                f = F_MAX
            elif f < -F_MAX:
                f = -F_MAX
            z = -f if t == 0 else f
            k = int((z + F_MAX) * TABLE_SCALE)
            if k >= TABLE_SIZE:
                k = TABLE_SIZE - 1
            q = SIGMOID_TABLE[k]
            gm[b, t] = q * lr if t == 0 else -q * lr
            loss += LOG1P_EXP_TABLE[k]
    # W[ctx] += G T and C[tg] += G^T X, both from the rows as copied above.
    for b in range(nb):
        for d in range(dim):
            dx[b, d] = np.float32(0.0)
        for t in range(nt):
            g = gm[b, t]
            for d in range(dim):
                dx[b, d] += g * tb[t, d]
    for t in range(nt):
        r = tg[t]
        for b in range(nb):
            g = gm[b, t]
            for d in range(dim):
                C[r, d] += g * xb[b, d]
    for b in range(nb):
        r = ctx[b]
        for d in range(dim):
            W[r, d] += dx[b, d]
    return loss


@njit(nogil=True, cache=True)
def _guide_shift(n_items):
    """Shift giving about one guide bucket per item (at least 2, at most 2**22 buckets: 16 MiB)."""
    bits = 1
    while (1 << bits) < n_items and bits < 22:
        bits += 1
    return np.uint64(32 - bits)


@njit(nogil=True, cache=True)
def _make_guide(neg_cum, shift):
    """``guide[b]`` = first ``t`` with ``neg_cum[t] > r0(b)``, where ``r0(b)`` is the smallest draw
    ``r = (x * total) >> 32`` of any 32-bit ``x`` with ``x >> shift == b``. A draw in bucket ``b``
    then starts its search at ``guide[b]`` and scans forward: the same answer as a binary search over
    ``neg_cum``, in O(1) expected steps when there are about as many buckets as items."""
    n = neg_cum.shape[0]
    total = np.uint64(neg_cum[n - 1])
    m = 1 << (32 - shift)
    guide = np.empty(m, dtype=np.int32)
    t = 0
    for b in range(m):
        r0 = np.int64((np.uint64(b) << np.uint64(shift)) * total >> U32)
        while neg_cum[t] <= r0:
            t += 1
        guide[b] = t
    return guide


@njit(fastmath=True, nogil=True, cache=True, inline="always")
def _draw_negatives(centre, tg, negative, neg_cum, neg_total, guide, shift, state):
    """Fill ``tg[0] = centre`` and ``tg[1:]`` with negatives; return (count, state).

    Each draw takes the first ``t`` with ``neg_cum[t] > r`` (``r`` uniform in ``[0, neg_cum[-1])``),
    found from the guide table (see :func:`_make_guide`)."""
    tg[0] = centre
    nt = 1
    for _ in range(negative):
        state, x = next32(state)
        r = np.int64((x * neg_total) >> U32)
        t = guide[np.int64(x >> shift)]
        while neg_cum[t] <= r:
            t += 1
        if t != centre:
            tg[nt] = t
            nt += 1
    return nt, state


@njit(fastmath=True, nogil=True, cache=True)
def _train_chunk(ids, offsets, s0, s1, W, C, keep_prob, neg_cum, params, base, guide, shift, state, out):
    """Train sequences ``[s0, s1)`` from stream ``state``; write (seen, kept, pairs, error, bad id) to out.

    As in :mod:`.sgns`, plus ``group`` at the end of ``params`` and the negatives' guide table.
    """
    mode, window, negative, max_context, lr0, min_lr, words_before, total_words, group = params
    n_items = W.shape[0]
    dim = W.shape[1]
    longest = longest_sequence(offsets, s0, s1)
    kept = np.empty(longest, dtype=np.int32)
    ctx_all = np.empty(max(2 * window, max_context, longest) + 1, dtype=np.int32)
    tg = np.empty(negative + 1, dtype=np.int32)
    xb = np.empty((group, dim), dtype=np.float32)
    dx = np.empty((group, dim), dtype=np.float32)
    tb = np.empty((negative + 1, dim), dtype=np.float32)
    gm = np.empty((group, negative + 1), dtype=np.float32)
    neg_total = np.uint64(neg_cum[n_items - 1])
    uwindow = np.uint64(window)
    seen = 0
    n_kept = 0
    pairs = 0
    loss = 0.0
    out[3] = 0
    for s in range(s0, s1):
        a = offsets[s]
        b = offsets[s + 1]
        seen += b - a
        n, state, bad = subsample(ids, a, b, keep_prob, kept, state)
        if bad >= 0:
            stop_chunk(out, seen, n_kept, pairs, ids[bad])
            return loss
        n_kept += n
        if n < 2:
            continue
        lr = lr_at(a, base, words_before, total_words, lr0, min_lr)
        for i in range(n):
            centre = kept[i]
            if mode == 1 and n - 1 > max_context:
                others = np.uint64(n - 1)
                left = max_context
                while left > 0:
                    nb = min(group, left)
                    for q in range(nb):
                        state, x = next32(state)
                        j = np.int64((x * others) >> U32)
                        if j >= i:
                            j += 1
                        ctx_all[q] = kept[j]
                    nt, state = _draw_negatives(centre, tg, negative, neg_cum, neg_total, guide, shift, state)
                    loss += _group(centre, ctx_all, nb, tg, nt, W, C, xb, tb, gm, dx, lr)
                    pairs += nb
                    left -= nb
                continue
            if mode == 0:
                state, x = next32(state)
                reach = window - np.int64((x * uwindow) >> U32)
                lo = max(0, i - reach)
                hi = min(n, i + reach + 1)
            else:
                lo = 0
                hi = n
            m = 0
            for j in range(lo, hi):
                if j != i:
                    ctx_all[m] = kept[j]
                    m += 1
            start = 0
            while start < m:
                nb = min(group, m - start)
                nt, state = _draw_negatives(centre, tg, negative, neg_cum, neg_total, guide, shift, state)
                loss += _group(centre, ctx_all[start:], nb, tg, nt, W, C, xb, tb, gm, dx, lr)
                pairs += nb
                start += nb
    out[0] = seen
    out[1] = n_kept
    out[2] = pairs
    return loss


# Two drivers (prange vs range), each indexing bounds and states itself, for the reasons given in .sgns.


@njit(parallel=True, fastmath=True, nogil=True, cache=True)
def _run_parallel(ids, offsets, bounds, states, W, C, keep_prob, neg_cum, params, counts, losses):
    shift = _guide_shift(W.shape[0])
    guide = _make_guide(neg_cum, shift)
    base = offsets[bounds[0]]
    for k in prange(len(states)):
        s0, s1 = bounds[k], bounds[k + 1]
        losses[k] = _train_chunk(
            ids, offsets, s0, s1, W, C, keep_prob, neg_cum, params, base, guide, shift, states[k], counts[k]
        )


@njit(fastmath=True, nogil=True, cache=True)
def _run_serial(ids, offsets, bounds, states, W, C, keep_prob, neg_cum, params, counts, losses):
    shift = _guide_shift(W.shape[0])
    guide = _make_guide(neg_cum, shift)
    base = offsets[bounds[0]]
    for k in range(len(states)):
        s0, s1 = bounds[k], bounds[k + 1]
        losses[k] = _train_chunk(
            ids, offsets, s0, s1, W, C, keep_prob, neg_cum, params, base, guide, shift, states[k], counts[k]
        )


def train_sgns_batched_block(
    ids: np.ndarray,
    offsets: np.ndarray,
    seq_start: int,
    seq_end: int,
    W: np.ndarray,
    C: np.ndarray,
    keep_prob: np.ndarray,
    neg_cum: np.ndarray,
    mode: int,
    window: int,
    negative: int,
    max_context: int,
    group: int,
    lr0: float,
    min_lr: float,
    words_before: int,
    total_words: int,
    seed: int,
    n_chunks: int,
) -> tuple[int, int, int, float]:
    """Train SGNS on a block with negatives shared by groups of contexts; chunks in parallel (hogwild).

    Parameters and returns are those of :func:`likewise.kernels.train_sgns_block`, plus ``group``
    (int >= 1): how many contexts of one centre share a set of negatives and train as one small matrix
    product. ``group=1`` is classic word2vec. See the module docstring for the exact algorithm.
    Threads race on rows, so results vary slightly between runs with more than one thread; use
    :func:`train_sgns_batched_block_serial` for bit-identical results.
    """
    args = (ids, offsets, seq_start, seq_end, W, C, keep_prob, neg_cum, mode, window, negative, max_context)
    rest = (lr0, min_lr, words_before, total_words, seed, n_chunks)
    return run_block(_run_parallel, args + rest, group)


def train_sgns_batched_block_serial(
    ids: np.ndarray,
    offsets: np.ndarray,
    seq_start: int,
    seq_end: int,
    W: np.ndarray,
    C: np.ndarray,
    keep_prob: np.ndarray,
    neg_cum: np.ndarray,
    mode: int,
    window: int,
    negative: int,
    max_context: int,
    group: int,
    lr0: float,
    min_lr: float,
    words_before: int,
    total_words: int,
    seed: int,
    n_chunks: int,
) -> tuple[int, int, int, float]:
    """:func:`train_sgns_batched_block` on one thread, chunks in order: bit-identical across runs."""
    args = (ids, offsets, seq_start, seq_end, W, C, keep_prob, neg_cum, mode, window, negative, max_context)
    rest = (lr0, min_lr, words_before, total_words, seed, n_chunks)
    return run_block(_run_serial, args + rest, group)
