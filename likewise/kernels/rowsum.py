"""Sums over an order log's lines and baskets: the customer vectors' weighted rows, the item-item pair counts.

``add_weighted_rows(sums, wsum, groups, ids, weights, table)`` adds ``weights[t] * table[ids[t]]`` to
``sums[groups[t]]`` and ``weights[t]`` to ``wsum[groups[t]]`` for every ``t``, in order of ``t`` (so
the float64 sums are the same from run to run). :func:`add_weighted_rows_reference` does the same with
``np.add.at``; on 262 k lines x 100 columns that takes about a second on this project's 2-core machine,
30 s for a 7.6 M-line log, where the compiled loop takes a fraction of one.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from numba import njit

from ..errors import InputError

__all__ = [
    "add_pair_counts",
    "add_pair_counts_reference",
    "add_weighted_rows",
    "add_weighted_rows_reference",
    "sparse_times_dense",
    "sparse_times_dense_reference",
]


@njit(nogil=True, cache=True)
def _add(sums, wsum, groups, ids, weights, table):
    dim = table.shape[1]
    for t in range(ids.shape[0]):
        g = groups[t]
        r = ids[t]
        w = weights[t]
        wsum[g] += w
        for d in range(dim):
            sums[g, d] += w * table[r, d]


def _check(sums, wsum, groups, ids, weights, table) -> None:
    if sums.dtype != np.float64 or wsum.dtype != np.float64 or sums.ndim != 2 or wsum.shape != sums.shape[:1]:
        raise InputError(
            f"sums / wsum must be float64 [G, D] / [G], got {sums.dtype}{sums.shape}, {wsum.shape}"
        )
    if table.ndim != 2 or table.shape[1] != sums.shape[1]:
        raise InputError(f"table is {table.shape}, expected [V, {sums.shape[1]}]")
    if not (len(groups) == len(ids) == len(weights)):
        raise InputError(
            f"groups, ids and weights differ in length: {len(groups)}, {len(ids)}, {len(weights)}"
        )
    if len(ids) and (ids.min() < 0 or ids.max() >= table.shape[0]):
        raise InputError(f"ids run from {ids.min()} to {ids.max()}, expected 0 .. {table.shape[0] - 1}")
    if len(groups) and (groups.min() < 0 or groups.max() >= sums.shape[0]):
        raise InputError(
            f"groups run from {groups.min()} to {groups.max()}, expected 0 .. {sums.shape[0] - 1}"
        )


def add_weighted_rows(
    sums: np.ndarray,
    wsum: np.ndarray,
    groups: np.ndarray,
    ids: np.ndarray,
    weights: np.ndarray,
    table: np.ndarray,
) -> None:
    """Add ``weights[t] * table[ids[t]]`` to ``sums[groups[t]]`` and ``weights[t]`` to ``wsum[groups[t]]``.

    Parameters
    ----------
    sums : ndarray of float64, shape [G, D]
        Accumulated in place.
    wsum : ndarray of float64, shape [G]
        Accumulated in place.
    groups, ids : ndarray of int
        The group and the table row of each line.
    weights : ndarray of float64
        The weight of each line.
    table : ndarray of float32 or float64, shape [V, D]

    Raises
    ------
    InputError
        Shapes that do not fit, or a group or id out of range.
    """
    _check(sums, wsum, groups, ids, weights, table)
    _add(
        sums,
        wsum,
        np.ascontiguousarray(groups, dtype=np.int64),
        np.ascontiguousarray(ids, dtype=np.int64),
        np.ascontiguousarray(weights, dtype=np.float64),
        np.ascontiguousarray(table, dtype=np.float32),
    )


def add_weighted_rows_reference(
    sums: np.ndarray,
    wsum: np.ndarray,
    groups: np.ndarray,
    ids: np.ndarray,
    weights: np.ndarray,
    table: np.ndarray,
) -> None:
    """:func:`add_weighted_rows` with ``np.add.at`` (the reference the tests compare against)."""
    _check(sums, wsum, groups, ids, weights, table)
    w = np.asarray(weights, dtype=np.float64)
    np.add.at(sums, groups, np.asarray(table, dtype=np.float32)[ids].astype(np.float64) * w[:, None])
    np.add.at(wsum, groups, w)


@njit(nogil=True, cache=True)
def _pairs(flat, m, rows, starts, lens):
    for s in range(starts.shape[0]):
        a = starts[s]
        n = lens[s]
        for x in range(a, a + n):
            base = rows[x] * m
            for y in range(a, a + n):
                if y != x:
                    flat[base + rows[y]] += 1


def add_pair_counts(gram: np.ndarray, rows: np.ndarray, starts: np.ndarray, lens: np.ndarray) -> None:
    """Add 1 to ``gram[x, y]`` for every ordered pair of distinct positions of each segment of ``rows``.

    The co-occurrence counts of the item-item model's Gram matrix
    (:func:`likewise.space.itemitem.gram_matrix`): segment ``s`` is ``rows[starts[s]:starts[s] +
    lens[s]]``, one basket's distinct rows. Counts are whole numbers, so the sum is exact in any
    order (float32 up to 2**24). :func:`add_pair_counts_reference` counts the same pairs with NumPy
    (every pair materialised, then ``np.unique``).

    Parameters
    ----------
    gram : ndarray of float32 or float64, shape [m, m], C-contiguous
        Accumulated in place.
    rows : ndarray of int
        Row numbers in ``[0, m)``; distinct within a segment.
    starts, lens : ndarray of int
        The segments.
    """
    _check_pairs(gram, rows, starts, lens)
    _pairs(
        gram.reshape(-1),
        gram.shape[0],
        np.ascontiguousarray(rows, dtype=np.int64),
        np.ascontiguousarray(starts, dtype=np.int64),
        np.ascontiguousarray(lens, dtype=np.int64),
    )


def _check_pairs(gram, rows, starts, lens) -> None:
    if gram.ndim != 2 or gram.shape[0] != gram.shape[1] or not gram.flags.c_contiguous:
        raise InputError(f"gram must be a C-contiguous square matrix, got shape {gram.shape}")
    if len(starts) != len(lens):
        raise InputError(f"starts and lens differ in length: {len(starts)}, {len(lens)}")
    if len(rows) and (rows.min() < 0 or rows.max() >= gram.shape[0]):
        raise InputError(f"rows run from {rows.min()} to {rows.max()}, expected 0 .. {gram.shape[0] - 1}")
    if len(lens) and (np.min(starts) < 0 or np.max(np.asarray(starts) + np.asarray(lens)) > len(rows)):
        raise InputError(f"segments run past the {len(rows)} rows")


def add_pair_counts_reference(
    gram: np.ndarray, rows: np.ndarray, starts: np.ndarray, lens: np.ndarray
) -> None:
    """:func:`add_pair_counts` with NumPy (the reference the tests compare against)."""
    _check_pairs(gram, rows, starts, lens)
    rows, starts, lens = (np.asarray(a, dtype=np.int64) for a in (rows, starts, lens))
    m = gram.shape[0]
    for s, n in zip(starts.tolist(), lens.tolist(), strict=True):
        seg = rows[s : s + n]
        left, right = np.repeat(seg, n), np.tile(seg, n)
        keep = left != right
        k, c = np.unique(left[keep] * m + right[keep], return_counts=True)
        gram.reshape(-1)[k] += c


@njit(nogil=True, cache=True)
def _sparse_dense(out, indptr, cols, vals, dense):
    n = dense.shape[1]
    for t in range(indptr.shape[0] - 1):
        for p in range(indptr[t], indptr[t + 1]):
            c = cols[p]
            v = vals[p]
            for j in range(n):
                out[t, j] += v * dense[c, j]


def _check_sparse(indptr, cols, vals, dense) -> None:
    if dense.ndim != 2 or not dense.flags.c_contiguous:
        raise InputError(f"dense must be a C-contiguous matrix, got shape {dense.shape}")
    if len(cols) != len(vals) or len(indptr) < 1 or int(indptr[-1]) != len(cols):
        end = int(indptr[-1]) if len(indptr) else None
        raise InputError(f"indptr ends at {end}, expected {len(cols)} entries")
    if len(cols) and (int(np.min(cols)) < 0 or int(np.max(cols)) >= dense.shape[0]):
        lo, hi = np.min(cols), np.max(cols)
        raise InputError(f"cols run from {lo} to {hi}, expected 0 .. {dense.shape[0] - 1}")


def sparse_times_dense(
    indptr: np.ndarray, cols: np.ndarray, vals: np.ndarray, dense: np.ndarray, threads: int | None = None
) -> np.ndarray:
    """``S @ dense`` for a CSR matrix ``S`` (rows ``indptr``, columns ``cols``, values ``vals``).

    The item-item model's tail (:func:`likewise.space.itemitem.fit_itemitem`): each row of ``S`` holds a
    rare product's co-counts with the head, ``dense`` the head's inverse Gram matrix. A row of the result
    adds whole rows of ``dense`` (contiguous reads), in the order of the row's entries.
    :func:`sparse_times_dense_reference` is the NumPy version.

    Parameters
    ----------
    indptr : ndarray of int, shape [r + 1]
    cols : ndarray of int, shape [nnz]
        Row numbers of ``dense``.
    vals : ndarray of float, shape [nnz]
    dense : ndarray of float32, shape [m, n], C-contiguous
    threads : int, optional
        Threads, each a range of rows (default: every core); the result does not depend on it.

    Returns
    -------
    ndarray of float32, shape [r, n]
    """
    _check_sparse(indptr, cols, vals, dense)
    out = np.zeros((len(indptr) - 1, dense.shape[1]), dtype=np.float32)
    indptr = np.ascontiguousarray(indptr, dtype=np.int64)
    cols = np.ascontiguousarray(cols, dtype=np.int64)
    vals = np.ascontiguousarray(vals, dtype=np.float32)
    # rows are independent: a range of them per thread (the loop releases the GIL), the same sums
    threads = max(1, min(int(threads or os.cpu_count() or 1), len(out)))
    if threads == 1:
        _sparse_dense(out, indptr, cols, vals, dense)
        return out
    cuts = np.linspace(0, len(out), threads + 1).astype(int).tolist()
    with ThreadPoolExecutor(threads, thread_name_prefix="likewise-rowsum") as pool:
        jobs = [
            pool.submit(_sparse_dense, out[a:b], indptr[a : b + 1], cols, vals, dense)
            for a, b in zip(cuts[:-1], cuts[1:], strict=True)
        ]
        for job in jobs:
            job.result()
    return out


def sparse_times_dense_reference(
    indptr: np.ndarray, cols: np.ndarray, vals: np.ndarray, dense: np.ndarray, threads: int | None = None
) -> np.ndarray:
    """:func:`sparse_times_dense` with NumPy: each row a weighted sum of ``dense``'s rows (one thread)."""
    _check_sparse(indptr, cols, vals, dense)
    out = np.zeros((len(indptr) - 1, dense.shape[1]), dtype=np.float32)
    for t in range(len(indptr) - 1):
        a, b = int(indptr[t]), int(indptr[t + 1])
        if b > a:
            out[t] = np.asarray(vals[a:b], dtype=np.float32) @ dense[np.asarray(cols[a:b])]
    return out
