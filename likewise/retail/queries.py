"""Retail queries: also bought, basket completion, for a customer, similar customers, lookalikes."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import numpy as np

from .._arrays import unique
from .._check import Row, check_k
from .._fileio import atomic_file
from ..errors import InputError, NotFittedError
from ..space.customers import CustomerTable
from ..space.embeddings import Embeddings
from ..space.itemtable import Types
from ..space.results import Neighbours
from ..space.search import top_k_search

#: How a lookalike audience is ranked: by the seeds' centroid, or by votes of their neighbours.
AudienceMethod = Literal["centroid", "knn"]

# --------------------------------------------------------------------------------------- queries


def fitted_customers(emb: Embeddings) -> CustomerTable:
    """The space's customer table; :class:`NotFittedError` says how to get one when there is none."""
    table = emb.customers
    if table is None:
        raise NotFittedError(
            "this space has no customer vectors: train from an order log with a customer column "
            "(likewise train LOG --user-col customer_id ...) or attach build_customer_vectors(...)"
        )
    return table


def affinity_top_k(
    emb: Embeddings,
    queries: np.ndarray,
    k: int,
    ex_rows: np.ndarray,
    ex_ids: np.ndarray,
    *,
    allowed: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Top-``k`` products by affinity ``q · context[j] + a·log(count[j])`` for each query row.

    ``q`` is a (weighted) mean of input vectors. Skip-gram with negative sampling fits
    ``W[i] · C[j] ≈ PMI(i, j) - log(negative)`` against a noise distribution ``∝ count ** a``
    (``a = ns_exponent``), so adding ``a·log(count[j])`` turns the PMI into ``log P(j | i)`` up to a
    constant: a ranking of what is bought with ``i``, popularity included.

    Returns ``(ids [n, k], scores [n, k])``; ``(ex_rows, ex_ids)`` pairs are never returned, and with
    ``allowed`` (sorted int64 ids, as :meth:`Embeddings.typed_restrict` gives) only those ids are.
    """
    table = emb.affinity_table  # raises NotFittedError without a context table
    q = np.hstack([np.asarray(queries, dtype=np.float32), np.ones((len(queries), 1), dtype=np.float32)])
    ex_rows, ex_ids = np.asarray(ex_rows, np.int64), np.asarray(ex_ids, np.int64)
    if allowed is None:
        return top_k_search(table, q, check_k(k), ex_rows, ex_ids)
    pos = np.minimum(np.searchsorted(allowed, ex_ids), len(allowed) - 1)
    keep = allowed[pos] == ex_ids
    rows, scores = top_k_search(table[allowed], q, check_k(k), ex_rows[keep], pos[keep])
    return allowed[rows], scores


def _product_result(emb: Embeddings, ids: np.ndarray, scores: np.ndarray) -> Neighbours:
    return emb.neighbours_of(ids, scores)


def also_bought(emb: Embeddings, item: str | int, k: int = 10, *, types: Types = None) -> Neighbours:
    """Products bought with ``item``, best first, ``item`` itself excluded.

    The score is the space's completion (:meth:`Embeddings.complete_top_k`): the item-item model's
    weight from ``item`` when training kept one, else the affinity of :func:`affinity_top_k`
    (complements rank high); without a context table, the cosine of product vectors (which finds
    substitutes more than complements). ``types`` keeps the items of those types (a typed
    space; default: every type but hidden ones).

    Returns
    -------
    Neighbours
        1-D.
    """
    if emb.context is None:
        return emb.similar(item, k=k, types=types)
    i = emb.id_of(item)
    ids, scores = emb.complete_top_k(
        [np.array([i])], check_k(k), restrict=emb.typed_restrict(None, types), types=types
    )
    return _product_result(emb, ids[0], scores[0])


def complete_basket(
    emb: Embeddings,
    items: Sequence[str | int],
    k: int = 10,
    *,
    on_unknown: Literal["raise", "skip"] = "raise",
    types: Types = None,
) -> Neighbours:
    """Products to add to a basket, its own products excluded (of ``types``, in a typed space).

    The score is the space's completion (:meth:`Embeddings.complete_top_k`): with the item-item model
    training kept (EASE), the sum of the candidate's weights from the basket's products; else
    ``log(mean over the basket's products i of exp(affinity(i, j)))`` (see
    :func:`affinity_top_k`): each product of the basket proposes what goes with it, and a candidate
    that goes well with *one* of them ranks high (a mixture, like summing co-counts over the basket;
    the mean affinity would ask a candidate to go with all of them, and measured 1-2 points of HR@10
    lower). Without a context table: the cosine to the sum of the basket's unit vectors
    (:meth:`Embeddings.recommend`). An unknown product raises ``UnknownItemError`` (with close
    matches); with ``on_unknown="skip"`` unknown products are ignored, and a basket with no known product
    raises :class:`InputError`.
    """
    if isinstance(items, str) or not isinstance(items, Sequence | np.ndarray):
        raise InputError(f"items must be a list of products, got {items!r} (wrap one product in a list)")
    if emb.context is None:
        return emb.recommend(list(items), k=k, on_unknown=on_unknown, types=types)
    ids, _ = emb.ids_of(list(items), on_unknown=on_unknown)
    if len(ids) == 0:
        raise InputError(f"the basket has no product known to the space (given {list(items)[:5]!r})")
    out, scores = emb.complete_top_k([ids], check_k(k), restrict=emb.typed_restrict(None, types), types=types)
    return _product_result(emb, out[0], scores[0])


def for_customer(
    emb: Embeddings, customer: str | int, k: int = 10, exclude_bought: bool = True, *, types: Types = None
) -> Neighbours:
    """Products for a customer: the customer's mean affinity (or, without a context table, cosine).

    Parameters
    ----------
    exclude_bought : bool
        Leave out products the customer already bought (set False to include repeat purchases).
    types : str or list of str, optional
        In a typed space, recommend items of these types (``"article"``, ``"campaign"``); default:
        every type but hidden ones.
    """
    table = fitted_customers(emb)
    r = table.row(customer)
    exclude = table.bought(Row(r)).astype(np.int64) if exclude_bought else np.zeros(0, np.int64)
    if emb.context is None:
        return emb.similar_to_vector(
            table.vectors[r], k=k, exclude=[Row(i) for i in exclude.tolist()], types=types
        )
    allowed = emb.typed_restrict(None, types)
    out, scores = affinity_top_k(
        emb, table.vectors[r : r + 1], k, np.zeros(len(exclude), np.int64), exclude, allowed=allowed
    )
    return _product_result(emb, out[0], scores[0])


def _customer_result(table: CustomerTable, rows: np.ndarray, scores: np.ndarray) -> Neighbours:
    keys = table.keys
    return Neighbours([keys[i] for i in rows.tolist()], rows.astype(np.int64), scores.astype(np.float32))


def similar_customers(emb: Embeddings, customer: str | int, k: int = 10) -> Neighbours:
    """The ``k`` customers most like ``customer`` (itself excluded), by the cosine of their profiles.

    A profile is the customer's vector less the mean customer vector
    (:attr:`~likewise.space.customers.CustomerTable.profiles`): two customers are alike when they differ
    from the average customer in the same way, not because both buy the staples everyone buys.
    """
    table = fitted_customers(emb)
    r = table.row(customer)
    prof = table.profiles
    rows, scores = top_k_search(
        prof, prof[r : r + 1], check_k(k), np.zeros(1, np.int64), np.array([r], np.int64)
    )
    return _customer_result(table, rows[0], scores[0])


def lookalike(
    emb: Embeddings,
    seeds: Sequence[str | int],
    k: int = 100,
    method: AudienceMethod = "centroid",
    *,
    neighbours: int = 50,
) -> Neighbours:
    """The customers closest to a seed audience, seeds excluded, with scores to cut at a threshold.

    Parameters
    ----------
    seeds : sequence of customer keys (or rows)
        The seed audience (unknown keys raise).
    k : int
        Audience size wanted; clamped to the number of non-seed customers.
    method : {"centroid", "knn"}
        Both compare customer profiles (each customer's vector less the mean customer vector,
        :attr:`~likewise.space.customers.CustomerTable.profiles`), so the seeds are matched on what sets
        them apart from the average customer. ``centroid``: cosine to the mean of the seeds' unit
        profiles. ``knn``: every seed votes for its
        ``neighbours`` nearest non-seed customers with its cosine; the score is the vote sum divided by
        the number of seeds (customers without a vote are not returned, so fewer than ``k`` may come back).
    neighbours : int
        Votes per seed for ``knn``.

    Returns
    -------
    Neighbours
        Customer keys and row numbers, best first.
    """
    table = fitted_customers(emb)
    k = check_k(k)
    if isinstance(seeds, str) or len(seeds) == 0:
        raise InputError(f"seeds must be a non-empty list of customers, got {seeds!r}")
    rows = unique(np.array([table.row(s) for s in seeds], dtype=np.int64))
    n = len(table)
    if len(rows) >= n:
        raise InputError(f"the {len(rows)} seeds are all the customers: there is no one else to find")
    prof = table.profiles
    if method == "centroid":
        centre = prof[rows].mean(axis=0, dtype=np.float64)
        norm = np.linalg.norm(centre)
        q = (centre / (norm if norm > 0 else 1.0)).astype(np.float32)[None, :]
        out, scores = top_k_search(prof, q, k, np.zeros(len(rows), np.int64), rows)
        return _customer_result(table, out[0], scores[0])
    if method != "knn":
        raise InputError(f"method == {method!r}, must be 'centroid' or 'knn'")
    m = check_k(neighbours)
    q = prof[rows]
    ex_rows = np.repeat(np.arange(len(rows)), len(rows))
    ex_cols = np.tile(rows, len(rows))
    nb, sims = top_k_search(prof, q, m, ex_rows, ex_cols)
    votes = np.bincount(nb.ravel(), weights=sims.ravel().astype(np.float64), minlength=n) / len(rows)
    voted = np.zeros(n, dtype=bool)
    voted[nb.ravel()] = True
    cand = np.flatnonzero(voted)
    order = np.lexsort((cand, -votes[cand]))[:k]
    return _customer_result(table, cand[order], votes[cand[order]])


def write_audience(
    result: Neighbours, path: str | os.PathLike, *, min_score: float | None = None, overwrite: bool = False
) -> int:
    """Write a :func:`lookalike` result to CSV (``rank,customer_id,score``); returns the rows written.

    Rows scoring below ``min_score`` are cut. The file is written beside ``path`` and renamed into place;
    an existing file is replaced only with ``overwrite=True``.
    """
    import csv

    from .._targets import check_output_file

    check_output_file(path, overwrite=overwrite, flag="overwrite=True")
    n = 0
    with atomic_file(Path(path)) as f:
        w = csv.writer(f)
        w.writerow(["rank", "customer_id", "score"])
        for key, score in result.pairs():
            if min_score is not None and score < min_score:
                break
            n += 1
            w.writerow([n, key, f"{score:.6f}"])
    return n
