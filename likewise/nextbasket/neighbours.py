"""What similar customers buy: per product, the share of baskets holding it among a customer's neighbours.

Two ways to find a customer's neighbours in a customer table with a purchase history
(:mod:`likewise.nextbasket.history`):

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
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ..errors import NotFittedError
from ..space.customers import CustomerTable
from .history import HALF_LIFE

__all__ = [
    "PAIR_BLOCK",
    "Neighbourhood",
    "decay_total",
    "history_neighbour_share",
    "block_neighbours",
    "neighbourhood",
    "vector_neighbour_share",
]


def decay_total(n_baskets: np.ndarray | int) -> np.ndarray:
    """The recency weights of all of a customer's baskets summed (the most ``decay`` can reach)."""
    r = 0.5 ** (1.0 / HALF_LIFE)
    return np.maximum((1.0 - r ** np.asarray(n_baskets, dtype=np.float64)) / (1.0 - r), 1e-12)


class Neighbourhood:
    """A customer table's pairs as both searches need them: each customer's recency weights in all
    (``totals``: a pair's share of the customer's baskets is its ``decay`` over that), the pairs grouped by
    product with their shares, each customer's norm of shares and the norm of its vector."""

    def __init__(self, table: CustomerTable, n_items: int) -> None:
        h = table.history
        if h is None:
            raise NotFittedError("this customer table has no purchase history: retrain from the order log")
        per = np.diff(table.bought_indptr)
        self.totals = decay_total(h["n_baskets"])
        shares = h["decay"] / np.repeat(self.totals, per)
        self.norms = np.sqrt(
            np.bincount(np.repeat(np.arange(len(table)), per), weights=shares * shares, minlength=len(table))
        )
        # rows as int32 (a customer table holds fewer than 2**31 customers): the pairs are the bulk
        order = np.argsort(np.asarray(table.bought_ids), kind="stable")
        self.rows = np.repeat(np.arange(len(table), dtype=np.int32), per)[order]
        self.by_product = shares[order]
        del shares, order
        self.indptr = np.r_[0, np.cumsum(np.bincount(np.asarray(table.bought_ids), minlength=n_items))]
        vectors = table.vectors
        self.vector_norms = np.sqrt(np.einsum("ij,ij->i", vectors, vectors, dtype=np.float64))


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
        shares = table.history["decay"][idx] / hood.totals[top[which]]
        out += np.bincount(ids, weights=shares * w[which], minlength=n_items)
    return out


