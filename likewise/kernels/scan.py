"""Exact top-k over a large table at a quarter of the memory traffic: an int8 scan with error bounds.

A single query over a million rows is a pass over the whole table; at float32 that is 256 MB for 64
columns, and the pass is bound by memory bandwidth (11 ms on one core here), before the top-k
selection over a million scores (8 ms with ``np.argpartition``). This kernel reads an int8 copy of the
rows instead (:func:`quantize_rows`, 64 MB) and keeps the selection inside the pass, and it stays
exact: every row carries the bound of its quantisation error, so the pass returns each row that may
belong to the top ``k`` and the caller rescores those few rows on the float32 table.

For a row ``x`` with codes ``c = round(x / s)`` (``s = max|x| / 127``) and error ``e >= ||x - s c||``,
and a query ``q``: ``|x . q - s (c . q)| <= e ||q||``. With ``a = s (c . q)`` computed in float32 and
``w = e ||q|| + margin`` (``margin`` covers the rounding of ``a``), every row's score lies in
``[a - w, a + w]``. Let ``L`` be the ``k``-th largest lower bound among the rows not excluded: a row
whose upper bound is below ``L`` has ``k`` rows certainly above it, so the rows with ``a + w >= L``
(the candidates) hold the exact top ``k``. The kernel keeps the ``k`` largest lower bounds in a heap as
it scans (``L`` only rises) and finally drops the candidates that fell below the final ``L``.

:func:`scan_candidates_reference` computes the same set with NumPy on the whole score vector.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .._arrays import unique
from ..errors import InputError
from ._common import call_literal

__all__ = ["quantize_rows", "scan_candidates", "scan_candidates_reference", "scan_margin"]

WIDTH_STEP = 16  # codes are padded with zero columns to a multiple of this (whole vectors, no tails)


def quantize_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-row symmetric int8 codes of a float table, with each row's scale and error bound.

    Parameters
    ----------
    rows : ndarray of float32, shape [V, D]

    Returns
    -------
    codes : ndarray of int8, shape [V, D'] (``D'`` = ``D`` rounded up to a multiple of 16, zero-padded)
    scale : ndarray of float32, shape [V]
        ``max |row| / 127`` (1 for an all-zero row).
    err : ndarray of float32, shape [V]
        An upper bound of ``||row - scale * codes||`` (computed in float64 and rounded up).
    """
    rows = np.asarray(rows)
    if rows.ndim != 2 or rows.dtype != np.float32:
        raise InputError(f"rows must be float32 [V, D], got {rows.dtype} {rows.shape}")
    n, dim = rows.shape
    width = -(-dim // WIDTH_STEP) * WIDTH_STEP
    codes = np.zeros((n, width), dtype=np.int8)
    scale = np.ones(n, dtype=np.float32)
    err = np.zeros(n, dtype=np.float32)
    step = max(1, (1 << 20) // max(1, dim))
    for start in range(0, n, step):
        block = rows[start : start + step].astype(np.float64)
        top = np.abs(block).max(axis=1)
        s = np.where(top > 0, top / 127.0, 1.0).astype(np.float32)
        c = np.clip(np.rint(block / s[:, None]), -127, 127)
        resid = block - s.astype(np.float64)[:, None] * c
        e = np.sqrt(np.einsum("ij,ij->i", resid, resid)) * (1 + 1e-6) + 1e-12
        codes[start : start + step, :dim] = c.astype(np.int8)
        scale[start : start + step] = s
        err[start : start + step] = np.nextafter(e.astype(np.float32), np.float32(np.inf))
    return codes, scale, err


def scan_margin(query: np.ndarray) -> float:
    """Bound of the float32 rounding of ``a = s (c . q)`` for rows of norm <= 1 (``s * 127 <= 1``).

    Each of the ``D`` products and sums in any order adds at most ``2**-24`` relative error of a term
    sum bounded by ``||q||_1``; ``(D + 2) * 2**-22 * ||q||_1`` is that with a factor 4 to spare.
    """
    q = np.asarray(query, dtype=np.float64)
    return float((q.size + 2) * 2.0**-22 * np.abs(q).sum())


# Compiled for the literal ``width`` itself (call_literal), not through a numba.literally wrapper that
# calls it: a wrapper's copy of a compiled callee and the callee are one symbol, and which one a process
# runs depends on what it loaded first (._common, "Compiled steps").
@njit(fastmath=True, nogil=True, cache=True)
def _scan(codes, scale, err, query, qnorm, margin, k, excluded, out, width):
    """Fill ``out`` with the candidate rows (ascending); return their count, or -1 when ``out`` is full."""
    n = codes.shape[0]
    heap = np.full(k, -np.inf, dtype=np.float32)  # min-heap of the k largest lower bounds
    ub = np.empty(out.shape[0], dtype=np.float32)
    level = np.float32(-np.inf)  # L: the heap's minimum once it holds k bounds
    n_cand = 0
    e_next = 0
    n_ex = excluded.shape[0]
    for i in range(n):
        if e_next < n_ex and excluded[e_next] == i:
            e_next += 1
            continue
        acc = np.float32(0.0)
        for d in range(width):
            acc += np.float32(codes[i, d]) * query[d]
        a = scale[i] * acc
        w = err[i] * qnorm + margin
        hi = a + w
        if hi < level:
            continue
        if n_cand == out.shape[0]:
            return -1
        out[n_cand] = i
        ub[n_cand] = hi
        n_cand += 1
        lo = a - w
        if lo > heap[0]:  # replace the smallest of the k largest lower bounds, sift down
            heap[0] = lo
            j = 0
            while True:
                left = 2 * j + 1
                if left >= k:
                    break
                m = left
                if left + 1 < k and heap[left + 1] < heap[left]:
                    m = left + 1
                if heap[m] >= heap[j]:
                    break
                heap[j], heap[m] = heap[m], heap[j]
                j = m
            level = heap[0]
    kept = 0
    for c in range(n_cand):
        if ub[c] >= level:
            out[kept] = out[c]
            kept += 1
    return kept


def _check(codes, scale, err, query, k, excluded) -> tuple[np.ndarray, np.ndarray]:
    if codes.ndim != 2 or codes.dtype != np.int8 or not codes.flags.c_contiguous:
        raise InputError(f"codes must be C-contiguous int8 [V, D'], got {codes.dtype} {codes.shape}")
    n, width = codes.shape
    for name, arr in (("scale", scale), ("err", err)):
        if arr.dtype != np.float32 or arr.shape != (n,):
            raise InputError(f"{name} must be float32 [{n}], got {arr.dtype} {arr.shape}")
    q = np.zeros(width, dtype=np.float32)
    query = np.asarray(query, dtype=np.float32).reshape(-1)
    if len(query) > width:
        raise InputError(f"query has {len(query)} values, the codes {width} columns")
    q[: len(query)] = query
    if not 1 <= int(k) <= n:
        raise InputError(f"k == {k!r}, must be between 1 and the number of rows {n}")
    ex = unique(np.asarray(excluded, dtype=np.int64))
    return q, ex[(ex >= 0) & (ex < n)]


def scan_candidates(
    codes: np.ndarray,
    scale: np.ndarray,
    err: np.ndarray,
    query: np.ndarray,
    k: int,
    excluded: np.ndarray,
    max_candidates: int = 1 << 16,
) -> np.ndarray | None:
    """Rows that may be among the ``k`` best inner products with ``query`` (see the module docstring).

    Parameters
    ----------
    codes, scale, err : arrays of :func:`quantize_rows`
    query : ndarray of float, shape [D] (D <= the codes' width; missing columns count as 0)
    k : int
        1 <= k <= V; fewer rows than ``k`` left after the exclusions is the caller's to avoid.
    excluded : ndarray of int
        Rows never returned (ids outside ``[0, V)`` are ignored).
    max_candidates : int
        Give up (return None) when more rows than this stay candidates at once.

    Returns
    -------
    ndarray of int64, ascending, or None
        A superset of the exact top ``k`` (ties included), or None when it would exceed
        ``max_candidates`` (the caller then scores every row).
    """
    q, ex = _check(codes, scale, err, query, k, excluded)
    out = np.empty(max(int(max_candidates), int(k)), dtype=np.int64)
    qnorm = np.float32(np.sqrt(np.dot(q.astype(np.float64), q.astype(np.float64))))
    margin = np.float32(scan_margin(q))
    n = call_literal(_scan, codes, scale, err, q, qnorm, margin, int(k), ex, out, codes.shape[1])
    return None if n < 0 else out[:n].copy()


def scan_candidates_reference(
    codes: np.ndarray,
    scale: np.ndarray,
    err: np.ndarray,
    query: np.ndarray,
    k: int,
    excluded: np.ndarray,
    max_candidates: int = 1 << 16,
) -> np.ndarray | None:
    """:func:`scan_candidates` in NumPy over the whole score vector (the same set, up to the rounding
    of scores exactly on the threshold; None only when the final set itself is too large)."""
    q, ex = _check(codes, scale, err, query, k, excluded)
    qnorm = np.float32(np.sqrt(np.dot(q.astype(np.float64), q.astype(np.float64))))
    a = scale * (codes.astype(np.float32) @ q)
    w = err * qnorm + np.float32(scan_margin(q))
    ok = np.ones(len(a), dtype=bool)
    ok[ex] = False
    lo = (a - w)[ok]
    level = np.partition(lo, len(lo) - k)[len(lo) - k]
    cand = np.flatnonzero(ok & (a + w >= level)).astype(np.int64)
    return None if len(cand) > max_candidates else cand
