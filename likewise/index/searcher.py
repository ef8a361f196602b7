"""How a space answers its cosine top-k: the one choice between an attached index, the int8 scan and
exact search.

A :class:`Searcher` is chosen once for a space's unit rows by :func:`searcher_for` -- when the space
first answers a query, and again when an index is attached or detached -- and every query of the space
(``similar``, ``similar_to_vector``, ``most_similar``, analogies, cosine ``recommend``, implicit's
``similar_items``) calls its ``search``. Each searcher answers what it can and hands the rest to the one
below it:

- :class:`IndexSearcher` -- an attached index (:class:`~likewise.index.HnswIndex`, or any
  :class:`~likewise.index.NeighbourIndex`) answers plain cosine queries over every row through
  :func:`~likewise.index.ann_top_k`; when the graph cannot answer, the searcher below does.
- :class:`ScanSearcher` -- on a space of at least :data:`~likewise.index.SCAN_MIN_ROWS` rows, fewer than
  :data:`~likewise._threads.BATCH_MIN_QUERIES` plain queries go through the int8 scan
  (:func:`~likewise.index.scan_top_k`, exact; its table is built on the first such query).
- :class:`ExactSearcher` -- blocked BLAS products (:func:`~likewise.space.search.top_k_search`): every
  query, including those restricted to some rows and 3CosMul.

All three give the exact search's answer where they answer (same ids, float32 cosines, ties by lower
id), but for an approximate index's recall. A searcher knows unit rows, not keys: the caller resolves
``restrict`` into candidate rows and checks ``k``.
"""

from __future__ import annotations

from typing import Any, Literal, Protocol

import numpy as np

from .._threads import BATCH_MIN_QUERIES
from ..space.search import top_k_search
from ._query import ann_top_k
from .scan import SCAN_MIN_ROWS, ScanTable, scan_top_k

__all__ = ["ExactSearcher", "IndexSearcher", "ScanSearcher", "Searcher", "searcher_for"]

#: Candidate rows of a restricted query: (their unit rows [m, D], their sorted ids, or None when they
#: are the first m rows).
Among = tuple[np.ndarray, np.ndarray | None]
Method = Literal["dot", "cosmul"]


