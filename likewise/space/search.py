"""Pure NumPy search: unit rows, top-k with a deterministic tie-break, cosine and affinity scores.

Everything here takes arrays and scalars and returns arrays: no vocabulary, no model object, no I/O.
:class:`~likewise.space.embeddings.Embeddings`, the index, the baselines, the evaluation and the retail
queries all rank through these functions, so one rule orders every result in the package: best score
first, equal scores by ascending id.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np

from .._arrays import unique

__all__ = [
    "BASKET_RULES",
    "BLOCK_ELEMS",
    "BasketRule",
    "COSMUL_EPS",
    "affinity_bias",
    "basket_affinity",
    "basket_affinity_top_k",
    "centred_unit_rows",
    "evidence_weights",
    "normalise_rows",
    "row_norms",
    "select_top_k",
    "top_k_excluding",
    "top_k_search",
]

BLOCK_ELEMS = 1 << 23  # scores computed per block: 8M float32 = 32 MiB, whatever the batch size
COSMUL_EPS = 1e-6  # gensim's most_similar_cosmul epsilon


def normalise_rows(x: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length, as a new float32 array; all-zero rows stay zero.

    Norms and the division are done in float64 (tiny rows would underflow in float32), a block of rows
    at a time so the float64 temporary stays small whatever the table size.
    """
    out = np.empty(x.shape, dtype=np.float32)
    step = _rows_per_block(x)
    for start in range(0, x.shape[0], step):
        block = np.asarray(x[start : start + step], dtype=np.float64)
        norms = row_norms(block)
        norms[norms == 0] = 1.0
        out[start : start + step] = block / norms[:, None]
    return out


