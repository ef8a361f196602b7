"""SGNS with typed negatives: each pair's negatives are drawn from the type of the item it predicts.

In a typed space (products, campaigns, articles, attribute tokens in one vocabulary) untyped negatives
are mostly products, so a campaign's vector is pushed away from products more than from other
campaigns: it learns *that it is a campaign* before it learns *which* campaign it is. Drawing the
negatives of a pair from the predicted item's own type (as Airbnb's listing embeddings draw negatives
from the same market) asks every vector to tell its item apart from items of its kind.

The algorithm is the classic kernel's (:mod:`.sgns`, word2vec's per-pair updates, exact sigmoid), step
for step and draw for draw, with one change: a negative of the pair (centre ``c``, context ``x``) is
drawn from the table of ``c``'s type. The types are given as four arrays:

``item_type`` int32 [V]
    The type of each row.
``type_start`` int64 [T + 1]
    Type ``t`` owns positions ``type_start[t]:type_start[t + 1]`` of the two arrays below.
``type_order`` int32 [V]
    Row ids grouped by type (ascending within a type).
``type_cum`` int64 [V]
    Cumulative negative-sampling weights, restarting at each type: a draw for type ``t`` takes ``r``
    uniform in ``[0, type_cum[type_start[t + 1] - 1])`` (``(x * total) >> 32``) and the first position
    ``p`` of the type with ``type_cum[p] > r``; the negative is ``type_order[p]``. A draw equal to ``c``
    is skipped, not redrawn (a type of one item trains no negative).

:func:`make_typed_tables` builds them from the counts and the ``ns_exponent`` (each type's weights
scaled so its total is ``NEG_CUM_DOMAIN``, as :func:`likewise.kernels.make_neg_cum` does for all).
The NumPy twin is :func:`likewise.kernels.reference.train_sgns_typed_block_reference`.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

import numba
import numpy as np
from numba import njit

from ..errors import InputError
from ._claim import claim_chunks
from ._common import (
    F_MAX,
    F_SETTLED,
    U32,
    chunk_bounds,
    chunk_states,
    longest_sequence,
    lr_at,
    next32,
    read_only,
    stop_chunk,
    subsample,
    validate_inputs,
)
from .tables import make_neg_cum

__all__ = [
    "check_typed_tables",
    "make_typed_tables",
    "train_sgns_typed_block",
    "train_sgns_typed_block_serial",
    "typed_kernel",
]


def make_typed_tables(
    counts: np.ndarray, item_type: np.ndarray, ns_exponent: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The four arrays of the module docstring: ``(item_type, type_start, type_order, type_cum)``.

    Parameters
    ----------
    counts : ndarray of int, shape [V]
        Occurrences of each row.
    item_type : ndarray of int, shape [V]
        Type code of each row, ``0 <= code``.
    ns_exponent : float
        Negatives are drawn ``∝ count ** ns_exponent`` within the type.
    """
    item_type = np.ascontiguousarray(item_type, dtype=np.int32)
    counts = np.asarray(counts, dtype=np.int64)
    if item_type.shape != counts.shape:
        raise InputError(f"item_type has shape {item_type.shape}, counts has {counts.shape}; one per row")
    if len(item_type) and item_type.min() < 0:
        raise InputError("type codes must be >= 0")
    n_types = int(item_type.max(initial=-1)) + 1
    order = np.argsort(item_type, kind="stable").astype(np.int32)
    start = np.zeros(n_types + 1, dtype=np.int64)
    np.cumsum(np.bincount(item_type, minlength=n_types), out=start[1:])
    cum = np.zeros(len(counts), dtype=np.int64)
    for t in range(n_types):
        a, b = int(start[t]), int(start[t + 1])
        if b > a:
            cum[a:b] = make_neg_cum(np.maximum(counts[order[a:b]], 1), ns_exponent)
    return item_type, start, order, cum


