"""Exact top-k of a single query over a large space: the int8 scan kernel, then float32 rescoring.

``Embeddings.similar`` and friends answer a few queries over a space of at least
:data:`SCAN_MIN_ROWS` rows this way (without ``restrict``, and without an attached index or where it
cannot answer; :class:`~likewise.index.ScanSearcher` makes the choice): a pass over
an int8 copy of the unit rows finds every row that may be in the top ``k``
(:func:`likewise.kernels.scan.scan_candidates`, exact by its error bounds), and those rows are
rescored on the float32 table. The answer is the exact search's: same ids, same float32 cosines, ties
by lower id. The copy costs ``D'`` + 8 bytes a row (``D'`` = ``D`` rounded up to 16), built on the
first such query; numba is loaded then too.
"""

from __future__ import annotations

import threading

import numpy as np

from .._arrays import unique
from ..space.search import select_top_k

__all__ = ["SCAN_MIN_ROWS", "ScanTable", "scan_top_k"]

#: Spaces with at least this many rows answer single exact queries through the int8 scan.
SCAN_MIN_ROWS = 1 << 18


class ScanTable:
    """The int8 codes of a space's unit rows with their scales and error bounds (built lazily, once).

    Parameters
    ----------
    normed : ndarray of float32, shape [V, D]
        The unit rows (kept by reference for the rescoring).
    """

    def __init__(self, normed: np.ndarray) -> None:
        self.normed = normed
        self._codes: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self._lock = threading.Lock()

    def codes(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(codes, scale, err)`` of :func:`likewise.kernels.scan.quantize_rows`, built on first use."""
        if self._codes is None:
            with self._lock:
                if self._codes is None:
                    from ..kernels.scan import quantize_rows

                    self._codes = quantize_rows(self.normed)
        return self._codes


def scan_top_k(
    table: ScanTable, queries: np.ndarray, k: int, ex_rows: np.ndarray, ex_ids: np.ndarray
) -> tuple[np.ndarray, np.ndarray] | None:
    """Exact top-``k`` of each unit query through the scan; None when it cannot answer (then search all).

    Parameters
    ----------
    table : ScanTable
    queries : ndarray of float32, shape [n, D]
        Unit query vectors.
    k : int
        Neighbours wanted, >= 1.
    ex_rows, ex_ids : ndarray of int64
        Pairs (query row, item id) that must not be returned.

    Returns
    -------
    (ids, scores) : ndarray of int64 [n, k], ndarray of float32 [n, k], or None
        As :func:`likewise.space.search.top_k_search` returns them; None when a query has fewer than ``k``
        rows left or too many candidates.
    """
    from ..kernels.scan import scan_candidates

    codes, scale, err = table.codes()
    normed = table.normed
    n = len(queries)
    ex_rows = np.asarray(ex_rows, dtype=np.int64)
    ex_ids = np.asarray(ex_ids, dtype=np.int64)
    out_ids = np.empty((n, k), dtype=np.int64)
    out_scores = np.empty((n, k), dtype=np.float32)
    for r in range(n):
        excluded = unique(ex_ids[ex_rows == r])
        if len(normed) - len(excluded) < k:
            return None
        cand = scan_candidates(codes, scale, err, queries[r], k, excluded)
        if cand is None or len(cand) < k:
            return None
        scores = normed[cand] @ queries[r]
        pos, sc = select_top_k(scores[None, :], k)  # candidates ascend, so ties go to the lower id
        out_ids[r], out_scores[r] = cand[pos[0]], sc[0]
    return out_ids, out_scores
