"""A customer's nearest customers, selected without per-query temporaries the size of the customer table.

Both kernels keep the ``k`` best candidates in a heap, best meaning the higher similarity and, between
equal similarities, the lower row, and return them best first:

* ``top_k_rows(values, k, skip, lo, hi)`` -- for rows ``lo:hi`` of a matrix of similarities (a block of
  customers' cosines with every customer, one matrix product), each row's ``k`` best columns, leaving
  out ``skip[r]`` (the customer's own row);
* ``history_top(indptr, rows, values, norms, items, q, own, k, seen, dots)`` -- the customers closest to
  a query customer by what they bought: the cosine ``sum_j q[j] * share[c, j] / (|share[c]| * |q|)`` of
  recency-weighted shares, read from the pairs of the query's products alone (``indptr``, ``rows``,
  ``values``: every customer's pairs grouped by product). A customer who shares no product scores 0 and
  is never visited: the work is those pairs, not the number of customers.

A query that selected with ``np.argpartition`` allocated the whole table's scores and their indices
(200,000 customers: 2.4 MB per query); thousands of queries left the allocator's heap fragmented by
hundreds of MB. The next-basket fit (:func:`likewise.nextbasket.fit.fit_next_basket`) uses these
kernels; a single query uses the NumPy versions (no compiled code loaded to answer one request), and
:func:`top_k_rows_reference` / :func:`history_top_reference` are those, with this signature.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..errors import InputError

__all__ = ["history_top", "history_top_reference", "top_k_rows", "top_k_rows_reference"]


@njit(nogil=True, cache=True, inline="always")
def _worse(av, ai, bv, bi):
    return av < bv or (av == bv and ai > bi)


@njit(nogil=True, cache=True, inline="always")
def _offer(hv, hi, size, k, v, i):
    """Offer (v, i) to the heap of the ``size`` best kept so far (root: the worst of them)."""
    if size < k:
        pos = size
        while pos > 0:
            parent = (pos - 1) // 2
            if _worse(v, i, hv[parent], hi[parent]):
                hv[pos] = hv[parent]
                hi[pos] = hi[parent]
                pos = parent
            else:
                break
        hv[pos] = v
        hi[pos] = i
        return size + 1
    if not _worse(hv[0], hi[0], v, i):
        return size
    pos = 0
    while True:
        c = 2 * pos + 1
        if c >= size:
            break
        if c + 1 < size and _worse(hv[c + 1], hi[c + 1], hv[c], hi[c]):
            c += 1
        if _worse(hv[c], hi[c], v, i):
            hv[pos] = hv[c]
            hi[pos] = hi[c]
            pos = c
        else:
            break
    hv[pos] = v
    hi[pos] = i
    return size


@njit(nogil=True, cache=True, inline="always")
def _best_first(hv, hi, size, out_v, out_i):
    """The heap's entries, best first (higher value, then lower index)."""
    order = np.argsort(hi[:size])  # rows ascending, then a stable sort by value descending
    vals = -hv[:size][order]
    by_value = np.argsort(vals, kind="mergesort")
    for t in range(size):
        out_i[t] = hi[order[by_value[t]]]
        out_v[t] = hv[order[by_value[t]]]


@njit(nogil=True, cache=True)
def _rows_top(values, k, skip, lo, hi, out_i, out_v, counts):
    hv = np.empty(k, dtype=np.float64)
    hix = np.empty(k, dtype=np.int64)
    for r in range(lo, hi):
        size = 0
        row = values[r]
        for c in range(row.shape[0]):
            v = np.float64(row[c])
            if c == skip[r] or v != v:
                continue
            size = _offer(hv, hix, size, k, v, c)
        _best_first(hv, hix, size, out_v[r], out_i[r])
        counts[r] = size


def _check_rows(values, k, skip, lo, hi) -> None:
    if values.ndim != 2 or len(skip) != values.shape[0]:
        raise InputError(f"values must be [B, n] with one skip per row, got {values.shape} and {len(skip)}")
    if k < 1:
        raise InputError(f"k == {k!r}, must be >= 1")
    if not 0 <= lo <= hi <= values.shape[0]:
        raise InputError(f"rows {lo}:{hi} are not within the {values.shape[0]} rows")