def check_typed_tables(
    item_type: np.ndarray, type_start: np.ndarray, type_order: np.ndarray, type_cum: np.ndarray, n_items: int
) -> None:
    """Raise :class:`InputError` unless the typed tables fit a table of ``n_items`` rows."""
    for name, arr, dtype in (
        ("item_type", item_type, np.int32),
        ("type_start", type_start, np.int64),
        ("type_order", type_order, np.int32),
        ("type_cum", type_cum, np.int64),
    ):
        if (
            not isinstance(arr, np.ndarray)
            or arr.dtype != dtype
            or arr.ndim != 1
            or not arr.flags.c_contiguous
        ):
            raise InputError(f"{name} must be a contiguous 1-D {np.dtype(dtype)} array")
    if len(item_type) != n_items or len(type_order) != n_items or len(type_cum) != n_items:
        raise InputError(f"item_type, type_order and type_cum must have one entry per row ({n_items})")
    n_types = len(type_start) - 1
    if n_types < 1 or type_start[0] != 0 or type_start[-1] != n_items or np.any(np.diff(type_start) < 0):
        raise InputError(f"type_start must rise from 0 to {n_items} (the rows)")
    if n_items and (item_type.min() < 0 or item_type.max() >= n_types):
        raise InputError(f"item_type must hold codes in [0, {n_types})")
    ends = type_start[1:][np.diff(type_start) > 0] - 1
    if len(ends) and (type_cum[ends].min() < 1 or type_cum[ends].max() > 2**32):
        raise InputError("each type's last type_cum entry must be in [1, 2**32] (use make_typed_tables)")


@njit(fastmath=True, nogil=True, cache=True, inline="always")
def _typed_pair(centre, ctx, W, C, tables, negative, lr, neu1e, state):
    """One (centre, context) pair with negatives of the centre's type; returns (state, loss)."""
    item_type, type_start, type_order, type_cum = tables
    dim = W.shape[1]
    for d in range(dim):
        neu1e[d] = np.float32(0.0)
    loss = 0.0
    t = item_type[centre]
    a = type_start[t]
    b = type_start[t + 1]
    total = np.uint64(type_cum[b - 1])
    for k in range(negative + 1):
        if k == 0:
            target = centre
        else:
            state, x = next32(state)
            r = np.int64((x * total) >> U32)
            lo = a
            hi = b
            while lo < hi:  # first position of the type with type_cum > r
                mid = (lo + hi) >> 1
                if type_cum[mid] <= r:
                    lo = mid + 1
                else:
                    hi = mid
            target = type_order[lo]
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


# One compiled driver, as in .sgns: the parallel kernel runs it on threads claiming chunks, the serial
# one on the chunks in order; the chunk loop is its body and everything it calls is inlined.


@njit(fastmath=True, nogil=True, cache=True)
def _run_chunks(ids, offsets, bounds, states, W, C, keep_prob, tables, params, counts, losses, k0, k1):
    """As :mod:`.sgns`'s driver (chunks ``k0 .. k1 - 1``), with :func:`_typed_pair`."""
    mode, window, negative, max_context, lr0, min_lr, words_before, total_words = params
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
                # One _pair call site for all three ways of choosing contexts: each site inlines all of
                # _typed_pair, and the compile time grows with the copies.
                lo = 0
                hi = n
                if mode == 0:
                    state, x = next32(state)
                    reach = window - np.int64((x * uwindow) >> U32)
                    lo = max(0, i - reach)
                    hi = min(n, i + reach + 1)
                j = lo - 1
                for _ in range(max_context if sampled else hi - lo - 1):
                    if sampled:
                        state, x = next32(state)
                        j = np.int64((x * others) >> U32)
                        if j >= i:
                            j += 1
                    else:
                        j += 1
                        if j == i:
                            j += 1
                    state, pl = _typed_pair(kept[i], kept[j], W, C, tables, negative, lr, neu1e, state)
                    loss += pl
                    pairs += 1
        if not stopped:
            out[0] = seen
            out[1] = n_kept
            out[2] = pairs
        losses[chunk] = loss


