"""Skip-gram with negative sampling (SGNS) over a packed corpus, compiled with numba.

Corpus layout: ``ids`` int32[N] holds every sequence back to back, ``offsets`` int64[S+1] cuts it, so
sequence ``s`` is ``ids[offsets[s]:offsets[s+1]]``. One call trains one block of sequences
``[seq_start, seq_end)`` and updates ``W`` (input vectors, word2vec's ``syn0``) and ``C`` (output
vectors, ``syn1neg``) in place.

The algorithm, exactly (the NumPy reference in :mod:`.reference` follows it step by step):

Chunks
    The block is cut into ``n_chunks`` contiguous runs of sequences balanced by token count
    (:func:`chunk_bounds`). Chunk ``k`` owns a 64-bit random stream whose start state is
    ``splitmix64(splitmix64(splitmix64(seed) ^ seq_start) ^ k)`` (:func:`chunk_states`). The parallel
    kernel runs chunks on numba threads (hogwild: threads race on rows of ``W`` and ``C``); the serial
    kernel runs them in order on one thread and is bit-identical from run to run.

Random draws
    Each draw advances the stream with the 64-bit LCG ``state = state * 6364136223846793005 +
    1442695040888963407 (mod 2**64)`` and uses ``x = state >> 32`` (32 bits). A uniform integer in
    ``[0, n)`` is ``(x * n) >> 32``; a uniform real in ``[0, 1)`` is ``x / 2**32``.

Per sequence, in order
    1. Subsampling: for each token ``w`` in order, if ``keep_prob[w] < 1`` draw a real ``u`` and drop
       the token when ``u >= keep_prob[w]`` (no draw when ``keep_prob[w] >= 1``). The kept tokens form
       the sequence the rest uses. A sequence with fewer than 2 kept tokens ends here.
    2. Learning rate: with ``t0 = offsets[s]``, ``p = (words_before + t0 - offsets[seq_start]) /
       total_words`` and ``lr = max(min_lr, lr0 - (lr0 - min_lr) * p)``, then rounded to float32.
    3. Pairs, for each kept position ``i`` in order:

       * sequence mode (``mode=0``): draw ``b`` in ``[0, window)``; ``r = window - b``; contexts are the
         positions ``j`` in ``[i - r, i + r]`` (clipped to the sequence), ``j != i``, ascending.
       * basket mode (``mode=1``), basket of ``n`` kept items: if ``n - 1 <= max_context`` the contexts
         are every ``j != i`` ascending; otherwise ``max_context`` times draw ``k`` in ``[0, n - 1)``
         and use ``j = k if k < i else k + 1`` (with replacement), each pair trained right after its
         draw.

One pair (centre ``c`` = item at ``i``, context ``x`` = item at ``j``)
    ``l1 = W[x]``; targets are ``C[c]`` with label 1, then ``negative`` draws ``t`` with label 0: draw
    ``r`` in ``[0, neg_cum[-1])`` and take the first ``t`` with ``neg_cum[t] > r``; a draw equal to
    ``c`` is skipped (not redrawn). For each target: ``f = clip(dot(l1, C[t]), -6, 6)``, ``z = -f``
    for label 1 and ``z = f`` for label 0, ``q = e/(1+e)`` with ``e = exp(z)`` (so ``q = 1 - sigmoid(f)``
    for label 1 and ``sigmoid(f)`` for label 0), ``g = +q * lr`` (label 1) or ``-q * lr`` (label 0);
    ``neu1e += g * C[t]``; ``C[t] += g * l1``; the pair's loss gains ``log1p(e)`` (that is,
    ``-log sigmoid(f)`` or ``-log sigmoid(-f)`` of the clipped ``f``). After all targets
    ``W[x] += neu1e``. The clip at ``MAX_EXP = 6`` is word2vec's: beyond it the sigmoid is saturated
    (the gradient stays at its value at 6, about 0.0025, and the loss stays finite). Vector arithmetic
    is float32; the loss is summed in float64.

Counts returned: tokens in the block, tokens kept by subsampling, pairs trained, and the loss sum.
"""

