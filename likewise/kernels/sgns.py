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
    kernel runs chunks on ``numba.get_num_threads()`` threads, each claiming the next chunk (hogwild:
    threads race on rows of ``W`` and ``C``); the serial kernel runs them in order on one thread and is
    bit-identical from run to run.

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
    (the gradient stays at its value at 6, about 0.0025, and the loss stays finite), except that a target
    whose unclipped ``f`` is past ``SETTLED = 32`` on its label's side (``f > 32`` for the centre,
    ``f < -32`` for a negative) gets no update (its loss term still counts): that constant gradient
    would otherwise grow rows that nothing pulls back (two items always bought together) to infinity
    (``._common.SETTLED``). Vector arithmetic
    is float32; the loss is summed in float64.

Counts returned: tokens in the block, tokens kept by subsampling, pairs trained, and the loss sum.
"""

from __future__ import annotations

import numpy as np

from ._block import BlockKernel

# ``NAME as NAME`` below: public names that lived here before ._common, still importable from here.
from ._common import LCG_ADD as LCG_ADD
from ._common import LCG_MUL as LCG_MUL
from ._common import MASK64 as MASK64
from ._common import (
    MAX_EXP,
    MODE_BASKET,
    MODE_SEQUENCE,
    check_corpus,
    chunk_bounds,
    chunk_states,
)
from ._common import NEG_CUM_MAX as NEG_CUM_MAX
from ._common import splitmix64 as splitmix64
from ._pairs import PAIR_DRIVER, untyped
from .params import KernelParams

__all__ = [
    "MAX_EXP",
    "MODE_BASKET",
    "MODE_SEQUENCE",
    "PER_PAIR",
    "PER_PAIR_SERIAL",
    "check_corpus",
    "chunk_bounds",
    "chunk_states",
    "train_sgns_block",
    "train_sgns_block_serial",
]

# The compiled driver and the pair step are ._pairs's, shared with the typed kernel (.typed_negatives).

#: The per-pair kernels, hyper-parameters whole (:class:`~likewise.kernels.params.KernelParams`).
PER_PAIR = BlockKernel(PAIR_DRIVER, untyped)
PER_PAIR_SERIAL = BlockKernel(PAIR_DRIVER, untyped, serial=True)


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

    Chunks run on ``numba.get_num_threads()`` threads (set with ``numba.set_num_threads``). Threads race on
    rows of ``W`` and ``C``, so results vary slightly from run to run when more than one thread runs;
    use :func:`train_sgns_block_serial` for bit-identical results. See the module docstring for the
    exact algorithm.
    """
    params = KernelParams(mode, window, negative, max_context, lr0, min_lr)
    block = (ids, offsets, seq_start, seq_end, W, C, keep_prob, neg_cum, words_before, total_words, seed)
    return PER_PAIR(params, *block, n_chunks)


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
    params = KernelParams(mode, window, negative, max_context, lr0, min_lr)
    block = (ids, offsets, seq_start, seq_end, W, C, keep_prob, neg_cum, words_before, total_words, seed)
    return PER_PAIR_SERIAL(params, *block, n_chunks)


train_sgns_block.__doc__ = (train_sgns_block.__doc__ or "") + _DOC_PARAMS
train_sgns_block_serial.__doc__ = (train_sgns_block_serial.__doc__ or "") + _DOC_PARAMS
