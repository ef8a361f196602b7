"""What similar customers buy: per product, the share of baskets holding it among a customer's neighbours.

Two ways to find a customer's neighbours in a customer table with a purchase history
(:mod:`likewise.space.history`):

* :func:`vector_neighbour_share` -- the customers whose vectors are nearest (cosine), the space's notion;
* :func:`history_neighbour_share` -- the customers whose recency-weighted shares per product are nearest
  (cosine), TIFU-KNN's notion of similar households (Hu et al., SIGIR 2020).

Either way the ``k`` nearest are weighted by their similarity (summing to 1) and each product scores
the weighted recency-weighted share of their baskets holding it. The per-table arrays both need (the
shares, and the pairs grouped by product) are built once per table (:func:`neighbourhood`): concurrent
first queries wait for the one build (on a cold server 30 of them each built their own copy: 5.6 GB),
and a server builds it when it loads a version (:func:`neighbourhood` from its loading thread), so no
query pays for it. A query reads the pairs of its customer's products (the caller bounds them:
``max_history`` of :func:`likewise.retail.next_basket`) :data:`PAIR_BLOCK` at a time.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Iterator

import numpy as np

from ..errors import NotFittedError
from .customers import CustomerTable
from .history import HALF_LIFE

__all__ = [
    "PAIR_BLOCK",
    "Neighbourhood",
    "decay_total",
    "history_neighbour_share",
    "neighbourhood",
    "vector_neighbour_share",
]


def decay_total(n_baskets: np.ndarray | int) -> np.ndarray:
    """The recency weights of all of a customer's baskets summed (the most ``decay`` can reach)."""
    r = 0.5 ** (1.0 / HALF_LIFE)
    return np.maximum((1.0 - r ** np.asarray(n_baskets, dtype=np.float64)) / (1.0 - r), 1e-12)


class Neighbourhood:
    """A customer table's pairs as both searches need them: every pair's recency-weighted share of its
    customer's baskets (aligned with ``bought_ids``), the pairs grouped by product, each customer's norm."""

    def __init__(self, table: CustomerTable, n_items: int) -> None:
        h = table.history
        if h is None:
            raise NotFittedError("this customer table has no purchase history: retrain from the order log")
        per = np.diff(table.bought_indptr)
        self.shares = h["decay"] / np.repeat(decay_total(h["n_baskets"]), per)
        rows = np.repeat(np.arange(len(table), dtype=np.int64), per)
        ids = np.asarray(table.bought_ids, dtype=np.int64)
        order = np.argsort(ids, kind="stable")
        self.indptr = np.r_[0, np.cumsum(np.bincount(ids, minlength=n_items))]
        self.rows, self.by_product = rows[order], self.shares[order]
        self.norms = np.sqrt(np.bincount(rows, weights=self.shares * self.shares, minlength=len(table)))


#: Pairs a query reads at once while scoring similar customers by purchases (bounds its temporaries).
PAIR_BLOCK = 1 << 18

# Built once per customer table (a served model's table lives as long as that version is served); weak
# keys, so a table no longer used is not kept alive by it, and two served models do not evict each other.
_HELD: weakref.WeakKeyDictionary[CustomerTable, Neighbourhood] = weakref.WeakKeyDictionary()
# One build lock per table: the first query builds, the others wait for it (single flight); queries on
# other tables are not held up by it.
_BUILDING: weakref.WeakKeyDictionary[CustomerTable, threading.Lock] = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def neighbourhood(table: CustomerTable, n_items: int) -> Neighbourhood:
    """The table's :class:`Neighbourhood` over ``n_items`` products (built once, on first use, then kept;
    concurrent first callers wait for that one build)."""
    with _LOCK:
        held = _HELD.get(table)
        building = _BUILDING.setdefault(table, threading.Lock())
    if held is not None and len(held.indptr) == n_items + 1:
        return held
    with building:
        with _LOCK:
            held = _HELD.get(table)
        if held is None or len(held.indptr) != n_items + 1:
            held = Neighbourhood(table, n_items)
            with _LOCK:
                _HELD[table] = held
    return held