def _top_among(rows: np.ndarray, sims: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` best of the candidate ``rows`` by ``sims`` (all above 0) and their similarities,
    summing to 1."""
    k = min(k, len(sims))
    if k <= 0:
        return np.zeros(0, np.int64), np.zeros(0)
    sel = np.argpartition(-sims, k - 1)[:k]
    w = np.asarray(sims[sel], dtype=np.float64)
    if w.sum() <= 0:
        return np.zeros(0, np.int64), np.zeros(0)
    return np.asarray(rows[sel], dtype=np.int64), w / w.sum()


def vector_neighbour_share(
    table: CustomerTable,
    vector: np.ndarray,
    own: int,
    k: int,
    n_items: int,
    found: tuple[np.ndarray, np.ndarray] | None = None,
) -> np.ndarray:
    """Per product, the share of baskets holding it among the ``k`` customers whose vectors are nearest
    ``vector`` (``own``: a row left out, the customer's own; -1 for none). float64 [n_items].

    ``found``: those customers and their cosines, when already selected (:func:`block_neighbours`)."""
    hood = neighbourhood(table, n_items)
    if found is None:
        q = vector / max(float(np.linalg.norm(vector)), 1e-12)
        top, w = _top_weights(table.normed @ q.astype(np.float32), own, k)
    else:
        top, sims = found
        w = np.maximum(np.asarray(sims, dtype=np.float64), 0.0)
        top, w = (top, w / w.sum()) if w.sum() > 0 else (np.zeros(0, np.int64), np.zeros(0))
    return _aggregate(table, hood, top, w, n_items)


def _query_shares(decay: np.ndarray, n_baskets: int) -> np.ndarray:
    return np.asarray(decay, dtype=np.float64) / decay_total(n_baskets)


def block_neighbours(
    table: CustomerTable,
    n_items: int,
    vectors: np.ndarray,
    queries: list[tuple[np.ndarray, np.ndarray, int, int]],
    k: int,
    threads: int = 1,
) -> tuple[list[tuple[np.ndarray, np.ndarray]], list[tuple[np.ndarray, np.ndarray]]]:
    """A block of customers' nearest customers both ways, with the compiled kernels
    (:mod:`likewise.kernels.neighbours`) on ``threads`` threads: what :func:`vector_neighbour_share` and
    :func:`history_neighbour_share` take as ``found``. The next-basket fit asks for thousands of customers
    so: their cosines with every customer are one matrix product per block.

    Parameters
    ----------
    table : CustomerTable
    n_items : int
    vectors : ndarray, shape [B, D]
        Each customer's vector.
    queries : list of (items, decay, n_baskets, own)
        Each customer's purchases as :func:`history_neighbour_share` takes them (``own``: its row, left
        out of both searches; -1 for none).
    k : int
        Neighbours of each kind.
    threads : int
        Threads, each with its own working arrays (the kernels release the GIL).

    Returns
    -------
    by_vector, by_history : list of (rows, sims)
        Per customer, at most ``k`` customers best first, and their cosines.
    """
    from ..kernels.neighbours import history_top, top_k_rows  # numba: loaded by the fit, not by a query

    hood = neighbourhood(table, n_items)
    # cosines with every customer from the raw vectors and their norms (no unit copy of the table)
    norms = np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    cosines = (np.asarray(vectors) / norms).astype(np.float32) @ table.vectors.T
    cosines /= np.maximum(hood.vector_norms, 1e-12).astype(np.float32)
    owns = np.array([own for *_, own in queries], dtype=np.int64)
    by_history: list[tuple[np.ndarray, np.ndarray]] = [(np.zeros(0, np.int64), np.zeros(0))] * len(queries)

    def part(lo: int, hi: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        seen, dots = np.zeros(len(table), dtype=bool), np.zeros(len(table), dtype=np.float64)
        for i in range(lo, hi):
            items, decay, n_baskets, own = queries[i]
            if len(items):
                q = _query_shares(decay, n_baskets)
                args = (hood.indptr, hood.rows, hood.by_product, hood.norms, items, q, own, k, seen, dots)
                by_history[i] = history_top(*args)
        cols, vals, counts = top_k_rows(cosines, k, owns, lo, hi)
        return cols[lo:hi], vals[lo:hi], counts[lo:hi]

    threads = max(1, min(int(threads), len(queries)))
    cuts = np.linspace(0, len(queries), threads + 1).astype(int).tolist()
    with ThreadPoolExecutor(threads, thread_name_prefix="likewise-neighbours") as pool:
        parts = [
            f.result() for f in [pool.submit(part, a, b) for a, b in zip(cuts[:-1], cuts[1:], strict=True)]
        ]
    cols, vals, counts = (np.concatenate([p[n] for p in parts]) for n in range(3))
    by_vector = [(cols[i, : counts[i]], vals[i, : counts[i]]) for i in range(len(queries))]
    return by_vector, by_history


def history_neighbour_share(
    table: CustomerTable,
    items: np.ndarray,
    decay: np.ndarray,
    n_baskets: int,
    own: int,
    k: int,
    n_items: int,
    found: tuple[np.ndarray, np.ndarray] | None = None,
) -> np.ndarray:
    """As :func:`vector_neighbour_share`, the neighbours found by what they bought: the cosine of the
    customers' recency-weighted shares per product with those of a customer who bought ``items``
    (sorted ids) with recency-weighted counts ``decay`` over ``n_baskets`` baskets. Only customers who
    share a product can be neighbours (the others' cosine is 0).

    ``found``: the ``k`` nearest and their cosines, when already selected (:func:`block_neighbours`, the
    compiled kernels the next-basket fit uses); without it they are computed with NumPy over every
    customer (one query loads no compiled code). Both find the same neighbours."""
    if len(items) == 0:
        return np.zeros(n_items, dtype=np.float64)
    hood = neighbourhood(table, n_items)
    if found is not None:
        rows, sims = found
    else:
        q = _query_shares(decay, n_baskets)
        starts, ends = hood.indptr[items], hood.indptr[items + 1]
        dots = np.zeros(len(table), dtype=np.float64)
        for idx, prod in _windows(starts, ends):
            dots += np.bincount(hood.rows[idx], weights=hood.by_product[idx] * q[prod], minlength=len(table))
        if 0 <= own < len(table):
            dots[own] = 0.0
        rows = np.flatnonzero(dots > 0)
        sims = dots[rows] / np.maximum(hood.norms[rows] * float(np.linalg.norm(q)), 1e-12)
    top, w = _top_among(rows, sims, k)
    return _aggregate(table, hood, top, w, n_items)
