"""Each customer's purchase history, per product: what the next-basket answer ranks repeats by.

Grocery baskets are mostly repeats: on Dunnhumby's *The Complete Journey* a household's own most-bought
products recall 3x more of its next basket than a mean of product vectors does (Li et al., "A Next
Basket Recommendation Reality Check", TOIS 2023). So the customer table keeps, for every (customer,
product) pair it lists in ``bought_ids``, how often and how lately that customer bought it, counted in
*baskets* (an order, or a session), not lines:

* ``baskets`` -- the customer's baskets holding the product;
* ``last`` -- baskets since the last one holding it (0: the customer's latest basket);
* ``first`` -- baskets since the first one holding it (with ``baskets``: its usual gap, so whether a
  repeat is due);
* ``decay`` -- the baskets holding it, each weighted ``0.5 ** (age / HALF_LIFE)`` by its age in baskets
  (the recency-weighted frequency of TIFU-KNN, Hu et al. SIGIR 2020, with one group);

and per customer ``n_baskets``. A customer's baskets are ordered by their first line's time when the log
has times, else by their order in the log. Everything here takes arrays and scalars.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._arrays import unique
from .._pages import release_pages

__all__ = [
    "HALF_LIFE",
    "HISTORY_FIELDS",
    "History",
    "basket_table",
    "release",
    "history_of_lines",
    "purchase_history",
]

#: The arrays a customer table keeps of the history, and their types (``n_baskets``: one per customer;
#: the others aligned with the table's ``bought_ids``).
HISTORY_FIELDS = {
    "baskets": np.int32,
    "last": np.int32,
    "first": np.int32,
    "decay": np.float32,
    "n_baskets": np.int32,
}

#: Half-life, in baskets, of the recency-weighted frequency ``decay``.
HALF_LIFE = 8.0


@dataclass(frozen=True)
class History:
    """Per-pair purchase counts, aligned with the sorted unique keys ``pair = customer * n_items + item``.

    Attributes
    ----------
    pair : ndarray of int64
        Sorted unique pair keys (the order of a customer table's ``bought_ids``).
    baskets, last, first : ndarray of int32
        Baskets holding the product; baskets since the last one and since the first one holding it.
    decay : ndarray of float32
        Recency-weighted count of the baskets holding it (:data:`HALF_LIFE`).
    n_baskets : ndarray of int32, shape [n_customers]
        Baskets of each customer (with at least one product of the space).
    """

    pair: np.ndarray
    baskets: np.ndarray
    last: np.ndarray
    first: np.ndarray
    decay: np.ndarray
    n_baskets: np.ndarray


def release(*arrays: np.ndarray) -> None:
    """Give back the resident pages of memory-mapped arrays read whole (a corpus's lines: the customer
    steps read them in passes, and a pass's pages would otherwise stay in the process's memory)."""
    for arr in arrays:
        if arr is not None and getattr(arr, "ndim", 0) == 1:
            release_pages(arr, 0, len(arr))


def basket_table(
    users: np.ndarray, ids: np.ndarray, offsets: np.ndarray, n_users: int, times: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each basket's customer and age among its customer's baskets, in one pass over the lines.

    A basket's customer and time are its first line's with a known customer and product (the lines
    may be memory-mapped: only each basket's first such line is read beyond the scan for it).

    Returns
    -------
    user, age : ndarray of int64, shape [n_baskets]
        The basket's customer and its age (0: the customer's latest basket, by first-line time when
        ``times`` is given, else log order); -1 for a basket with no known line.
    n_baskets : ndarray of int64, shape [n_users]
        Baskets of each customer.
    """
    from ..kernels.history import basket_heads  # numba: loaded when a table is built, not by a query

    head = basket_heads(users, ids, offsets)
    release(users, ids, offsets)  # a memory-mapped corpus's pages, read once: not kept resident
    has = np.flatnonzero(head >= 0)
    lines = head[has]
    b_user = np.asarray(users[lines], dtype=np.int64)
    b_time = np.asarray(times[lines], dtype=np.int64) if times is not None else has
    order = np.lexsort((has, b_time, b_user))
    n_b = np.bincount(b_user, minlength=n_users).astype(np.int64)
    rank = np.empty(len(order), dtype=np.int64)
    starts = np.r_[0, np.cumsum(n_b)][:-1]
    rank[order] = np.arange(len(order)) - starts[b_user[order]]
    user = np.full(len(head), -1, dtype=np.int64)
    age = np.full(len(head), -1, dtype=np.int64)
    user[has] = b_user
    age[has] = n_b[b_user] - 1 - rank
    return user, age, n_b


def purchase_history(
    users: np.ndarray,
    ids: np.ndarray,
    offsets: np.ndarray,
    n_users: int,
    n_items: int,
    times: np.ndarray | None = None,
    pair: np.ndarray | None = None,
) -> History:
    """Count every customer's baskets per product (see the module docstring).

    Parameters
    ----------
    users, ids : ndarray of int
        The customer code and the product id of each line; -1 in either marks a line to skip (a product
        not in the space, an attribute token). They may be memory-mapped: they are read in order.
    offsets : ndarray of int, shape [n_baskets + 1]
        Basket ``b`` is lines ``offsets[b]:offsets[b + 1]``; a basket belongs to its first line's customer.
    n_users, n_items : int
        Sizes of the customer and product tables (the pair key's radix).
    times : ndarray of int64, optional
        Seconds since 1970 per line: baskets are ordered by their first line's time (ties: log order).
    pair : ndarray of int64, optional
        The lines' sorted distinct keys ``customer * n_items + product``, when already known.

    Returns
    -------
    History
    """
    from ..kernels.history import add_history  # numba: loaded when a table is built, not by a query

    _, age, n_b = basket_table(users, ids, offsets, n_users, times)
    if pair is None:
        u, i = np.asarray(users, dtype=np.int64), np.asarray(ids, dtype=np.int64)
        keep = (u >= 0) & (i >= 0)
        pair = unique(u[keep] * n_items + i[keep])
    counts = [np.zeros(len(pair), dtype=np.int32) for _ in range(3)]
    decay = np.zeros(len(pair), dtype=np.float64)
    add_history(users, ids, offsets, age, n_items, pair, HALF_LIFE, *counts, decay)
    release(users, ids, offsets)
    return History(
        pair=np.asarray(pair, dtype=np.int64),
        baskets=counts[0],
        last=counts[1],
        first=counts[2],
        decay=decay.astype(np.float32),
        n_baskets=n_b.astype(np.int32),
    )


def history_of_lines(
    user: np.ndarray, item: np.ndarray, age: np.ndarray, n_baskets: np.ndarray, n_items: int
) -> History:
    """:class:`History` of kept lines given their basket's age (0: the customer's latest basket)."""
    # one entry per (basket, product): a product on two lines of a basket counts once
    key = np.asarray(user, dtype=np.int64) * n_items + np.asarray(item, dtype=np.int64)
    o = np.lexsort((age, key))
    key, ages = key[o], np.asarray(age, dtype=np.int64)[o]
    new = np.r_[True, (key[1:] != key[:-1]) | (ages[1:] != ages[:-1])] if len(key) else np.zeros(0, bool)
    key, ages = key[new], ages[new]
    pair, start, count = np.unique(key, return_index=True, return_counts=True)
    last = np.minimum.reduceat(ages, start) if len(start) else np.zeros(0, np.int64)
    first = np.maximum.reduceat(ages, start) if len(start) else np.zeros(0, np.int64)
    decay = np.add.reduceat(0.5 ** (ages / HALF_LIFE), start) if len(start) else np.zeros(0, np.float64)
    return History(
        pair=pair.astype(np.int64),
        baskets=count.astype(np.int32),
        last=last.astype(np.int32),
        first=first.astype(np.int32),
        decay=decay.astype(np.float32),
        n_baskets=np.asarray(n_baskets).astype(np.int32),
    )
