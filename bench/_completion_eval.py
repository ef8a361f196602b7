"""Completion protocols of ``bench/supermarket.py --sections completion``, apart so they can be reused.

Two protocols over the held-out baskets (each household's latest basket), both restricted to the
products bought >= 5 times in the training baskets and to baskets holding two of them or more:

* **one hidden** (:func:`one_hidden`): one product of each basket, drawn with seed 0, is hidden and the
  rest is the query. The figure moves by about +-0.01 with the seed of the draw.
* **every product hidden** (:func:`every_hidden`): each product of each basket is hidden in turn (the
  rest of the basket is its query). No draw, so no seed noise; cases of the same basket are
  correlated, so standard errors are taken over baskets (:func:`paired`).

A model is scored by ``recommend(queries, k) -> (n, k)`` int64 ids, best first (-1 for an empty slot).
Linear item-item models score every case of a basket from one basket total
(:func:`every_hidden_dense`): the query's score is the basket's score minus the hidden product's row.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

K = 10


def heldout_baskets(
    test_products: np.ndarray, test_baskets: np.ndarray, index: dict, count: np.ndarray, min_count: int = 5
) -> list[np.ndarray]:
    """The held-out baskets as sorted training ids of products bought >= ``min_count`` times (>= 2 each)."""
    order = np.argsort(test_baskets, kind="stable")
    tb = test_baskets[order]
    starts = np.r_[0, np.flatnonzero(tb[1:] != tb[:-1]) + 1, len(order)]
    out = []
    prods = test_products[order].tolist()
    for a, z in zip(starts[:-1], starts[1:], strict=True):
        ids = np.unique(np.asarray([index.get(x, -1) for x in prods[a:z]], dtype=np.int64))
        ids = ids[ids >= 0]
        ids = ids[count[ids] >= min_count]
        if len(ids) >= 2:
            out.append(ids)
    return out


def one_hidden(baskets: Sequence[np.ndarray], seed: int = 0) -> tuple[list[np.ndarray], np.ndarray]:
    """One product per basket hidden (drawn with ``seed``): (queries, hidden)."""
    rng = np.random.default_rng(seed)
    queries, hidden = [], []
    for ids in baskets:
        pick = int(rng.integers(len(ids)))
        hidden.append(int(ids[pick]))
        queries.append(np.delete(ids, pick))
    return queries, np.asarray(hidden, dtype=np.int64)


def every_hidden(baskets: Sequence[np.ndarray]) -> tuple[list[np.ndarray], np.ndarray, np.ndarray]:
    """Every product of every basket hidden in turn: (queries, hidden, basket of each case)."""
    queries, hidden, owner = [], [], []
    for b, ids in enumerate(baskets):
        for j in range(len(ids)):
            queries.append(np.delete(ids, j))
            hidden.append(int(ids[j]))
            owner.append(b)
    return queries, np.asarray(hidden, dtype=np.int64), np.asarray(owner, dtype=np.int64)


def hits(recs: np.ndarray, hidden: np.ndarray) -> np.ndarray:
    """Per case: 1 / log2(rank + 1) of the hidden product in the top k (0 when absent): NDCG@k's gain.

    ``(g > 0)`` is the hit of HR@k.
    """
    hit = np.asarray(recs) == np.asarray(hidden)[:, None]
    return (hit / np.log2(np.arange(2, recs.shape[1] + 2))[None, :]).sum(1)


def summary(gain: np.ndarray, owner: np.ndarray | None = None) -> dict[str, float]:
    """HR@k, NDCG@k and the standard error of HR@k (over baskets when ``owner`` groups the cases)."""
    hit = (gain > 0).astype(np.float64)
    return {"hr@10": float(hit.mean()), "ndcg@10": float(gain.mean()), "hr_se": _se(hit, owner)}


def paired(a: np.ndarray, b: np.ndarray, owner: np.ndarray | None = None) -> tuple[float, float]:
    """HR@k of ``a`` minus that of ``b`` on the same cases, and its standard error (over baskets)."""
    d = (a > 0).astype(np.float64) - (b > 0).astype(np.float64)
    return float(d.mean()), _se(d, owner)


def _se(x: np.ndarray, owner: np.ndarray | None) -> float:
    if len(x) < 2:
        return 0.0
    if owner is None:
        return float(x.std(ddof=1) / np.sqrt(len(x)))
    # cluster (basket) standard error of a mean of correlated cases
    tot = np.bincount(owner, weights=x)
    n = np.bincount(owner).astype(np.float64)
    keep = n > 0
    tot, n = tot[keep], n[keep]
    mean = x.mean()
    g = len(tot)
    return float(np.sqrt(np.sum((tot - n * mean) ** 2) / (n.sum() ** 2) * g / max(g - 1, 1)))


def every_hidden_dense(
    row_scores: Callable[[np.ndarray], np.ndarray], baskets: Sequence[np.ndarray], k: int = K
) -> np.ndarray:
    """Top-k ids of every hidden-product case of a linear item-item model.

    ``row_scores(ids) -> (len(ids), V)`` float scores each id gives every candidate; a query scores
    the sum of its products' rows, so each case is the basket's sum minus the hidden product's row.
    The query's own products (the basket less the hidden one) are excluded; ties go to the lower id.
    Cases come in :func:`every_hidden`'s order.
    """
    out = []
    for ids in baskets:
        rows = np.asarray(row_scores(ids), dtype=np.float64)
        total = rows.sum(0)
        s = total[None, :] - rows
        for j in range(len(ids)):
            s[j, np.delete(ids, j)] = -np.inf
        out.append(top_ids(s, k))
    return np.concatenate(out) if out else np.zeros((0, k), np.int64)


def top_ids(s: np.ndarray, k: int) -> np.ndarray:
    """Top-k column ids per row, best first, ties by the lower id; -inf columns are never returned."""
    n, v = s.shape
    part = np.argpartition(-s, k - 1, axis=1)[:, :k]
    # ties at the k-th score: redo those rows exactly (rare with real-valued scores)
    sc = np.take_along_axis(s, part, 1)
    order = np.lexsort((part, -sc), axis=1)
    ids = np.take_along_axis(part, order, 1)
    kth = np.take_along_axis(sc, order, 1)[:, -1]
    tie = (s == kth[:, None]).sum(1) > (np.take_along_axis(sc, order, 1) == kth[:, None]).sum(1)
    for r in np.flatnonzero(tie):
        ids[r] = np.lexsort((np.arange(v), -s[r]))[:k]
    ids = ids.astype(np.int64)
    ids[~np.isfinite(np.take_along_axis(s, ids, 1))] = -1
    return ids
