"""Brute-force search behind the index interface: the oracle every approximate index is measured against.

As hnswlib keeps ``BFIndex`` beside its HNSW graph, :class:`ExactIndex` answers ``search(queries, k)``
exactly (blocked BLAS products and :func:`likewise.space.search.top_k_search`), so code and tests written
against the interface run with either, and recall is a comparison of two objects of one API.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..space.search import top_k_search
from ._query import Space, check_search

__all__ = ["ExactIndex"]


class ExactIndex:
    """Exact nearest neighbours (inner product on unit vectors) over one space.

    Parameters
    ----------
    normed : ndarray of float32, shape [V, D]
        Unit-normalised vectors (``emb.normed``); kept by reference, not copied.
    fingerprint : str
        The space's fingerprint.

    Attributes
    ----------
    fingerprint : str
    size, dim : int
    info : dict
        ``{"recall_at_10": 1.0}``: exact by construction.
    """

    library = "exact"

    def __init__(self, normed: np.ndarray, *, fingerprint: str) -> None:
        arr = np.asarray(normed)
        if arr.ndim != 2 or arr.dtype != np.float32:
            raise InputError(f"normed must be float32 [V, D], got {arr.dtype} {arr.shape}")
        self._normed = arr
        self.fingerprint = fingerprint
        self.size, self.dim = (int(x) for x in arr.shape)
        self.info = {"recall_at_10": 1.0}

    @classmethod
    def of(cls, emb: Space) -> ExactIndex:
        """The exact index of a space."""
        return cls(emb.normed, fingerprint=emb.fingerprint)

    def __repr__(self) -> str:
        return f"ExactIndex({self.size} items × {self.dim} dims, fingerprint={self.fingerprint!r})"

    @property
    def loaded(self) -> bool:
        """Always True: the vectors are the index."""
        return True

    def warm(self) -> None:
        """Nothing to read."""

    def search(self, queries: np.ndarray, k: int) -> np.ndarray:
        """:meth:`NeighbourIndex.search`, exactly: ties by lower id, as exact search orders them."""
        k = check_search(queries, k, self.size, self.dim)
        none = np.zeros(0, dtype=np.int64)
        ids, _ = top_k_search(self._normed, np.asarray(queries, dtype=np.float32), k, none, none)
        return ids