def _windows(starts: np.ndarray, ends: np.ndarray) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """The concatenation of ``arange(s, e)`` for each pair, :data:`PAIR_BLOCK` positions at a time: each
    window's positions and which pair each came from (a block of temporaries however long the ranges)."""
    lens = np.asarray(ends - starts, dtype=np.int64)
    cum = np.cumsum(lens)
    total = int(cum[-1]) if len(cum) else 0
    for lo in range(0, total, PAIR_BLOCK):
        at = np.arange(lo, min(lo + PAIR_BLOCK, total), dtype=np.int64)
        which = np.searchsorted(cum, at, side="right")
        yield starts[which] + at - (cum[which] - lens[which]), which


def _top_weights(sims: np.ndarray, own: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` most similar customers (``own`` left out) and their similarities, summing to 1."""
    if 0 <= own < len(sims):
        sims[own] = -np.inf
    k = min(k, int(np.count_nonzero(np.isfinite(sims))))
    if k <= 0:
        return np.zeros(0, np.int64), np.zeros(0)
    top = np.argpartition(-sims, k - 1)[:k]
    w = np.maximum(sims[top].astype(np.float64), 0.0)
    if w.sum() <= 0:
        return np.zeros(0, np.int64), np.zeros(0)
    return top, w / w.sum()


def _aggregate(table: CustomerTable, hood: Neighbourhood, top: np.ndarray, w: np.ndarray, n_items: int):
    """Per product, the ``w``-weighted recency-weighted share of baskets holding it among ``top``."""
    out = np.zeros(n_items, dtype=np.float64)
    if len(top) == 0:
        return out
    starts, ends = table.bought_indptr[top], table.bought_indptr[top + 1]
    # bincount adds in the order of the lines, as np.add.at did, in a fraction of its time
    for idx, which in _windows(starts, ends):
        ids = np.asarray(table.bought_ids[idx], dtype=np.int64)
        out += np.bincount(ids, weights=hood.shares[idx] * w[which], minlength=n_items)
    return out


def vector_neighbour_share(
    table: CustomerTable, vector: np.ndarray, own: int, k: int, n_items: int
) -> np.ndarray:
    """Per product, the share of baskets holding it among the ``k`` customers whose vectors are nearest
    ``vector`` (``own``: a row left out, the customer's own; -1 for none). float64 [n_items]."""
    hood = neighbourhood(table, n_items)
    q = vector / max(float(np.linalg.norm(vector)), 1e-12)
    top, w = _top_weights(table.normed @ q.astype(np.float32), own, k)
    return _aggregate(table, hood, top, w, n_items)


def history_neighbour_share(
    table: CustomerTable,
    items: np.ndarray,
    decay: np.ndarray,
    n_baskets: int,
    own: int,
    k: int,
    n_items: int,
) -> np.ndarray:
    """As :func:`vector_neighbour_share`, the neighbours found by what they bought: the cosine of the
    customers' recency-weighted shares per product with those of a customer who bought ``items``
    (sorted ids) with recency-weighted counts ``decay`` over ``n_baskets`` baskets."""
    if len(items) == 0:
        return np.zeros(n_items, dtype=np.float64)
    hood = neighbourhood(table, n_items)
    q = np.asarray(decay, dtype=np.float64) / decay_total(n_baskets)
    starts, ends = hood.indptr[items], hood.indptr[items + 1]
    dots = np.zeros(len(table), dtype=np.float64)
    for idx, prod in _windows(starts, ends):
        dots += np.bincount(hood.rows[idx], weights=hood.by_product[idx] * q[prod], minlength=len(table))
    sims = dots / np.maximum(hood.norms * float(np.linalg.norm(q)), 1e-12)
    top, w = _top_weights(sims, own, k)
    return _aggregate(table, hood, top, w, n_items)