from __future__ import annotations

import math
import operator
from typing import NamedTuple

import numpy as np
from numba import njit, prange

from ..errors import InputError, ItemIndexError

__all__ = [
    "MAX_EXP",
    "MODE_BASKET",
    "MODE_SEQUENCE",
    "check_corpus",
    "chunk_bounds",
    "chunk_states",
    "train_sgns_block",
    "train_sgns_block_serial",
]

MODE_SEQUENCE = 0
MODE_BASKET = 1
#: Dot products are clipped to ``[-MAX_EXP, MAX_EXP]`` before the sigmoid, as in word2vec.
MAX_EXP = 6.0

MASK64 = (1 << 64) - 1
LCG_MUL = 6364136223846793005
LCG_ADD = 1442695040888963407
NEG_CUM_MAX = 2**32  # draws are 32-bit, so the table total must fit

_LCG_MUL = np.uint64(LCG_MUL)
_LCG_ADD = np.uint64(LCG_ADD)
_U32 = np.uint64(32)
_F_MAX = np.float32(MAX_EXP)
_INV_2_32 = 1.0 / 2**32


# ---------------------------------------------------------------------------------------------------
# Stream and split helpers (plain Python; shared with the reference)


def splitmix64(x: int) -> int:
    """One step of splitmix64: a bijective 64-bit mixer, used to derive per-chunk seeds."""
    x = (x + 0x9E3779B97F4A7C15) & MASK64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK64
    return x ^ (x >> 31)


def chunk_states(seed: int, seq_start: int, n_chunks: int) -> np.ndarray:
    """Start state of each chunk's random stream.

    ``state[k] = splitmix64(splitmix64(splitmix64(seed mod 2**64) ^ seq_start) ^ k)``.

    Returns
    -------
    ndarray of uint64, shape (n_chunks,)
    """
    base = splitmix64(splitmix64(int(seed) & MASK64) ^ int(seq_start))
    return np.array([splitmix64(base ^ k) for k in range(int(n_chunks))], dtype=np.uint64)


