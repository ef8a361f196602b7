"""Customer vectors in a product space (:class:`CustomerTable`), saved with the space they live in.

The table is built by :func:`likewise.retail.build_customer_vectors` and attached to an
:class:`~likewise.embeddings.Embeddings` (``emb.customers``); it holds only arrays and a vocabulary, so
the space can load it without the retail layer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from .errors import InputError
from .search import normalise_rows
from .space import items_frame, items_table
from .vocab import Vocab

if TYPE_CHECKING:  # pyarrow and pandas are imported inside the methods that need them
    import pandas as pd
    import pyarrow as pa

__all__ = ["CustomerTable"]


class CustomerTable:
    """Customer vectors in a product space, with each customer's bought products.

    Parameters
    ----------
    vectors : ndarray of float32, shape [n, D]
        One row per customer (a weighted mean of unit product vectors).
    vocab : Vocab
        Customer keys (``what="customer"``); counts are the number of lines of each customer.
    bought_indptr : ndarray of int64, shape [n + 1]
    bought_ids : ndarray of int32
        Customer ``i`` bought the product ids ``bought_ids[bought_indptr[i]:bought_indptr[i + 1]]``
        (sorted, unique).
    fingerprint : str
        The product space's fingerprint (customer vectors live in that space).
    config : dict, optional
        How the vectors were built (weights), saved with them.
    """

    def __init__(
        self,
        vectors: np.ndarray,
        vocab: Vocab,
        bought_indptr: np.ndarray,
        bought_ids: np.ndarray,
        *,
        fingerprint: str,
        config: dict[str, Any] | None = None,
    ) -> None:
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        if vectors.ndim != 2 or vectors.shape[0] != len(vocab):
            raise InputError(f"customer vectors have shape {vectors.shape}, expected ({len(vocab)}, dim)")
        indptr = np.ascontiguousarray(bought_indptr, dtype=np.int64)
        ids = np.ascontiguousarray(bought_ids, dtype=np.int32)
        if indptr.shape != (len(vocab) + 1,) or indptr[0] != 0 or indptr[-1] != len(ids):
            raise InputError(
                f"bought_indptr must have {len(vocab) + 1} entries from 0 to {len(ids)}, got shape "
                f"{indptr.shape}"
            )
        if np.any(np.diff(indptr) < 0):
            raise InputError("bought_indptr must be non-decreasing")
        view = vectors.view()
        view.flags.writeable = False
        self._vectors = view
        self.vocab = vocab
        self.bought_indptr = indptr
        self.bought_ids = ids
        self.fingerprint = fingerprint
        self.config: dict[str, Any] = dict(config or {})
        self._normed: np.ndarray | None = None

    @property
    def keys(self) -> list[str]:
        """Customer keys in row order."""
        return self.vocab.keys

    @property
    def vectors(self) -> np.ndarray:
        """float32 [n, D], read-only."""
        return self._vectors

    @property
    def dim(self) -> int:
        """Number of dimensions (the product space's)."""
        return int(self._vectors.shape[1])

    @property
    def normed(self) -> np.ndarray:
        """Unit-length rows (cached)."""
        if self._normed is None:
            self._normed = normalise_rows(self._vectors)
            self._normed.flags.writeable = False
        return self._normed

    def __len__(self) -> int:
        return len(self.vocab)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and key in self.vocab

    def __repr__(self) -> str:
        return f"CustomerTable({len(self)} customers × {self.dim} dims, fingerprint={self.fingerprint!r})"

    def row(self, customer: str | int) -> int:
        """Row of a customer key (or a row number, checked); unknown keys raise ``UnknownItemError``."""
        if isinstance(customer, str):
            return self.vocab.id(customer)
        return int(self.vocab.check_ids([customer])[0])

    def bought(self, customer: str | int) -> np.ndarray:
        """Product ids the customer bought (sorted, unique)."""
        r = self.row(customer)
        return self.bought_ids[self.bought_indptr[r] : self.bought_indptr[r + 1]]

    def to_arrow(self, *, norm: bool = False) -> pa.Table:
        """The customers as a pyarrow Table, one row per customer in row order.

        Parameters
        ----------
        norm : bool
            Export the unit-length vectors instead of the raw ones.

        Returns
        -------
        pyarrow.Table
            Columns ``key`` (the customer id), ``id`` (the row), ``count`` (lines in the log) and
            ``vector`` (``fixed_size_list<float32>[D]``, in the product space); the schema metadata
            holds ``likewise.fingerprint`` (the product space's) and ``likewise.what`` = ``customer``.
        """
        return items_table(
            self.keys,
            self.vocab.counts,
            self.normed if norm else self._vectors,
            {"likewise.fingerprint": self.fingerprint, "likewise.what": "customer"},
        )

    def to_pandas(self, *, norm: bool = False) -> pd.DataFrame:
        """The columns of :meth:`to_arrow` as a pandas DataFrame (``df.attrs["fingerprint"]`` set).

        Raises
        ------
        MissingDependencyError
            pandas is not installed.
        """
        vectors = self.normed if norm else self._vectors
        return items_frame(
            self.keys, self.vocab.counts, vectors, self.fingerprint, "CustomerTable.to_pandas()"
        )