def top_k_rows(
    values: np.ndarray, k: int, skip: np.ndarray, lo: int = 0, hi: int | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each row's ``k`` best columns (higher value, then lower column), best first.

    Parameters
    ----------
    values : ndarray of float32 or float64, shape [B, n], C-contiguous
        Similarities; NaN is never selected.
    k : int
    skip : ndarray of int, shape [B]
        A column each row leaves out (-1: none).
    lo, hi : int
        The rows to select in (default all); the others' outputs stay empty (count 0).

    Returns
    -------
    columns : ndarray of int64, shape [B, k]
    scores : ndarray of float64, shape [B, k]
    counts : ndarray of int64, shape [B]
        How many of each row's ``k`` slots are filled (fewer when a row has fewer columns).
    """
    hi = values.shape[0] if hi is None else hi
    _check_rows(values, k, skip, lo, hi)
    k = int(min(k, values.shape[1])) or 1
    out_i = np.zeros((values.shape[0], k), dtype=np.int64)
    out_v = np.zeros((values.shape[0], k), dtype=np.float64)
    counts = np.zeros(values.shape[0], dtype=np.int64)
    _rows_top(
        np.ascontiguousarray(values),
        k,
        np.asarray(skip, dtype=np.int64),
        int(lo),
        int(hi),
        out_i,
        out_v,
        counts,
    )
    return out_i, out_v, counts


def top_k_rows_reference(
    values: np.ndarray, k: int, skip: np.ndarray, lo: int = 0, hi: int | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`top_k_rows` with NumPy: every row sorted."""
    hi = values.shape[0] if hi is None else hi
    _check_rows(values, k, skip, lo, hi)
    k = int(min(k, values.shape[1])) or 1
    out_i = np.zeros((values.shape[0], k), dtype=np.int64)
    out_v = np.zeros((values.shape[0], k), dtype=np.float64)
    counts = np.zeros(values.shape[0], dtype=np.int64)
    for r in range(lo, hi):
        v = np.asarray(values[r], dtype=np.float64)
        cols = np.flatnonzero(~np.isnan(v) & (np.arange(len(v)) != skip[r]))
        best = cols[np.lexsort((cols, -v[cols]))][:k]
        out_i[r, : len(best)], out_v[r, : len(best)], counts[r] = best, v[best], len(best)
    return out_i, out_v, counts


@njit(nogil=True, cache=True)
def _history(indptr, rows, values, norms, items, q, qnorm, own, k, seen, dots, out_i, out_v):
    total = 0
    for a in range(items.shape[0]):
        total += indptr[items[a] + 1] - indptr[items[a]]
    touched = np.empty(total, dtype=np.int64)
    n_touched = 0
    for a in range(items.shape[0]):
        it = items[a]
        qa = q[a]
        for p in range(indptr[it], indptr[it + 1]):
            r = rows[p]
            if not seen[r]:
                seen[r] = True
                touched[n_touched] = r
                n_touched += 1
            dots[r] += values[p] * qa
    hv = np.empty(k, dtype=np.float64)
    hix = np.empty(k, dtype=np.int64)
    size = 0
    for t in range(n_touched):
        r = touched[t]
        if r != own:
            size = _offer(hv, hix, size, k, dots[r] / max(norms[r] * qnorm, 1e-12), r)
        seen[r] = False
        dots[r] = 0.0
    _best_first(hv, hix, size, out_v, out_i)
    return size


def _check_history(indptr, rows, values, norms, items, q, k, seen, dots) -> None:
    n = len(norms)
    for name, arr, kinds in (
        ("indptr", indptr, "i"),
        ("rows", rows, "i"),
        ("values", values, "f"),
        ("norms", norms, "f"),
    ):
        if arr.dtype.kind not in kinds or arr.ndim != 1 or not arr.flags.c_contiguous:
            raise InputError(
                f"{name} must be a contiguous 1-D {'integer' if kinds == 'i' else 'float'} array, "
                f"got {arr.dtype}{arr.shape}"
            )
    if len(rows) != len(values) or not len(indptr) or int(indptr[-1]) != len(rows):
        end = int(indptr[-1]) if len(indptr) else None
        raise InputError(f"indptr ends at {end}, expected {len(rows)} pairs")
    if len(items) != len(q):
        raise InputError(f"items and q differ in length: {len(items)}, {len(q)}")
    if len(items) and (int(np.min(items)) < 0 or int(np.max(items)) >= len(indptr) - 1):
        raise InputError(
            f"items run from {np.min(items)} to {np.max(items)}, expected 0 .. {len(indptr) - 2}"
        )
    if k < 1:
        raise InputError(f"k == {k!r}, must be >= 1")
    if len(seen) != n or len(dots) != n or seen.dtype != np.bool_ or dots.dtype != np.float64:
        raise InputError(
            f"seen / dots must be bool / float64 [{n}], got {seen.dtype}{seen.shape}, {dots.shape}"
        )


def history_top(
    indptr: np.ndarray,
    rows: np.ndarray,
    values: np.ndarray,
    norms: np.ndarray,
    items: np.ndarray,
    q: np.ndarray,
    own: int,
    k: int,
    seen: np.ndarray,
    dots: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` customers who share a product with the query and are closest to it, best first.

    Parameters
    ----------
    indptr : ndarray of int, shape [n_items + 1]
        Product ``j``'s pairs are ``rows[indptr[j]:indptr[j + 1]]``.
    rows : ndarray of int
        The customer (row) of each pair.
    values : ndarray of float64
        Each pair's share (the customer's recency-weighted share of baskets holding the product).
    norms : ndarray of float64, shape [n_customers]
        Each customer's norm of shares.
    items : ndarray of int
        The query's products (distinct).
    q : ndarray of float64
        The query's share of each of ``items``.
    own : int
        A row left out (the query customer's own; -1 for none).
    k : int
    seen, dots : ndarray of bool / float64, shape [n_customers]
        Scratch: all False / 0 on entry, and again on return (so one pair serves many queries).

    Returns
    -------
    rows : ndarray of int64
        At most ``k`` customers, by cosine (then row) best first.
    sims : ndarray of float64
        Their cosine with the query.
    """
    _check_history(indptr, rows, values, norms, items, q, k, seen, dots)
    q = np.ascontiguousarray(q, dtype=np.float64)
    out_i = np.empty(int(k), dtype=np.int64)
    out_v = np.empty(int(k), dtype=np.float64)
    size = _history(
        indptr,
        rows,
        values,
        norms,
        np.ascontiguousarray(items, dtype=np.int64),
        q,
        float(np.linalg.norm(q)),
        int(own),
        int(k),
        seen,
        dots,
        out_i,
        out_v,
    )
    return out_i[:size], out_v[:size]


def history_top_reference(
    indptr: np.ndarray,
    rows: np.ndarray,
    values: np.ndarray,
    norms: np.ndarray,
    items: np.ndarray,
    q: np.ndarray,
    own: int,
    k: int,
    seen: np.ndarray,
    dots: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`history_top` with NumPy: every customer's dot product, those who share a product sorted."""
    _check_history(indptr, rows, values, norms, items, q, k, seen, dots)
    q = np.asarray(q, dtype=np.float64)
    full = np.zeros(len(norms), dtype=np.float64)
    hit = np.zeros(len(norms), dtype=bool)
    for j, qa in zip(np.asarray(items, dtype=np.int64).tolist(), q.tolist(), strict=True):
        part = np.asarray(rows[indptr[j] : indptr[j + 1]], dtype=np.int64)
        np.add.at(full, part, np.asarray(values[indptr[j] : indptr[j + 1]], dtype=np.float64) * qa)
        hit[part] = True
    if 0 <= own < len(norms):
        hit[own] = False
    cand = np.flatnonzero(hit)
    sims = full[cand] / np.maximum(np.asarray(norms)[cand] * float(np.linalg.norm(q)), 1e-12)
    best = np.lexsort((cand, -sims))[:k]
    return cand[best], sims[best]