def chunk_bounds(offsets: np.ndarray, seq_start: int, seq_end: int, n_chunks: int) -> np.ndarray:
    """Cut sequences ``[seq_start, seq_end)`` into ``n_chunks`` contiguous runs of about equal tokens.

    Chunk ``k`` is ``[bounds[k], bounds[k+1])``: it starts at the first sequence whose start offset is
    ``>= offsets[seq_start] + (k * tokens) // n_chunks``. Chunks may be empty.

    Returns
    -------
    ndarray of int64, shape (n_chunks + 1,)
    """
    base = int(offsets[seq_start])
    tokens = int(offsets[seq_end]) - base
    targets = np.array([base + (k * tokens) // n_chunks for k in range(n_chunks + 1)], dtype=np.int64)
    bounds = seq_start + np.searchsorted(offsets[seq_start : seq_end + 1], targets, side="left")
    bounds = np.minimum(bounds, seq_end).astype(np.int64)
    bounds[0] = seq_start
    bounds[-1] = seq_end
    return bounds


# ---------------------------------------------------------------------------------------------------
# Validation (shared with the reference)


def _int(name: str, value: object) -> int:
    try:
        return operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        raise InputError(f"{name} == {value!r}, must be an integer") from None


def _float(name: str, value: object) -> float:
    try:
        out = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise InputError(f"{name} == {value!r}, must be a number") from None
    if not math.isfinite(out):
        raise InputError(f"{name} == {value!r}, must be finite")
    return out


def _array(name: str, arr: object, dtype: type, ndim: int, writeable: bool = False) -> np.ndarray:
    if not isinstance(arr, np.ndarray):
        raise InputError(f"{name} is a {type(arr).__name__}, must be a numpy array of {np.dtype(dtype)}")
    if arr.dtype != dtype:
        raise InputError(f"{name} has dtype {arr.dtype}, must be {np.dtype(dtype)}")
    if arr.ndim != ndim:
        raise InputError(f"{name} has shape {arr.shape}, must be {ndim}-D")
    if not arr.flags.c_contiguous:
        raise InputError(f"{name} is not C-contiguous; pass np.ascontiguousarray({name})")
    if writeable and not arr.flags.writeable:
        raise InputError(f"{name} is read-only; it is updated in place and must be writeable")
    return arr


def check_corpus(ids: np.ndarray, offsets: np.ndarray, n_items: int) -> None:
    """Check a packed corpus once, in O(N): layout, dtypes and every id in ``[0, n_items)``.

    Parameters
    ----------
    ids : ndarray of int32, shape (N,)
    offsets : ndarray of int64, shape (S + 1,)
        Nondecreasing, ``offsets[0] >= 0`` and ``offsets[-1] <= N``.
    n_items : int
        Number of rows of the embedding tables (V).

    Raises
    ------
    InputError
        Bad dtypes, shapes or offsets.
    ItemIndexError
        The first id (in corpus order) outside ``[0, n_items)``.
    """
    _array("ids", ids, np.int32, 1)
    _array("offsets", offsets, np.int64, 1)
    n_items = _int("n_items", n_items)
    if n_items < 1:
        raise InputError(f"n_items == {n_items}, must be >= 1")
    _check_offsets(offsets, 0, len(offsets) - 1, len(ids))
    bad = (ids < 0) | (ids >= n_items)
    if bad.any():
        raise ItemIndexError(int(ids[int(np.argmax(bad))]), n_items)


def _check_offsets(offsets: np.ndarray, seq_start: int, seq_end: int, n_tokens: int) -> None:
    if len(offsets) < 1:
        raise InputError("offsets is empty, must have S + 1 >= 1 entries")
    block = offsets[seq_start : seq_end + 1]
    if block[0] < 0:
        raise InputError(f"offsets[{seq_start}] == {int(block[0])}, must be >= 0")
    if block[-1] > n_tokens:
        raise InputError(f"offsets[{seq_end}] == {int(block[-1])} is past the end of ids (length {n_tokens})")
    steps = np.diff(block)
    if len(steps) and steps.min() < 0:
        s = seq_start + int(np.argmax(steps < 0))
        raise InputError(
            f"offsets must be nondecreasing, but offsets[{s + 1}] == {int(offsets[s + 1])} < "
            f"offsets[{s}] == {int(offsets[s])}"
        )


class _Block(NamedTuple):
    seq_start: int
    seq_end: int
    mode: int
    window: int
    negative: int
    max_context: int
    lr0: float
    min_lr: float
    words_before: int
    total_words: int
    seed: int
    n_chunks: int

    def kernel_scalars(self) -> tuple:
        """The scalars the compiled drivers take, in their order."""
        return (
            self.mode,
            self.window,
            self.negative,
            self.max_context,
            self.lr0,
            self.min_lr,
            float(self.words_before),
            float(self.total_words),
        )


def _validate(
    ids,
    offsets,
    seq_start,
    seq_end,
    W,
    C,
    keep_prob,
    neg_cum,
    mode,
    window,
    negative,
    max_context,
    lr0,
    min_lr,
    words_before,
    total_words,
    seed,
    n_chunks,
):
    """Check every argument cheaply (O(block sequences), not O(N)); return the scalars as Python numbers."""
    _array("ids", ids, np.int32, 1)
    _array("offsets", offsets, np.int64, 1)
    _array("W", W, np.float32, 2, writeable=True)
    _array("C", C, np.float32, 2, writeable=True)
    if W.shape != C.shape:
        raise InputError(f"W has shape {W.shape} but C has shape {C.shape}; they must match")
    n_items, dim = W.shape
    if n_items < 1 or dim < 1:
        raise InputError(f"W has shape {W.shape}, must have at least one row and one column")
    _array("keep_prob", keep_prob, np.float32, 1)
    _array("neg_cum", neg_cum, np.int64, 1)
    for name, arr in (("keep_prob", keep_prob), ("neg_cum", neg_cum)):
        if len(arr) != n_items:
            raise InputError(f"{name} has {len(arr)} entries, must have one per row of W ({n_items})")
    total = int(neg_cum[-1])
    if not 1 <= total <= NEG_CUM_MAX:
        raise InputError(f"neg_cum[-1] == {total}, must be in [1, 2**32] (build the table with make_neg_cum)")
    n_seq = len(offsets) - 1
    seq_start = _int("seq_start", seq_start)
    seq_end = _int("seq_end", seq_end)
    if n_seq < 0:
        raise InputError("offsets is empty, must have S + 1 >= 1 entries")
    if not 0 <= seq_start <= n_seq:
        raise InputError(f"seq_start == {seq_start}, must be in [0, {n_seq}] (len(offsets) - 1)")
    if not seq_start <= seq_end <= n_seq:
        raise InputError(
            f"seq_end == {seq_end}, must be in [seq_start, len(offsets) - 1] = [{seq_start}, {n_seq}]"
        )
    _check_offsets(offsets, seq_start, seq_end, len(ids))
    mode = _int("mode", mode)
    if mode not in (MODE_SEQUENCE, MODE_BASKET):
        raise InputError(f"mode == {mode}, must be 0 (sequence) or 1 (basket)")
    window = _int("window", window)
    if window < 1:
        raise InputError(f"window == {window}, must be >= 1")
    negative = _int("negative", negative)
    if negative < 0:
        raise InputError(f"negative == {negative}, must be >= 0")
    max_context = _int("max_context", max_context)
    if max_context < 1:
        raise InputError(f"max_context == {max_context}, must be >= 1")
    lr0 = _float("lr0", lr0)
    if lr0 <= 0:
        raise InputError(f"lr0 == {lr0!r}, must be > 0")
    min_lr = _float("min_lr", min_lr)
    if not 0 <= min_lr <= lr0:
        raise InputError(f"min_lr == {min_lr!r}, must be in [0, lr0] = [0, {lr0!r}]")
    words_before = _int("words_before", words_before)
    if words_before < 0:
        raise InputError(f"words_before == {words_before}, must be >= 0")
    total_words = _int("total_words", total_words)
    if total_words < 1:
        raise InputError(f"total_words == {total_words}, must be >= 1")
    seed = _int("seed", seed)
    n_chunks = _int("n_chunks", n_chunks)
    if n_chunks < 1:
        raise InputError(f"n_chunks == {n_chunks}, must be >= 1")
    return _Block(
        seq_start,
        seq_end,
        mode,
        window,
        negative,
        max_context,
        lr0,
        min_lr,
        words_before,
        total_words,
        seed,
        n_chunks,
    )


# ---------------------------------------------------------------------------------------------------
# Compiled core


@njit(fastmath=True, nogil=True, cache=True, inline="always")
def _next32(state):
    state = state * _LCG_MUL + _LCG_ADD
    return state, state >> _U32


@njit(nogil=True, cache=True, inline="always")
def _longest(offsets, s0, s1):
    """Length of the longest sequence in ``[s0, s1)`` (sizes the scratch buffers)."""
    longest = 0
    for s in range(s0, s1):
        longest = max(longest, offsets[s + 1] - offsets[s])
    return longest


@njit(nogil=True, cache=True, inline="always")
def _lr_at(a, base, words_before, total_words, lr0, min_lr):
    """Step 2 of the module docstring: the float32 learning rate of the sequence starting at ``a``."""
    progress = (words_before + (a - base)) / total_words
    return np.float32(max(min_lr, lr0 - (lr0 - min_lr) * progress))


@njit(nogil=True, cache=True, inline="always")
def _stop(out, seen, n_kept, pairs, bad_id):
    """Record the counts so far and the id outside ``[0, V)`` that stopped the chunk."""
    out[0] = seen
    out[1] = n_kept
    out[2] = pairs
    out[3] = 1
    out[4] = bad_id


@njit(fastmath=True, nogil=True, cache=True, inline="always")
def _subsample(ids, a, b, keep_prob, kept, state):
    """Step 1 of the module docstring for ``ids[a:b]``: the kept ids go to ``kept[:n]``.

    Returns ``(n, state, bad)``: ``bad`` is the position in ``ids`` of the first id outside
    ``[0, V)`` (training must stop there), or -1.
    """
    n_items = keep_prob.shape[0]
    n = 0
    for t in range(a, b):
        w = ids[t]
        if w < 0 or w >= n_items:
            return n, state, t
        p = keep_prob[w]
        if p < np.float32(1.0):
            state, x = _next32(state)
            if np.float64(x) * _INV_2_32 >= np.float64(p):
                continue
        kept[n] = w
        n += 1
    return n, state, -1


@njit(fastmath=True, nogil=True, cache=True, inline="always")
def _pair(centre, ctx, W, C, neg_cum, neg_total, negative, lr, neu1e, state):
    """Train one (centre, context) pair; return the advanced stream state and the pair's loss."""
    dim = W.shape[1]
    for d in range(dim):
        neu1e[d] = np.float32(0.0)
    loss = 0.0
    n_targets = C.shape[0]
    for k in range(negative + 1):
        if k == 0:
            target = centre
        else:
            state, x = _next32(state)
            r = np.int64((x * neg_total) >> _U32)
            lo = 0
            hi = n_targets
            while lo < hi:  # first index with neg_cum > r
                mid = (lo + hi) >> 1
                if neg_cum[mid] <= r:
                    lo = mid + 1
                else:
                    hi = mid
            target = lo
            if target == centre:
                continue
        f = np.float32(0.0)
        for d in range(dim):
            f += W[ctx, d] * C[target, d]
        if f > _F_MAX:
            f = _F_MAX
        elif f < -_F_MAX:
            f = -_F_MAX
        z = -f if k == 0 else f
        e = np.float32(math.exp(z))
        q = e / (np.float32(1.0) + e)
        g = q * lr if k == 0 else -q * lr
        loss += math.log1p(e)
        for d in range(dim):
            c = C[target, d]
            neu1e[d] += g * c
            C[target, d] = c + g * W[ctx, d]
    for d in range(dim):
        W[ctx, d] += neu1e[d]
    return state, loss


@njit(fastmath=True, nogil=True, cache=True)
def _train_chunk(
    ids,
    offsets,
    s0,
    s1,
    W,
    C,
    keep_prob,
    neg_cum,
    mode,
    window,
    negative,
    max_context,
    lr0,
    min_lr,
    words_before,
    total_words,
    base,
    state,
    out,
):
    """Train sequences ``[s0, s1)`` from stream ``state``; write (seen, kept, pairs, error, bad id) to out.

    Returns the loss sum. ``out[3]`` is 1 when an id outside ``[0, V)`` stopped training, and ``out[4]``
    is that id.
    """
    n_items = W.shape[0]
    longest = _longest(offsets, s0, s1)
    kept = np.empty(longest, dtype=np.int32)
    neu1e = np.empty(W.shape[1], dtype=np.float32)
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
        n, state, bad = _subsample(ids, a, b, keep_prob, kept, state)
        if bad >= 0:
            _stop(out, seen, n_kept, pairs, ids[bad])
            return loss
        n_kept += n
        if n < 2:
            continue
        lr = _lr_at(a, base, words_before, total_words, lr0, min_lr)
        if mode == 0:
            for i in range(n):
                state, x = _next32(state)
                reach = window - np.int64((x * uwindow) >> _U32)
                lo = max(0, i - reach)
                hi = min(n, i + reach + 1)
                for j in range(lo, hi):
                    if j != i:
                        state, pl = _pair(
                            kept[i], kept[j], W, C, neg_cum, neg_total, negative, lr, neu1e, state
                        )
                        loss += pl
                        pairs += 1
        elif n - 1 <= max_context:
            for i in range(n):
                for j in range(n):
                    if j != i:
                        state, pl = _pair(
                            kept[i], kept[j], W, C, neg_cum, neg_total, negative, lr, neu1e, state
                        )
                        loss += pl
                        pairs += 1
        else:
            others = np.uint64(n - 1)
            for i in range(n):
                for _ in range(max_context):
                    state, x = _next32(state)
                    j = np.int64((x * others) >> _U32)
                    if j >= i:
                        j += 1
                    state, pl = _pair(kept[i], kept[j], W, C, neg_cum, neg_total, negative, lr, neu1e, state)
                    loss += pl
                    pairs += 1
    out[0] = seen
    out[1] = n_kept
    out[2] = pairs
    return loss


# The two drivers differ only in ``prange`` vs ``range``; they are separate functions (not one function
# compiled twice) because numba's on-disk cache keys entries by function, not by compile flags.


@njit(parallel=True, fastmath=True, nogil=True, cache=True)
def _run_parallel(
    ids,
    offsets,
    bounds,
    states,
    W,
    C,
    keep_prob,
    neg_cum,
    mode,
    window,
    negative,
    max_context,
    lr0,
    min_lr,
    words_before,
    total_words,
    counts,
    losses,
):
    base = offsets[bounds[0]]
    for k in prange(len(states)):
        losses[k] = _train_chunk(
            ids,
            offsets,
            bounds[k],
            bounds[k + 1],
            W,
            C,
            keep_prob,
            neg_cum,
            mode,
            window,
            negative,
            max_context,
            lr0,
            min_lr,
            words_before,
            total_words,
            base,
            states[k],
            counts[k],
        )


@njit(fastmath=True, nogil=True, cache=True)
def _run_serial(
    ids,
    offsets,
    bounds,
    states,
    W,
    C,
    keep_prob,
    neg_cum,
    mode,
    window,
    negative,
    max_context,
    lr0,
    min_lr,
    words_before,
    total_words,
    counts,
    losses,
):
    base = offsets[bounds[0]]
    for k in range(len(states)):
        losses[k] = _train_chunk(
            ids,
            offsets,
            bounds[k],
            bounds[k + 1],
            W,
            C,
            keep_prob,
            neg_cum,
            mode,
            window,
            negative,
            max_context,
            lr0,
            min_lr,
            words_before,
            total_words,
            base,
            states[k],
            counts[k],
        )


def _train(runner, args) -> tuple[int, int, int, float]:
    ids, offsets, _, _, W, C, keep_prob, neg_cum = args[:8]
    p = _validate(*args)
    if p.seq_start == p.seq_end:
        return 0, 0, 0, 0.0
    bounds = chunk_bounds(offsets, p.seq_start, p.seq_end, p.n_chunks)
    states = chunk_states(p.seed, p.seq_start, p.n_chunks)
    counts = np.zeros((p.n_chunks, 5), dtype=np.int64)
    losses = np.zeros(p.n_chunks, dtype=np.float64)
    runner(ids, offsets, bounds, states, W, C, keep_prob, neg_cum, *p.kernel_scalars(), counts, losses)
    failed = np.flatnonzero(counts[:, 3])
    if len(failed):
        raise ItemIndexError(int(counts[failed[0], 4]), W.shape[0])
    seen, kept, pairs = (int(v) for v in counts[:, :3].sum(axis=0))
    return seen, kept, pairs, float(sum(losses.tolist()))  # chunk order: deterministic


_DOC_PARAMS = """
    Parameters
    ----------
    ids : ndarray of int32, shape (N,)
        All sequences back to back; every id in the block must be in ``[0, V)`` (checked as the
        kernel reads it; :func:`check_corpus` checks a whole corpus up front).
    offsets : ndarray of int64, shape (S + 1,)
        Sequence ``s`` is ``ids[offsets[s]:offsets[s+1]]``.
    seq_start, seq_end : int
        Train sequences ``[seq_start, seq_end)``; ``0 <= seq_start <= seq_end <= S``.
    W, C : ndarray of float32, shape (V, D), C-contiguous
        Input and output vectors, updated in place.
    keep_prob : ndarray of float32, shape (V,)
        Subsampling keep probability of each item (:func:`make_keep_prob`).
    neg_cum : ndarray of int64, shape (V,)
        Nondecreasing cumulative negative-sampling weights, ``1 <= neg_cum[-1] <= 2**32``
        (:func:`make_neg_cum`).
    mode : int
        0 = sequence (ordered, shrinking window), 1 = basket (unordered, whole basket is context).
    window : int
        Largest window radius in sequence mode, >= 1.
    negative : int
        Negatives drawn per pair, >= 0.
    max_context : int
        Basket mode: contexts per item when the basket has more than ``max_context + 1`` items, >= 1.
    lr0, min_lr : float
        Learning rate at the start and the end of the whole run; ``0 <= min_lr <= lr0``, ``lr0 > 0``.
    words_before : int
        Tokens of the whole run trained before this block (for the learning-rate schedule).
    total_words : int
        Tokens in the whole run (all epochs), >= 1.
    seed : int
        Seed of the block's random streams (reduced modulo 2**64).
    n_chunks : int
        Number of chunks (units of parallel work, each with its own random stream), >= 1.

    Returns
    -------
    items_seen : int
        Tokens in the block.
    items_kept : int
        Tokens left after subsampling.
    pairs : int
        (centre, context) pairs trained.
    loss_sum : float
        Summed SGNS loss of those pairs.

    Raises
    ------
    InputError
        A bad argument; the message names it, its value and what is allowed.
    ItemIndexError
        An id in the block is outside ``[0, V)``. Sequences before it may already have been trained.
"""


def train_sgns_block(
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
    lr0: float,
    min_lr: float,
    words_before: int,
    total_words: int,
    seed: int,
    n_chunks: int,
) -> tuple[int, int, int, float]:
    """Train SGNS on a block of sequences with chunks running in parallel (hogwild).

    Chunks run on numba's threads (set their number with ``numba.set_num_threads``). Threads race on
    rows of ``W`` and ``C``, so results vary slightly from run to run when more than one thread runs;
    use :func:`train_sgns_block_serial` for bit-identical results. See the module docstring for the
    exact algorithm.
    """
    return _train(
        _run_parallel,
        (
            ids,
            offsets,
            seq_start,
            seq_end,
            W,
            C,
            keep_prob,
            neg_cum,
            mode,
            window,
            negative,
            max_context,
            lr0,
            min_lr,
            words_before,
            total_words,
            seed,
            n_chunks,
        ),
    )


def train_sgns_block_serial(
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
    lr0: float,
    min_lr: float,
    words_before: int,
    total_words: int,
    seed: int,
    n_chunks: int,
) -> tuple[int, int, int, float]:
    """Train SGNS on a block of sequences on one thread, chunks in order: bit-identical across runs.

    Same algorithm, chunks and random streams as :func:`train_sgns_block`; with one numba thread the
    two give the same result.
    """
    return _train(
        _run_serial,
        (
            ids,
            offsets,
            seq_start,
            seq_end,
            W,
            C,
            keep_prob,
            neg_cum,
            mode,
            window,
            negative,
            max_context,
            lr0,
            min_lr,
            words_before,
            total_words,
            seed,
            n_chunks,
        ),
    )


train_sgns_block.__doc__ = (train_sgns_block.__doc__ or "") + _DOC_PARAMS
train_sgns_block_serial.__doc__ = (train_sgns_block_serial.__doc__ or "") + _DOC_PARAMS
