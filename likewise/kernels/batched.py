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

How the time is spent (docs/speed.md measures it): the group's products are register-blocked (scores
two context rows by three targets at a time, ``W`` rows updated from up to six target rows per pass,
``C`` rows from up to four context rows), so each row loaded feeds several multiply-adds; and the chunk
loop runs one group ahead: it draws the next group's negatives and prefetches its rows of ``W`` and
``C`` while the current group trains, which hides most of the cache misses of scattered rows. Neither
changes a draw, a pair or the order of the updates: results differ from a plain loop only by float
rounding (the scores' sums are reordered). At ``dim >= SPECIALISE_MIN_DIM`` the driver is compiled for
the exact ``dim`` (a ``Literal[int]`` signature, :func:`literal_entry`: constant trip counts, no vector
remainder loops; the first call at a new ``dim`` compiles for it, once, into numba's disk cache).

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
from numba import njit

from ._block import BlockKernel, Driver
from ._common import (
    F_MAX,
    F_SETTLED,
    LOG1P_EXP_TABLE,
    SIGMOID_TABLE,
    TABLE_SCALE,
    TABLE_SIZE,
    U32,
    longest_sequence,
    lr_at,
    next32,
    prefetch_row,
    sampled_other,
    stop_chunk,
    subsample,
    window_span,
)

# Public name that lived here before ._common; ``NAME as NAME`` keeps it importable from here.
from ._common import validate_group as validate_group
from .params import KernelParams

__all__ = [
    "BATCHED",
    "BATCHED_DRIVER",
    "BATCHED_SERIAL",
    "SPECIALISE_MIN_DIM",
    "train_sgns_batched_block",
    "train_sgns_batched_block_serial",
]

#: From this width up the drivers are compiled for the exact ``dim`` (one compilation per new width).
SPECIALISE_MIN_DIM = 32


@njit(fastmath=True, nogil=True, cache=True, inline="always")
def _dots(xb, tb, b, t, k, width):
    """Scores of context row ``b`` against target rows ``t .. t + k - 1`` (``k`` = 1, 2 or 3)."""
    s0 = np.float32(0.0)
    s1 = np.float32(0.0)
    s2 = np.float32(0.0)
    if k == 3:
        for d in range(width):
            x = xb[b, d]
            s0 += x * tb[t, d]
            s1 += x * tb[t + 1, d]
            s2 += x * tb[t + 2, d]
    elif k == 2:
        for d in range(width):
            x = xb[b, d]
            s0 += x * tb[t, d]
            s1 += x * tb[t + 1, d]
    else:
        for d in range(width):
            s0 += xb[b, d] * tb[t, d]
    return s0, s1, s2


@njit(fastmath=True, nogil=True, cache=True, inline="always")
def _dots2(xb, tb, b, t, k, width, gm):
    """Scores of context rows ``b`` and ``b + 1`` against target rows ``t .. t + k - 1`` into ``gm``."""
    if k == 3:
        s00 = s01 = s02 = s10 = s11 = s12 = np.float32(0.0)
        for d in range(width):
            x0 = xb[b, d]
            x1 = xb[b + 1, d]
            t0 = tb[t, d]
            t1 = tb[t + 1, d]
            t2 = tb[t + 2, d]
            s00 += x0 * t0
            s01 += x0 * t1
            s02 += x0 * t2
            s10 += x1 * t0
            s11 += x1 * t1
            s12 += x1 * t2
        gm[b, t] = s00
        gm[b, t + 1] = s01
        gm[b, t + 2] = s02
        gm[b + 1, t] = s10
        gm[b + 1, t + 1] = s11
        gm[b + 1, t + 2] = s12
    elif k == 2:
        s00 = s01 = s10 = s11 = np.float32(0.0)
        for d in range(width):
            x0 = xb[b, d]
            x1 = xb[b + 1, d]
            t0 = tb[t, d]
            t1 = tb[t + 1, d]
            s00 += x0 * t0
            s01 += x0 * t1
            s10 += x1 * t0
            s11 += x1 * t1
        gm[b, t] = s00
        gm[b, t + 1] = s01
        gm[b + 1, t] = s10
        gm[b + 1, t + 1] = s11
    else:
        s00 = s10 = np.float32(0.0)
        for d in range(width):
            t0 = tb[t, d]
            s00 += xb[b, d] * t0
            s10 += xb[b + 1, d] * t0
        gm[b, t] = s00
        gm[b + 1, t] = s10


@njit(fastmath=True, nogil=True, cache=True, inline="always")
def _grad(f, t, lr):
    """Gradient scale and loss term of score ``f`` against target ``t`` (``t == 0``: the centre)."""
    settled = False
    if f > F_MAX:
        settled = t == 0 and f > F_SETTLED
        f = F_MAX
    elif f < -F_MAX:
        settled = t != 0 and f < -F_SETTLED
        f = -F_MAX
    z = -f if t == 0 else f
    k = int((z + F_MAX) * TABLE_SCALE)
    if k >= TABLE_SIZE:
        k = TABLE_SIZE - 1
    if settled:  # learnt past doubt: no update (see SETTLED in ._common)
        return np.float32(0.0), LOG1P_EXP_TABLE[k]
    q = SIGMOID_TABLE[k]
    return (q * lr if t == 0 else -q * lr), LOG1P_EXP_TABLE[k]


@njit(fastmath=True, nogil=True, cache=True, inline="always")
def _group(ctx, nb, tg, nt, W, C, xb, tb, gm, lr, dim):
    """Train contexts ``ctx[:nb]`` against targets ``tg[:nt]`` (``tg[0]`` is the centre); return the loss.

    ``xb`` and ``tb`` are scratch rows padded with zeros to a multiple of 16 columns, so the score loop
    runs whole vectors; ``dim`` is a compile-time constant when the driver was specialised for it.
    """
    width = xb.shape[1]
    for b in range(nb):
        r = ctx[b]
        for d in range(dim):
            xb[b, d] = W[r, d]
    for t in range(nt):
        r = tg[t]
        for d in range(dim):
            tb[t, d] = C[r, d]
    b = 0
    while b < nb:
        t = 0
        while t < nt:
            k = min(3, nt - t)
            if b + 1 < nb:
                _dots2(xb, tb, b, t, k, width, gm)
            else:
                s0, s1, s2 = _dots(xb, tb, b, t, k, width)
                gm[b, t] = s0
                if k > 1:
                    gm[b, t + 1] = s1
                if k > 2:
                    gm[b, t + 2] = s2
            t += k
        b += 2
    loss = 0.0
    for b in range(nb):
        for t in range(nt):
            g, e = _grad(gm[b, t], t, lr)
            gm[b, t] = g
            loss += e
    # W[ctx] += G T and C[tg] += G^T X, from the rows as copied: up to six target rows (four context
    # rows) per pass, so a pass loads each scratch row once for several multiply-adds.
    for b in range(nb):
        r = ctx[b]
        t = 0
        while t < nt:
            k = 6 if nt - t >= 6 else min(3, nt - t)
            g0 = gm[b, t]
            if k == 6:
                g1 = gm[b, t + 1]
                g2 = gm[b, t + 2]
                g3 = gm[b, t + 3]
                g4 = gm[b, t + 4]
                g5 = gm[b, t + 5]
                for d in range(dim):
                    W[r, d] += (
                        g0 * tb[t, d]
                        + g1 * tb[t + 1, d]
                        + g2 * tb[t + 2, d]
                        + g3 * tb[t + 3, d]
                        + g4 * tb[t + 4, d]
                        + g5 * tb[t + 5, d]
                    )
            elif k == 3:
                g1 = gm[b, t + 1]
                g2 = gm[b, t + 2]
                for d in range(dim):
                    W[r, d] += g0 * tb[t, d] + g1 * tb[t + 1, d] + g2 * tb[t + 2, d]
            elif k == 2:
                g1 = gm[b, t + 1]
                for d in range(dim):
                    W[r, d] += g0 * tb[t, d] + g1 * tb[t + 1, d]
            else:
                for d in range(dim):
                    W[r, d] += g0 * tb[t, d]
            t += k
    for t in range(nt):
        r = tg[t]
        b = 0
        while b < nb:
            k = min(4, nb - b)
            g0 = gm[b, t]
            if k == 4:
                g1 = gm[b + 1, t]
                g2 = gm[b + 2, t]
                g3 = gm[b + 3, t]
                for d in range(dim):
                    C[r, d] += g0 * xb[b, d] + g1 * xb[b + 1, d] + g2 * xb[b + 2, d] + g3 * xb[b + 3, d]
            elif k == 3:
                g1 = gm[b + 1, t]
                g2 = gm[b + 2, t]
                for d in range(dim):
                    C[r, d] += g0 * xb[b, d] + g1 * xb[b + 1, d] + g2 * xb[b + 2, d]
            elif k == 2:
                g1 = gm[b + 1, t]
                for d in range(dim):
                    C[r, d] += g0 * xb[b, d] + g1 * xb[b + 1, d]
            else:
                for d in range(dim):
                    C[r, d] += g0 * xb[b, d]
            b += k
    return loss


def _guide_shift(n_items: int) -> int:
    """Shift giving about one guide bucket per item (at least 2, at most 2**22 buckets: 16 MiB)."""
    bits = 1
    while (1 << bits) < n_items and bits < 22:
        bits += 1
    return 32 - bits


def _make_guide(neg_cum: np.ndarray, shift: int) -> np.ndarray:
    """``guide[b]`` = first ``t`` with ``neg_cum[t] > r0(b)``, where ``r0(b)`` is the smallest draw
    ``r = (x * total) >> 32`` of any 32-bit ``x`` with ``x >> shift == b``. A draw in bucket ``b``
    then starts its search at ``guide[b]`` and scans forward: the same answer as a binary search over
    ``neg_cum``, in O(1) expected steps when there are about as many buckets as items.

    Plain NumPy (integer work, no compile on a first run): ``(b << shift) < 2**32`` and ``total <
    2**31``, so the product fits in uint64."""
    total = np.uint64(neg_cum[-1])
    buckets = np.arange(1 << (32 - shift), dtype=np.uint64)
    r0 = ((buckets << np.uint64(shift)) * total) >> np.uint64(32)
    return np.searchsorted(neg_cum, r0.astype(np.int64), side="right").astype(np.int32)


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


@njit(fastmath=True, nogil=True, cache=True, inline="always")
def _prefetch_group(W, C, ctx, nb, tg, nt):
    for b in range(nb):
        prefetch_row(W, ctx[b])
    for t in range(nt):
        prefetch_row(C, tg[t])


# One compiled driver runs a range of a block's chunks, compiled for the literal ``dim`` at
# ``dim >= SPECIALISE_MIN_DIM`` (see the module docstring); threads claim chunks one at a time
# (``claim_chunks``). The chunk loop is its body and everything it calls is inlined, so it is the one
# compiled copy of this code in a process (._common, "Compiled steps", says why that matters). The loop
# is not a helper inlined into the driver: numba's inlining of nested inlined calls compiles seconds
# slower.


@njit(fastmath=True, nogil=True, cache=True, inline="always")
def _chunk_buffers(longest, window, group, negative, width):
    """A chunk's scratch arrays: its kept ids, contexts, the two group slots (contexts, targets, sizes,
    learning rates) and the gathered rows and scores of one group."""
    kept = np.empty(longest, dtype=np.int32)
    ctx_all = np.empty(max(2 * window, longest) + 1, dtype=np.int32)
    cx = np.empty((2, group), dtype=np.int32)
    tgs = np.empty((2, negative + 1), dtype=np.int32)
    nbs = np.zeros(2, dtype=np.int64)
    nts = np.zeros(2, dtype=np.int64)
    lrs = np.zeros(2, dtype=np.float32)
    xb = np.zeros((group, width), dtype=np.float32)
    tb = np.zeros((negative + 1, width), dtype=np.float32)
    gm = np.empty((group, negative + 1), dtype=np.float32)
    return kept, ctx_all, cx, tgs, nbs, nts, lrs, xb, tb, gm


@njit(fastmath=True, nogil=True, cache=True)
def _run_chunks(ids, offsets, bounds, states, W, C, keep_prob, negs, params, counts, losses, k0, k1, dim):
    """Train chunks ``k0 .. k1 - 1`` of a block: chunk ``k`` is sequences ``[bounds[k], bounds[k + 1])``
    trained from stream ``states[k]``; its (seen, kept, pairs, error, bad id) go to ``counts[k]`` and its
    loss sum to ``losses[k]``.

    As the per-pair driver (``._pairs.run_pair_chunks``), with ``group`` at the end of ``params``,
    ``negs = (neg_cum, guide, shift)`` (:func:`_negatives`) and ``dim`` (``W.shape[1]``, a literal when
    compiled for it). Groups are prepared one ahead: slot ``q`` gets the next group's contexts and
    negatives (drawn in the documented order) and its rows are prefetched, then the pending group in slot
    ``p`` trains. An id outside ``[0, V)`` stops its chunk there.
    """
    mode, window, negative, max_context, lr0, min_lr, words_before, total_words, group = params
    neg_cum, guide, shift = negs
    n_items = W.shape[0]
    base = offsets[bounds[0]]
    neg_total = np.uint64(neg_cum[n_items - 1])
    uwindow = np.uint64(window)
    width = (dim + 15) // 16 * 16
    for chunk in range(k0, k1):
        s0 = bounds[chunk]
        s1 = bounds[chunk + 1]
        state = states[chunk]
        out = counts[chunk]
        kept, ctx_all, cx, tgs, nbs, nts, lrs, xb, tb, gm = _chunk_buffers(
            longest_sequence(offsets, s0, s1), window, group, negative, width
        )
        seen = 0
        n_kept = 0
        pairs = 0
        loss = 0.0
        p = 0
        pending = False
        stopped = False
        bad_id = 0
        out[3] = 0
        # The loop runs once more after the chunk's last sequence (or after a bad id) to train the
        # pending group: one _group call site, because each site inlines all of _group and the compile
        # time grows with the copies.
        lr = np.float32(0.0)
        sampled = False
        others = np.uint64(0)
        centre = np.int32(0)
        for s in range(s0, s1 + 1):
            flush = s == s1
            n = 1
            if not flush:
                a = offsets[s]
                b = offsets[s + 1]
                seen += b - a
                n, state, bad = subsample(ids, a, b, keep_prob, kept, state)
                if bad >= 0:
                    stopped = True
                    bad_id = ids[bad]
                    flush = True
                    n = 1
                else:
                    n_kept += n
                    if n < 2:
                        continue
                    lr = lr_at(a, base, words_before, total_words, lr0, min_lr)
                    sampled = mode == 1 and n - 1 > max_context
                    others = np.uint64(n - 1)
            for i in range(n):
                m = 1  # a flush: one turn, no new group
                if not flush:
                    centre = kept[i]
                    m = max_context
                if not (flush or sampled):
                    lo, hi, state = window_span(i, n, mode, window, uwindow, state)
                    m = 0
                    for j in range(lo, hi):
                        if j != i:
                            ctx_all[m] = kept[j]
                            m += 1
                start = 0
                while start < m:
                    nb = min(group, m - start)
                    q = 1 - p
                    if not flush:
                        for k in range(nb):
                            if sampled:
                                j, state = sampled_other(i, others, state)
                                cx[q, k] = kept[j]
                            else:
                                cx[q, k] = ctx_all[start + k]
                        nt, state = _draw_negatives(
                            centre, tgs[q], negative, neg_cum, neg_total, guide, shift, state
                        )
                        nbs[q] = nb
                        nts[q] = nt
                        lrs[q] = lr
                        _prefetch_group(W, C, cx[q], nb, tgs[q], nt)
                    if pending:
                        loss += _group(cx[p], nbs[p], tgs[p], nts[p], W, C, xb, tb, gm, lrs[p], dim)
                        pairs += nbs[p]
                    p = q
                    pending = not flush
                    start += nb
            if flush:
                break
        out[0], out[1], out[2] = seen, n_kept, pairs
        if stopped:
            stop_chunk(out, seen, n_kept, pairs, bad_id)  # and the id that stopped it
        losses[chunk] = loss


def _negatives(neg_cum: np.ndarray, n_items: int) -> tuple[np.ndarray, np.ndarray, np.uint64]:
    """The driver's ``negs``: ``neg_cum``, its guide table and the guide's shift (:func:`_make_guide`)."""
    shift = _guide_shift(n_items)
    return neg_cum, _make_guide(neg_cum, shift), np.uint64(shift)


def _width(dim: int, negs: tuple) -> tuple[int, bool]:
    """The driver's constant: ``dim``, a literal from :data:`SPECIALISE_MIN_DIM` up."""
    return dim, dim >= SPECIALISE_MIN_DIM


#: The batched kernels' driver, as :class:`._block.BlockKernel` runs it.
BATCHED_DRIVER = Driver(_run_chunks, _width, grouped=True)
#: The batched kernels, hyper-parameters whole (:class:`~likewise.kernels.params.KernelParams`).
BATCHED = BlockKernel(BATCHED_DRIVER, _negatives)
BATCHED_SERIAL = BlockKernel(BATCHED_DRIVER, _negatives, serial=True)


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
    params = KernelParams(mode, window, negative, max_context, lr0, min_lr, group)
    block = (ids, offsets, seq_start, seq_end, W, C, keep_prob, neg_cum, words_before, total_words, seed)
    return BATCHED(params, *block, n_chunks)


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
    params = KernelParams(mode, window, negative, max_context, lr0, min_lr, group)
    block = (ids, offsets, seq_start, seq_end, W, C, keep_prob, neg_cum, words_before, total_words, seed)
    return BATCHED_SERIAL(params, *block, n_chunks)
