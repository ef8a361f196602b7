"""Where each held-out item ranks under a basket's affinity: the held-out scoring of every trained space.

Training scores leave-one-out completion of held-out baskets to choose its passes and its basket rule
(:func:`likewise.training.auto.validation_completion`): for each case, the query basket's rows of
``W · C^T`` (one row per item, every item a column) are combined into one score per candidate under
the ``product`` rule (``sum_i s[i, j] + bias[j]``) and the ``mixture`` rule (``log mean_i exp(s[i, j]) +
bias[j]``), and the hidden item's rank is the number of candidates outside the query that score
strictly higher. In NumPy each rule is a few passes over an ``n x V`` float64 copy (the mixture's
``exp`` and ``log`` included); on 1,944 cases over 68 k products that took about 14 s of a 27 s
training run. :func:`count_above` does both rules in one pass over the float32 scores, with the
same float64 arithmetic in the same order, so it returns what :func:`count_above_reference` (the
NumPy passes, the reference the tests compare against) returns.

Both take a block of cases at once: ``scores`` holds the rows of every case of the block, case ``c``
owning rows ``row_off[c]:row_off[c + 1]`` and excluding ``exclude[ex_off[c]:ex_off[c + 1]]``.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..errors import InputError

__all__ = ["count_above", "count_above_reference"]


@njit(nogil=True, cache=True, inline="always")
def _mixture(scores, a, b, j, top_j, n, bias_j):
    """Column ``j``'s mixture score, in the reference's order: ``top + log(mean exp(s - top)) + bias``."""
    acc = 0.0
    for i in range(a, b):
        acc += math.exp(np.float64(scores[i, j]) - top_j)
    return top_j + math.log(acc / n) + bias_j


@njit(nogil=True, cache=True)
def _count(scores, row_off, exclude, ex_off, hidden, bias, out, c0, c1):
    n_cols = scores.shape[1]
    total = np.empty(n_cols, dtype=np.float64)
    top = np.empty(n_cols, dtype=np.float64)
    for c in range(c0, c1):
        a, b = row_off[c], row_off[c + 1]
        # the rows' sum and max per column, row by row (contiguous reads; each column's sum runs over the
        # rows in order, as NumPy's axis-0 sum does: 0.0 + the first row is the first row)
        total[:] = 0.0
        top[:] = -np.inf
        for i in range(a, b):
            for j in range(n_cols):
                v = np.float64(scores[i, j])
                total[j] += v
                if v > top[j]:
                    top[j] = v
        n = np.float64(b - a)
        low = math.log(1.0 / n)
        h = hidden[c]
        hp = total[h] + bias[h]
        hm = _mixture(scores, a, b, h, top[h], n, bias[h])
        above_p = 0
        above_m = 0
        for j in range(n_cols):
            above_p += total[j] + bias[j] > hp
            # mean exp(s - top) lies in [1/n, 1], and every step is monotone in it, so the mixture
            # lies between these bounds as computed: the exp is needed only for columns between them
            if top[j] + low + bias[j] > hm:
                above_m += 1
            elif top[j] + 0.0 + bias[j] > hm:
                above_m += _mixture(scores, a, b, j, top[j], n, bias[j]) > hm
        for e in range(ex_off[c], ex_off[c + 1]):  # the query's own items are no candidates
            j = exclude[e]
            above_p -= total[j] + bias[j] > hp
            above_m -= _mixture(scores, a, b, j, top[j], n, bias[j]) > hm
        out[c, 0] = above_p
        out[c, 1] = above_m


def _prepared(scores, row_off, exclude, ex_off, hidden, bias) -> tuple[np.ndarray, ...]:
    """The arguments as the kernel takes them (contiguous, int64 / float64), checked."""
    scores = np.ascontiguousarray(scores)
    row_off, exclude, ex_off, hidden = (
        np.ascontiguousarray(a, dtype=np.int64) for a in (row_off, exclude, ex_off, hidden)
    )
    bias = np.ascontiguousarray(bias, dtype=np.float64)
    if scores.ndim != 2 or scores.dtype != np.float32:
        raise InputError(f"scores must be float32 [rows, V], got {scores.dtype} {scores.shape}")
    n = len(hidden)
    if len(row_off) != n + 1 or len(ex_off) != n + 1:
        raise InputError(f"row_off / ex_off have {len(row_off)} / {len(ex_off)} entries, expected {n + 1}")
    if n and (np.any(np.diff(row_off) < 1) or row_off[0] != 0 or row_off[-1] != scores.shape[0]):
        raise InputError("row_off must rise from 0 to the number of rows, at least one row per case")
    if bias.shape != (scores.shape[1],):
        raise InputError(f"bias has shape {bias.shape}, expected ({scores.shape[1]},)")
    for name, ids in (("hidden", hidden), ("exclude", exclude)):
        if len(ids) and (ids.min() < 0 or ids.max() >= scores.shape[1]):
            raise InputError(
                f"{name} runs from {ids.min()} to {ids.max()}, expected 0 .. {scores.shape[1] - 1}"
            )
    return scores, row_off, exclude, ex_off, hidden, bias


def count_above(
    scores: np.ndarray,
    row_off: np.ndarray,
    exclude: np.ndarray,
    ex_off: np.ndarray,
    hidden: np.ndarray,
    bias: np.ndarray,
    threads: int = 1,
) -> np.ndarray:
    """Candidates scoring strictly above each case's hidden item, under the product and the mixture rule.

    Parameters
    ----------
    scores : ndarray of float32, shape [rows, V]
        The cases' rows of ``W · C^T``, case ``c`` owning rows ``row_off[c]:row_off[c + 1]`` (>= 1).
    row_off, ex_off : ndarray of int64, shape [cases + 1]
        Where each case's rows and excluded ids start.
    exclude : ndarray of int64
        Each case's query items (no candidates), distinct within a case.
    hidden : ndarray of int64, shape [cases]
        Each case's hidden item (never among its excluded ones).
    bias : ndarray of float64, shape [V]
        The popularity term (:func:`likewise.space.search.affinity_bias`); ``-inf`` rules a column out.
    threads : int
        Threads sharing the cases (the result does not depend on it).

    Returns
    -------
    ndarray of int64, shape [cases, 2]
        Column 0 the product rule's count, column 1 the mixture's: a rank, 0 being the best.
    """
    from ._claim import claim_chunks

    args = _prepared(scores, row_off, exclude, ex_off, hidden, bias)
    out = np.zeros((len(args[4]), 2), dtype=np.int64)
    claim_chunks(lambda c0, c1: _count(*args, out, c0, c1), len(out), threads)
    return out


def count_above_reference(
    scores: np.ndarray,
    row_off: np.ndarray,
    exclude: np.ndarray,
    ex_off: np.ndarray,
    hidden: np.ndarray,
    bias: np.ndarray,
    threads: int = 1,
) -> np.ndarray:
    """:func:`count_above` in NumPy passes (the reference the tests compare against); ``threads`` unused."""
    scores, row_off, exclude, ex_off, hidden, bias = _prepared(scores, row_off, exclude, ex_off, hidden, bias)
    out = np.zeros((len(hidden), 2), dtype=np.int64)
    for c, h in enumerate(hidden.tolist()):
        s = np.asarray(scores[row_off[c] : row_off[c + 1]], dtype=np.float64)
        top = s.max(axis=0)
        rules = (s.sum(axis=0) + bias, top + np.log(np.exp(s - top).mean(axis=0)) + bias)
        for r, score in enumerate(rules):
            score[exclude[ex_off[c] : ex_off[c + 1]]] = -np.inf
            out[c, r] = int(np.count_nonzero(score > score[h]))
    return out
