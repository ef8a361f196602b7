"""What every index shares: the space check, exact rescoring of candidates, and recall against exact search.

An index (:class:`~likewise.index.ExactIndex`, :class:`~likewise.index.HnswIndex`) answers one question,
``search(unit queries, k) -> ids``; these functions turn that into the queries of a space: exclusions,
scores that are the exact cosines, ties by id, and a fall-back signal when the index cannot answer.
"""

from __future__ import annotations

import time
from typing import Any, Protocol, runtime_checkable

import numpy as np

from .._arrays import unique
from ..errors import InputError, SpaceMismatchError
from ..space.search import top_k_search

__all__ = ["NeighbourIndex", "Space", "ann_top_k", "check_index_for", "check_search", "measure_recall"]


class Space(Protocol):
    """What an index needs of a space (an :class:`~likewise.space.embeddings.Embeddings`): its identity,
    its shape and its unit rows. The index layer sits below the space and never imports it."""

    @property
    def fingerprint(self) -> str: ...

    @property
    def dim(self) -> int: ...

    @property
    def normed(self) -> np.ndarray: ...

    def __len__(self) -> int: ...


@runtime_checkable
class NeighbourIndex(Protocol):
    """The interface every index implements (:class:`ExactIndex`, :class:`HnswIndex`).

    Attributes
    ----------
    fingerprint : str
        The space the index was built on.
    size, dim : int
        Its items and dimensions.
    info : dict
        What its build measured (``recall_at_10`` at least).
    loaded : bool
        Whether the index is in memory (``warm()`` reads it now).
    """

    fingerprint: str
    size: int
    dim: int
    info: dict

    @property
    def loaded(self) -> bool: ...

    def warm(self) -> None: ...

    def search(self, queries: np.ndarray, k: int) -> np.ndarray:
        """Ids of the ``k`` nearest items (by inner product) of each unit query, best first.

        Parameters
        ----------
        queries : ndarray of float32, shape [n, D]
            Unit-normalised query vectors.
        k : int
            Results per query, ``1 <= k <= size`` (:func:`check_search`).

        Returns
        -------
        ndarray of int64, shape [n, k]
        """
        ...


def check_search(queries: np.ndarray, k: object, size: int, dim: int) -> int:
    """Validate the arguments of an index's ``search``: ``1 <= k <= size``, queries [n, dim]; returns k."""
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or not 1 <= k <= size:
        raise InputError(f"k == {k!r}, must be between 1 and the index size {size}")
    if queries.ndim != 2 or queries.shape[1] != dim:
        raise InputError(f"queries must have shape [n, {dim}], got {queries.shape}")
    return int(k)


def check_index_for(emb: Space, index: Any) -> None:
    """Raise unless ``index`` was built on ``emb`` (same fingerprint, size and dimension)."""
    if index.fingerprint != emb.fingerprint:
        raise SpaceMismatchError(emb.fingerprint, index.fingerprint, what="index")
    if index.size != len(emb) or index.dim != emb.dim:
        raise InputError(
            f"index covers {index.size} items × {index.dim} dims, the space has {len(emb)} × {emb.dim}"
        )


def ann_top_k(
    index: Any,
    normed: np.ndarray,
    queries: np.ndarray,
    k: int,
    ex_rows: np.ndarray,
    ex_ids: np.ndarray,
) -> tuple[np.ndarray, np.ndarray] | None:
    """Approximate top-``k`` with exclusions, rescored exactly; ``None`` when the graph cannot answer.

    Parameters
    ----------
    index : ExactIndex or HnswIndex
        Index over ``normed`` (anything with ``size`` and ``search(queries, k)``).
    normed : ndarray of float32, shape [V, D]
        The unit vectors of the space (for exact rescoring).
    queries : ndarray of float32, shape [n, D]
        Unit query vectors.
    k : int
        Neighbours wanted, >= 1.
    ex_rows, ex_ids : ndarray of int64
        Pairs (query row, item id) that must not be returned.

    Returns
    -------
    (ids, scores) : ndarray of int64 [n, k], ndarray of float32 [n, k], or None
        Best first, ties by lower id, as :func:`~likewise.space.search.top_k_search` orders them.
    """
    n, size = len(queries), index.size
    ex_rows = np.asarray(ex_rows, dtype=np.int64)
    ex_ids = np.asarray(ex_ids, dtype=np.int64)
    if n == 1:  # one query (every HTTP `similar`): plain Python beats the vectorised bookkeeping below
        excluded_ids = set(ex_ids.tolist())
        fetch = k + len(excluded_ids)
        if fetch > size:
            return None
        try:
            labels1 = index.search(queries, fetch)[0].tolist()
        except RuntimeError:
            return None
        kept = np.array([i for i in labels1 if i not in excluded_ids][:k], dtype=np.int64)
        sc = normed[kept] @ queries[0]
        order = np.lexsort((kept, -sc))
        return kept[order][None, :], sc[order].astype(np.float32, copy=False)[None, :]
    flat = unique(ex_rows * size + ex_ids)
    per_row = np.bincount(flat // size, minlength=n)
    fetch = k + int(per_row.max(initial=0))
    if n == 0 or fetch > size:
        return None
    try:
        labels = index.search(queries, fetch)
    except RuntimeError:  # too few results reachable (tiny graphs): exact search answers instead
        return None
    excluded = np.isin(np.arange(n, dtype=np.int64)[:, None] * size + labels, flat)
    # stable sort puts the kept candidates first, in the graph's order; keep the first k of each row
    keep = np.take_along_axis(labels, np.argsort(excluded, axis=1, kind="stable")[:, :k], axis=1)
    scores = np.einsum("nkd,nd->nk", normed[keep], queries).astype(np.float32)
    order = np.lexsort((keep, -scores), axis=-1)
    return np.take_along_axis(keep, order, axis=1), np.take_along_axis(scores, order, axis=1)


def measure_recall(
    emb: Space, index: Any, *, n_queries: int = 1000, k: int = 10, seed: int = 0
) -> tuple[float, float]:
    """Recall@k of ``index`` against exact search on ``n_queries`` items of ``emb`` (itself excluded).

    Returns
    -------
    recall : float
        Share of the exact top-k found by the index, over all queries.
    ms_per_query : float
        Median time of one index query (one item at a time, one thread, exact rescoring included).
    """
    check_index_for(emb, index)
    n = min(n_queries, len(emb))
    k = min(k, len(emb) - 1)
    if n < 1 or k < 1:
        raise InputError(f"cannot measure recall@{k} on a space of {len(emb)} items")
    qids = np.sort(np.random.default_rng(seed).choice(len(emb), n, replace=False)).astype(np.int64)
    normed = emb.normed
    rows = np.arange(n, dtype=np.int64)
    truth, _ = top_k_search(normed, normed[qids], k, rows, qids)
    hits = 0
    times = []
    for r, q in enumerate(qids.tolist()):
        t0 = time.perf_counter()
        got = ann_top_k(index, normed, normed[q : q + 1], k, np.zeros(1, np.int64), np.array([q]))
        times.append(time.perf_counter() - t0)
        if got is None:  # the graph could not answer: count it as a miss, not a silent pass
            continue
        hits += len(np.intersect1d(got[0][0], truth[r]))
    return hits / truth.size, float(np.median(times) * 1000)