def _run(args: tuple, tables: tuple, threads: int) -> tuple[int, int, int, float]:
    from ..errors import ItemIndexError

    ids, offsets, _, _, W, C, keep_prob, _neg_cum = args[:8]
    p = validate_inputs(*args)
    check_typed_tables(*tables, W.shape[0])
    if p.seq_start == p.seq_end:
        return 0, 0, 0, 0.0
    bounds = chunk_bounds(offsets, p.seq_start, p.seq_end, p.n_chunks)
    states = chunk_states(p.seed, p.seq_start, p.n_chunks)
    counts = np.zeros((p.n_chunks, 5), dtype=np.int64)
    losses = np.zeros(p.n_chunks, dtype=np.float64)
    ids, offsets = read_only(ids), read_only(offsets)  # one compiled type for maps and copies (run_block)
    run = (ids, offsets, bounds, states, W, C, keep_prob, tables, p.kernel_scalars(), counts, losses)
    claim_chunks(lambda k0, k1: _run_chunks(*run, k0, k1), p.n_chunks, threads)
    failed = np.flatnonzero(counts[:, 3])
    if len(failed):
        raise ItemIndexError(int(counts[failed[0], 4]), W.shape[0])
    seen, kept, pairs = (int(v) for v in counts[:, :3].sum(axis=0))
    return seen, kept, pairs, float(sum(losses.tolist()))


_SIGNATURE = """
    Parameters are those of :func:`likewise.kernels.train_sgns_block` (``neg_cum`` is checked but the
    negatives come from the typed tables), then ``item_type``, ``type_start``, ``type_order`` and
    ``type_cum`` (the module docstring; :func:`make_typed_tables` builds them). Returns tokens seen,
    tokens kept, pairs trained and the loss sum.
"""


def train_sgns_typed_block(
    ids, offsets, seq_start, seq_end, W, C, keep_prob, neg_cum, mode, window, negative, max_context,
    lr0, min_lr, words_before, total_words, seed, n_chunks, item_type, type_start, type_order, type_cum,
) -> tuple[int, int, int, float]:  # fmt: skip
    """Train SGNS with typed negatives on a block; chunks in parallel (hogwild)."""
    args = (ids, offsets, seq_start, seq_end, W, C, keep_prob, neg_cum, mode, window, negative, max_context)
    rest = (lr0, min_lr, words_before, total_words, seed, n_chunks)
    tables = (item_type, type_start, type_order, type_cum)
    return _run(args + rest, tables, numba.get_num_threads())


def train_sgns_typed_block_serial(
    ids, offsets, seq_start, seq_end, W, C, keep_prob, neg_cum, mode, window, negative, max_context,
    lr0, min_lr, words_before, total_words, seed, n_chunks, item_type, type_start, type_order, type_cum,
) -> tuple[int, int, int, float]:  # fmt: skip
    """:func:`train_sgns_typed_block` on one thread, chunks in order: bit-identical across runs."""
    args = (ids, offsets, seq_start, seq_end, W, C, keep_prob, neg_cum, mode, window, negative, max_context)
    rest = (lr0, min_lr, words_before, total_words, seed, n_chunks)
    return _run(args + rest, (item_type, type_start, type_order, type_cum), 1)


train_sgns_typed_block.__doc__ = (train_sgns_typed_block.__doc__ or "") + _SIGNATURE
train_sgns_typed_block_serial.__doc__ = (train_sgns_typed_block_serial.__doc__ or "") + _SIGNATURE


def typed_kernel(
    counts: np.ndarray, item_type: np.ndarray, ns_exponent: float, *, serial: bool
) -> Callable[..., tuple[int, int, int, float]]:
    """A block kernel with the classic kernel's signature whose negatives are typed (tables bound)."""
    tables = make_typed_tables(counts, item_type, ns_exponent)
    fn = train_sgns_typed_block_serial if serial else train_sgns_typed_block
    return functools.partial(
        fn, item_type=tables[0], type_start=tables[1], type_order=tables[2], type_cum=tables[3]
    )