class Searcher(Protocol):
    """What answers a space's top-k queries (:class:`ExactSearcher`, :class:`ScanSearcher`,
    :class:`IndexSearcher`).

    Attributes
    ----------
    normed : ndarray of float32, shape [V, D]
        The unit rows searched.
    plain : Searcher
        This searcher without an index (itself when it has none): what attaching another index keeps.
    """

    normed: np.ndarray
    plain: Searcher

    def search(
        self,
        queries: np.ndarray,
        k: int,
        ex_rows: np.ndarray,
        ex_ids: np.ndarray,
        among: Among | None = None,
        method: Method = "dot",
        n_negative: int = 1,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Top-``k`` ids and scores of each query, best first, ties by lower id.

        Parameters
        ----------
        queries : ndarray of float32, shape [n, D] (``"dot"``) or [n, T, D] (``"cosmul"``)
            Unit query vectors.
        k : int
            Neighbours wanted, >= 1 (checked by the caller); clamped as
            :func:`~likewise.space.search.top_k_search` clamps it.
        ex_rows, ex_ids : ndarray of int64
            Pairs (query row, item id) that must not be returned.
        among : (rows, ids) or None
            Search only these candidates (:data:`Among`); None searches every row.
        method, n_negative
            Those of :func:`~likewise.space.search.top_k_search`.

        Returns
        -------
        (ids, scores) : ndarray of int64 [n, k], ndarray of float32 [n, k]
        """
        ...


def searcher_for(normed: np.ndarray, index: Any = None, *, plain: Searcher | None = None) -> Searcher:
    """The searcher of a space's unit rows: through ``index`` when one is given, else by size.

    Parameters
    ----------
    normed : ndarray of float32, shape [V, D]
        The space's unit rows (kept by reference).
    index : NeighbourIndex, optional
        An index checked against the space (:func:`~likewise.index.check_index_for`).
    plain : Searcher, optional
        The index-free searcher of these same rows, already made: kept, so that its int8 table is not
        built again when an index is attached or detached.
    """
    if plain is None:
        plain = ScanSearcher(normed) if len(normed) >= SCAN_MIN_ROWS else ExactSearcher(normed)
    return plain if index is None else IndexSearcher(index, plain)


class ExactSearcher:
    """Exact search over the unit rows (or a restriction of them): the answer the others give."""

    def __init__(self, normed: np.ndarray) -> None:
        self.normed = normed
        self.plain = self

    def __repr__(self) -> str:
        return f"ExactSearcher({len(self.normed)} rows)"

    def search(
        self,
        queries: np.ndarray,
        k: int,
        ex_rows: np.ndarray,
        ex_ids: np.ndarray,
        among: Among | None = None,
        method: Method = "dot",
        n_negative: int = 1,
    ) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`Searcher.search`: map exclusions into candidate positions, search, map positions back."""
        table, cand = (self.normed, None) if among is None else among
        ex_rows = np.asarray(ex_rows, dtype=np.int64)
        ex_ids = np.asarray(ex_ids, dtype=np.int64)
        if cand is None:
            keep = ex_ids < table.shape[0]
            ex_pos = ex_ids[keep]
        else:
            pos = np.minimum(np.searchsorted(cand, ex_ids), len(cand) - 1)
            keep = cand[pos] == ex_ids
            ex_pos = pos[keep]
        rows, scores = top_k_search(
            table, queries, k, ex_rows[keep], ex_pos, method=method, n_negative=n_negative
        )
        return (rows if cand is None else cand[rows]), scores


class ScanSearcher(ExactSearcher):
    """Exact search of a large space, few plain queries through the int8 scan: a quarter of the reads."""

    def __init__(self, normed: np.ndarray) -> None:
        super().__init__(normed)
        self.table = ScanTable(normed)  # the codes are built on the first scanned query

    def __repr__(self) -> str:
        return f"ScanSearcher({len(self.normed)} rows)"

    def search(
        self,
        queries: np.ndarray,
        k: int,
        ex_rows: np.ndarray,
        ex_ids: np.ndarray,
        among: Among | None = None,
        method: Method = "dot",
        n_negative: int = 1,
    ) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`Searcher.search`, through the scan when it can answer (a batch is a BLAS product)."""
        if among is None and method == "dot" and len(queries) < BATCH_MIN_QUERIES:
            found = scan_top_k(self.table, queries, k, ex_rows, ex_ids)
            if found is not None:
                return found
        return super().search(queries, k, ex_rows, ex_ids, among, method, n_negative)


class IndexSearcher:
    """Plain cosine queries over every row through an index; the rest by ``plain``.

    Parameters
    ----------
    index : NeighbourIndex
        Built on the rows of ``plain`` (checked by the caller).
    plain : Searcher
        The index-free searcher of the same rows.
    """

    def __init__(self, index: Any, plain: Searcher) -> None:
        self.index = index
        self.plain = plain
        self.normed = plain.normed

    def __repr__(self) -> str:
        return f"IndexSearcher({self.index!r}, then {self.plain!r})"

    def search(
        self,
        queries: np.ndarray,
        k: int,
        ex_rows: np.ndarray,
        ex_ids: np.ndarray,
        among: Among | None = None,
        method: Method = "dot",
        n_negative: int = 1,
    ) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`Searcher.search`, approximately: exclusions kept, candidates rescored exactly."""
        if among is None and method == "dot":
            found = ann_top_k(self.index, self.normed, queries, k, ex_rows, ex_ids)
            if found is not None:
                return found
        return self.plain.search(queries, k, ex_rows, ex_ids, among, method, n_negative)
