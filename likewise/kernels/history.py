"""A log's purchase history in passes over its lines: per basket its head, per (customer, product) its counts.

:func:`basket_heads` finds each basket's first line with a known customer and product (the basket's
customer and time are that line's). :func:`add_history` reads the baskets' lines once, in order, and
adds to each (customer, product) pair (``pair``: the sorted keys ``customer * n_items + product``) the
baskets holding it, the youngest and the oldest of their ages, and their recency weights
``0.5 ** (age / half_life)``; a product on two lines of one basket counts once. The working set is
the pair-sized outputs (the lines may be memory-mapped and are read in order), where sorting every line
by (pair, age) with NumPy held about ten line-sized int64 arrays at once (600 MB at 7.5 M lines).
:func:`basket_heads_reference` and :func:`add_history_reference` do the same with NumPy.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..errors import InputError

__all__ = ["add_history", "add_history_reference", "basket_heads", "basket_heads_reference"]


@njit(nogil=True, cache=True)
def _heads(users, ids, offsets, head):
    for b in range(offsets.shape[0] - 1):
        head[b] = -1
        for t in range(offsets[b], offsets[b + 1]):
            if ids[t] >= 0 and users[t] >= 0:
                head[b] = t
                break


def _check_lines(users, ids, offsets) -> None:
    if len(users) != len(ids) or not len(offsets) or int(offsets[-1]) != len(ids):
        end = int(offsets[-1]) if len(offsets) else None
        raise InputError(
            f"purchase history: {len(users)} customers, {len(ids)} products and offsets ending at {end}: "
            "one per line expected"
        )


def basket_heads(users: np.ndarray, ids: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """The first line of each basket whose customer and product are known (>= 0); -1 for a basket with none.

    Parameters
    ----------
    users, ids : ndarray of int
        The customer code and the product id of each line (-1: unknown).
    offsets : ndarray of int, shape [n_baskets + 1]
        Basket ``b`` is lines ``offsets[b]:offsets[b + 1]``.

    Returns
    -------
    ndarray of int64, shape [n_baskets]
    """
    _check_lines(users, ids, offsets)
    head = np.empty(len(offsets) - 1, dtype=np.int64)
    _heads(users, ids, np.ascontiguousarray(offsets, dtype=np.int64), head)
    return head


def basket_heads_reference(users: np.ndarray, ids: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """:func:`basket_heads` with NumPy."""
    _check_lines(users, ids, offsets)
    offsets = np.asarray(offsets, dtype=np.int64)
    keep = (np.asarray(ids) >= 0) & (np.asarray(users) >= 0)
    line = np.flatnonzero(keep)
    basket = np.searchsorted(offsets, line, side="right") - 1
    head = np.full(len(offsets) - 1, -1, dtype=np.int64)
    first = np.r_[True, basket[1:] != basket[:-1]] if len(basket) else np.zeros(0, bool)
    head[basket[first]] = line[first]
    return head


@njit(nogil=True, cache=True)
def _add(users, ids, offsets, age, n_items, pair, half_life, baskets, last, first, decay, seen):
    n_pairs = pair.shape[0]
    for b in range(offsets.shape[0] - 1):
        a = age[b]
        if a < 0:
            continue
        w = 0.5 ** (a / half_life)
        for t in range(offsets[b], offsets[b + 1]):
            u = users[t]
            j = ids[t]
            if u < 0 or j < 0:
                continue
            key = u * n_items + j
            lo = 0
            hi = n_pairs
            while lo < hi:  # the pair's position among the sorted keys
                mid = (lo + hi) >> 1
                if pair[mid] < key:
                    lo = mid + 1
                else:
                    hi = mid
            if lo == n_pairs or pair[lo] != key:
                return key  # a line whose pair is not listed: the caller's pairs are not these lines'
            if seen[lo] == b:
                continue  # the product's second line in this basket
            seen[lo] = b
            if baskets[lo] == 0:
                last[lo] = a
                first[lo] = a
            else:
                last[lo] = min(last[lo], a)
                first[lo] = max(first[lo], a)
            baskets[lo] += 1
            decay[lo] += w
    return -1


def _check_history(users, ids, offsets, age, pair, outs) -> None:
    _check_lines(users, ids, offsets)
    if len(age) != len(offsets) - 1:
        raise InputError(f"age has {len(age)} entries, expected one per basket ({len(offsets) - 1})")
    for name, arr in zip(("baskets", "last", "first", "decay"), outs, strict=True):
        if arr.shape != pair.shape:
            raise InputError(f"{name} has shape {arr.shape}, expected {pair.shape} (one per pair)")


def add_history(
    users: np.ndarray,
    ids: np.ndarray,
    offsets: np.ndarray,
    age: np.ndarray,
    n_items: int,
    pair: np.ndarray,
    half_life: float,
    baskets: np.ndarray,
    last: np.ndarray,
    first: np.ndarray,
    decay: np.ndarray,
) -> None:
    """Add each basket's products to its pairs' counts (see the module docstring).

    Parameters
    ----------
    users, ids : ndarray of int
        The customer code and the product id of each line (-1: skipped).
    offsets : ndarray of int, shape [n_baskets + 1]
        The baskets' lines.
    age : ndarray of int, shape [n_baskets]
        Each basket's age among its customer's baskets (0: the latest); -1: skipped.
    n_items : int
        The pair key's radix.
    pair : ndarray of int64
        The sorted distinct keys ``customer * n_items + product`` of the lines.
    half_life : float
        Of the recency weights, in baskets.
    baskets, last, first : ndarray of int32, shape [len(pair)]
        Zeros on entry: the baskets holding the pair, and the youngest and oldest of their ages.
    decay : ndarray of float64, shape [len(pair)]
        Zeros on entry: the sum of the baskets' recency weights.

    Raises
    ------
    InputError
        A line whose pair is not in ``pair``.
    """
    outs = (baskets, last, first, decay)
    _check_history(users, ids, offsets, age, pair, outs)
    if len(offsets) - 1 >= 2**31 - 1:
        raise InputError(f"{len(offsets) - 1} baskets: at most 2**31 - 2 are counted in one pass")
    seen = np.full(len(pair), -1, dtype=np.int32)
    bad = _add(
        users,
        ids,
        np.ascontiguousarray(offsets, dtype=np.int64),
        np.ascontiguousarray(age, dtype=np.int64),
        int(n_items),
        np.ascontiguousarray(pair, dtype=np.int64),
        float(half_life),
        *outs,
        seen,
    )
    if bad >= 0:
        raise InputError(f"purchase history: the pair key {bad} of a line is not among the pairs given")


def add_history_reference(
    users: np.ndarray,
    ids: np.ndarray,
    offsets: np.ndarray,
    age: np.ndarray,
    n_items: int,
    pair: np.ndarray,
    half_life: float,
    baskets: np.ndarray,
    last: np.ndarray,
    first: np.ndarray,
    decay: np.ndarray,
) -> None:
    """:func:`add_history` with NumPy: every kept line's (pair, basket) once, sorted, then reduced."""
    outs = (baskets, last, first, decay)
    _check_history(users, ids, offsets, age, pair, outs)
    offsets = np.asarray(offsets, dtype=np.int64)
    basket = np.repeat(np.arange(len(offsets) - 1), np.diff(offsets))
    users, ids = np.asarray(users, dtype=np.int64), np.asarray(ids, dtype=np.int64)
    line_age = np.asarray(age, dtype=np.int64)[basket]
    keep = (users >= 0) & (ids >= 0) & (line_age >= 0)
    key = users[keep] * n_items + ids[keep]
    pos = np.searchsorted(pair, key)
    if len(key) and (pos.max() >= len(pair) or np.any(pair[np.minimum(pos, len(pair) - 1)] != key)):
        raise InputError("purchase history: the pair key of a line is not among the pairs given")
    both = np.unique(np.c_[pos, basket[keep]], axis=0)  # a product on two lines of a basket: once
    p, a = both[:, 0], np.asarray(age, dtype=np.int64)[both[:, 1]]
    np.add.at(baskets, p, 1)
    fresh = np.zeros(len(pair), dtype=bool)
    fresh[p] = True
    last[fresh] = np.iinfo(last.dtype).max
    first[fresh] = -1
    np.minimum.at(last, p, a)
    np.maximum.at(first, p, a)
    np.add.at(decay, p, 0.5 ** (a / half_life))