def centred_unit_rows(x: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Unit rows of ``x`` [V, D] less their ``counts``-weighted mean, float32 (all-zero rows stay zero).

    Skip-gram vectors share a common direction that follows popularity (each row is pulled towards the
    contexts it was trained against, and frequent contexts dominate), so raw cosines make rarely seen
    items look like everything frequent. Removing the occurrence-weighted mean leaves what sets each
    item apart. The mean is taken in float64 a block of rows at a time.
    """
    w = np.maximum(np.asarray(counts, dtype=np.float64), 0.0)
    total = w.sum()
    centre = np.zeros(x.shape[1], dtype=np.float64)
    step = _rows_per_block(x)
    for start in range(0, x.shape[0], step):
        centre += w[start : start + step] @ np.asarray(x[start : start + step], dtype=np.float64)
    centre /= total if total > 0 else 1.0
    out = np.empty(x.shape, dtype=np.float32)
    for start in range(0, x.shape[0], step):
        block = np.asarray(x[start : start + step], dtype=np.float64) - centre
        norms = np.sqrt(np.einsum("ij,ij->i", block, block))
        norms[norms == 0] = 1.0
        out[start : start + step] = block / norms[:, None]
    return out


def evidence_weights(counts: np.ndarray, shrink: float) -> np.ndarray:
    """``counts / (counts + shrink)``, float32 [V]: how far a similarity is trusted, by its evidence.

    A similarity measured on ``n`` baskets is shrunk towards 0 by ``n / (n + shrink)`` (the shrinkage of
    item-item neighbourhood models): an item seen in 2 baskets keeps 2 / 22 of its cosine at
    ``shrink=20``, one seen in 2,000 keeps 99 %. ``shrink=0`` trusts every cosine fully.
    """
    n = np.maximum(np.asarray(counts, dtype=np.float64), 0.0)
    if shrink <= 0:
        return np.ones(len(n), dtype=np.float32)
    return (n / (n + float(shrink))).astype(np.float32)


def row_norms(x: np.ndarray) -> np.ndarray:
    """The L2 norm of each row of ``x`` [n, D], float64 [n], computed in float64 a block of rows at a time."""
    out = np.empty(x.shape[0], dtype=np.float64)
    step = _rows_per_block(x)
    for start in range(0, x.shape[0], step):
        block = np.asarray(x[start : start + step], dtype=np.float64)
        out[start : start + step] = np.sqrt(np.einsum("ij,ij->i", block, block))
    return out


def _rows_per_block(x: np.ndarray) -> int:
    """Rows of ``x`` whose float64 copy takes about 8 MiB (a bounded temporary whatever the table size)."""
    return max(1, (1 << 20) // max(1, x.shape[1]))


def select_top_k(scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Columns of the ``k`` largest entries of each row of ``scores`` [n, C], best first, ties by column."""
    n, n_cols = scores.shape
    if k >= n_cols:
        sel = np.broadcast_to(np.arange(n_cols, dtype=np.int64), (n, n_cols)).copy()
    else:
        sel = np.argpartition(scores, n_cols - k, axis=1)[:, n_cols - k :].astype(np.int64)
        # argpartition picks arbitrarily among entries equal to the k-th largest value; redo those rows
        # so that the lowest columns win, which makes results independent of the partition algorithm.
        thresh = np.take_along_axis(scores, sel, axis=1).min(axis=1)
        n_ge = np.count_nonzero(scores >= thresh[:, None], axis=1)
        for r in np.flatnonzero(n_ge > k):
            row, t = scores[r], thresh[r]
            above = np.flatnonzero(row > t)
            tied = np.flatnonzero(row == t)[: k - len(above)]
            sel[r] = np.concatenate([above, tied])
    vals = np.take_along_axis(scores, sel, axis=1)
    order = np.lexsort((sel, -vals), axis=-1)
    return np.take_along_axis(sel, order, axis=1), np.take_along_axis(vals, order, axis=1)


def top_k_search(
    table: np.ndarray,
    queries: np.ndarray,
    k: int,
    ex_rows: np.ndarray,
    ex_cols: np.ndarray,
    method: Literal["dot", "cosmul"] = "dot",
    block_elems: int = BLOCK_ELEMS,
    n_negative: int = 1,
    col_weights: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Top-``k`` rows of ``table`` for each query, best first, ties broken by lower row.

    Parameters
    ----------
    table : ndarray of float32, shape [C, D]
        Candidate vectors (unit-normalised for cosine scores).
    queries : ndarray of float32, shape [n, D] (``method="dot"``) or [n, T, D] (``method="cosmul"``)
        Query vectors. For ``"cosmul"`` (3CosMul, as gensim's ``most_similar_cosmul``) the first
        ``n_negative`` of the T rows are the negative terms and the others the positive ones; the score
        is ``prod(pos(positive)) / (prod(pos(negative)) + 1e-6)`` with ``pos(x) = (1 + t·x) / 2`` (an
        empty product is 1). An analogy ``a : b :: c : ?`` is the rows ``a``, ``b``, ``c`` (normalised)
        with one negative: ``pos(b) * pos(c) / (pos(a) + 1e-6)``.
    k : int
        Neighbours wanted per query, >= 1; clamped to the smallest number of non-excluded candidates of
        any query so the result stays rectangular.
    ex_rows, ex_cols : ndarray of int64
        Pairs (query row, table row) that must not be returned, e.g. the query item itself.
    method : {"dot", "cosmul"}
        Scoring rule.
    block_elems : int
        Scores are computed for as many queries at a time as keep the block under this many floats.
    n_negative : int
        ``method="cosmul"``: how many leading rows of each query are negative terms, ``0 <= n_negative
        < T`` (at least one positive term).
    col_weights : ndarray of float32, shape [C], optional
        ``method="dot"``: each row's score is multiplied by its weight (:func:`evidence_weights`).

    Returns
    -------
    rows : ndarray of int64, shape [n, k']
        Rows of ``table``.
    scores : ndarray of float32, shape [n, k']
        Their scores.
    """
    n = queries.shape[0]
    n_cols = table.shape[0]
    # drop duplicate exclusions so the count of available candidates per query is exact
    flat = unique(ex_rows.astype(np.int64) * max(n_cols, 1) + ex_cols.astype(np.int64))
    ex_rows, ex_cols = np.divmod(flat, max(n_cols, 1))
    available = n_cols - np.bincount(ex_rows, minlength=n) if n else np.array([n_cols])
    k = int(min(k, available.min()))
    out_rows = np.empty((n, k), dtype=np.int64)
    out_scores = np.empty((n, k), dtype=np.float32)
    if n == 0 or k == 0:
        return out_rows, out_scores
    step = max(1, block_elems // max(n_cols, 1))
    table_t = table.T  # a transposed view; BLAS takes it without a copy
    for start in range(0, n, step):
        stop = min(n, start + step)
        qb = queries[start:stop]
        if method == "dot":
            scores = qb @ table_t
            if col_weights is not None:
                scores *= col_weights
        else:
            scores = _shifted_product(qb[:, n_negative:], table_t)
            below = _shifted_product(qb[:, :n_negative], table_t)
            below += COSMUL_EPS
            scores /= below
            del below
        lo, hi = np.searchsorted(ex_rows, [start, stop])
        scores[ex_rows[lo:hi] - start, ex_cols[lo:hi]] = -np.inf
        out_rows[start:stop], out_scores[start:stop] = select_top_k(scores, k)
    return out_rows, out_scores


def _shifted_product(terms: np.ndarray, table_t: np.ndarray) -> np.ndarray:
    """``prod_t (1 + terms[:, t] · table_t) / 2`` over the T terms of ``terms`` [n, T, D], float32 [n, C]."""
    out = np.ones((terms.shape[0], table_t.shape[1]), dtype=np.float32)  # the empty product: no term
    for t in range(terms.shape[1]):
        pos = terms[:, t] @ table_t
        pos += 1.0
        pos *= 0.5
        out *= pos  # times 1.0 first: exact, so one term gives its own scores bit for bit
    return out


def top_k_excluding(scores: np.ndarray, contexts: Sequence[np.ndarray], k: int, row0: int = 0) -> np.ndarray:
    """Top-``k`` columns of each row of ``scores`` (modified in place), context columns excluded.

    Parameters
    ----------
    scores : ndarray, shape (b, V)
        Scores of a block of contexts; overwritten with ``-inf`` at the context items.
    contexts : sequence of ndarray of int64
        All contexts; rows of ``scores`` are contexts ``row0 .. row0 + b``.
    k : int
        Already clamped so that enough items remain.

    Returns
    -------
    ndarray of int64, shape (b, k)
        Best first; equal scores ordered by ascending id.
    """
    b = scores.shape[0]
    block = contexts[row0 : row0 + b]
    lens = np.fromiter((len(c) for c in block), dtype=np.int64, count=b)
    if lens.sum():
        rows = np.repeat(np.arange(b), lens)
        scores[rows, np.concatenate(block)] = -np.inf
    return select_top_k(scores, k)[0]


def affinity_bias(counts: np.ndarray, ns_exponent: float, keep: np.ndarray) -> np.ndarray:
    """The popularity term of skip-gram's affinity, float64 [V]: ``a·log(count) - log(keep)``.

    Skip-gram fits ``vectors[i] · context[j]`` against noise drawn from ``count ** a`` on a corpus where
    item ``j`` was kept with probability ``keep[j]`` (subsampling); adding the noise log-probability and
    undoing the subsampling turns the dot product into ``log P(j | i)`` of the real data, up to a
    constant. Counts below 1 are taken as 1.
    """
    c = np.maximum(np.asarray(counts, dtype=np.float64), 1.0)
    return np.log(c) * float(ns_exponent) - np.log(np.asarray(keep, dtype=np.float64))


BasketRule = Literal["mixture", "product"]
BASKET_RULES: tuple[str, ...] = ("mixture", "product")


def basket_affinity(pair_scores: np.ndarray, bias: np.ndarray, rule: BasketRule) -> np.ndarray:
    """One basket's affinity to every item, float64 [V], from its items' rows of ``W · C^T``.

    Parameters
    ----------
    pair_scores : ndarray, shape [n, V]
        ``W[i] · C[j]`` for each of the basket's ``n >= 1`` items ``i`` and every item ``j``.
    bias : ndarray of float64, shape [V]
        :func:`affinity_bias`.
    rule : {"mixture", "product"}
        ``mixture``: ``log mean_i exp(W[i] · C[j]) + bias[j]``, skip-gram's ``log P(j | basket)`` when
        ``j`` goes with *one* of the basket's items (an item that goes with any one of them ranks
        high, as co-purchase counts summed over the basket do). ``product``: ``sum_i W[i] · C[j] +
        bias[j]``, the product of the items' odds: ``j`` must go with *all* of them, and the more items
        the basket has, the more they outweigh popularity (what a basket that mixes several tastes
        needs). Neither wins on every data set; training picks one on held-out baskets.
    """
    s = np.asarray(pair_scores, dtype=np.float64)
    if rule == "product":
        return s.sum(axis=0) + bias
    top = s.max(axis=0)
    return top + np.log(np.exp(s - top).mean(axis=0)) + bias  # log-mean-exp, stable


def basket_affinity_top_k(
    W: np.ndarray,
    C: np.ndarray,
    bias: np.ndarray,
    contexts: Sequence[np.ndarray],
    k: int,
    allowed: np.ndarray,
    rule: BasketRule = "mixture",
) -> tuple[np.ndarray, np.ndarray]:
    """Top-``k`` ids per context by :func:`basket_affinity` under ``rule``, context items excluded.

    Parameters
    ----------
    W, C : ndarray of float32, shape [V, D]
        Input and output tables of skip-gram.
    bias : ndarray of float64, shape [V]
        :func:`affinity_bias`.
    contexts : sequence of ndarray of int64
        Sorted unique ids, each in ``[0, V)``; an empty context is ranked by ``bias`` alone.
    k : int
        Already clamped so that every context leaves ``k`` allowed candidates.
    allowed : ndarray of bool, shape [V]
        Candidates that may be returned.
    rule : {"mixture", "product"}
        How a basket's items combine (:func:`basket_affinity`).

    Returns
    -------
    ids : ndarray of int64, shape [n, k]
    scores : ndarray of float32, shape [n, k]
        Best first, ties by lower id.
    """
    out_ids = np.empty((len(contexts), k), dtype=np.int64)
    out_scores = np.empty((len(contexts), k), dtype=np.float32)
    for r, c in enumerate(contexts):
        if len(c) == 0:
            s = bias.copy()
        else:
            s = basket_affinity(W[c] @ C.T, bias, rule)
            s[c] = -np.inf
        s[~allowed] = -np.inf
        ids, sc = select_top_k(s[None, :], k)
        out_ids[r], out_scores[r] = ids[0], sc[0]
    return out_ids, out_scores
