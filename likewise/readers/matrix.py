"""A scipy.sparse user × item matrix (what ``implicit`` trains on) read as baskets.

Row ``r`` is one basket: the columns where it holds a value > 0. The values themselves are not used
(a basket is a set), so counts, confidences and ones give the same baskets. The rows are already packed
ids: a CSR's ``indices`` and ``indptr`` are the column numbers of every basket back to back and where
each basket starts, so no Python object is made per row; :func:`likewise.data.corpus.corpus_from_sequences`
maps the columns to vocabulary ids. scipy is never imported here: the matrix brings its own methods.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._check import check_keys, is_matrix, is_sparse, sparse_rows
from ..errors import InputError

__all__ = ["SparseBaskets", "is_matrix", "is_sparse", "sparse_baskets"]


@dataclass(frozen=True)
class SparseBaskets:
    """The rows of a user × item matrix as baskets of column numbers (see :func:`sparse_baskets`).

    Parameters
    ----------
    indptr : ndarray of int64, shape (n_rows + 1,)
    indices : ndarray of int, shape (indptr[-1],)
        Row ``r`` is the basket of the columns ``indices[indptr[r]:indptr[r + 1]]`` (ascending).
    item_keys : list of str
        The key of each column.
    user_keys : list of str, optional
        The key of each row, when the rows are customers.
    """

    indptr: np.ndarray
    indices: np.ndarray
    item_keys: list[str]
    user_keys: list[str] | None = None

    @property
    def n_rows(self) -> int:
        """Rows of the matrix (baskets, empty ones included)."""
        return len(self.indptr) - 1

    @property
    def n_items(self) -> int:
        """Columns of the matrix."""
        return len(self.item_keys)

    def shape_note(self) -> dict[str, Any]:
        """What a space trained on these rows records (``meta["matrix"]``): ``rows``, ``columns`` and
        ``item_keys``, ``"column numbers"`` when the columns are keyed ``"0"``, ``"1"``, ... else
        ``"given"``, and then ``column_keys``, the key of each column: with them a query matrix needs
        no ``item_keys`` and implicit's names (``similar_items``, ...) answer in columns, after a save
        and a load too."""
        numbered = self.item_keys == [str(j) for j in range(self.n_items)]
        note: dict[str, Any] = {
            "rows": self.n_rows,
            "columns": self.n_items,
            "item_keys": "column numbers" if numbered else "given",
        }
        if not numbered:
            note["column_keys"] = list(self.item_keys)
        return note

    def lines(self, index: Mapping[str, int]) -> tuple[np.ndarray, np.ndarray]:
        """One line per basket item, as :func:`likewise.space.customers.customer_table` reads them.

        Parameters
        ----------
        index : mapping of str to int
            The trained vocabulary's key -> id (``emb.vocab.index``).

        Returns
        -------
        users : ndarray of int64
            The row of each item of each basket.
        ids : ndarray of int64
            The item's id in ``index``; -1 for a column it does not hold (dropped by ``min_count``).
        """
        lut = np.fromiter((index.get(k, -1) for k in self.item_keys), dtype=np.int64, count=self.n_items)
        users = np.repeat(np.arange(self.n_rows, dtype=np.int64), np.diff(self.indptr))
        return users, lut[self.indices]


def sparse_baskets(
    matrix: Any, item_keys: Any = None, user_keys: Any = None, *, name: str = "matrix"
) -> SparseBaskets:
    """Check a scipy.sparse matrix and its keys, and read its rows as baskets.

    Parameters
    ----------
    matrix : scipy.sparse matrix or array, or 2-D NumPy array, shape (n_rows, n_columns)
        Any sparse format (converted with ``.tocsr()``, the caller's matrix unchanged), or dense.
        Values must be finite and >= 0; an entry belongs to its row's basket when its value is > 0.
    item_keys : sequence of str, optional
        One distinct key per column; default: the column numbers as strings, ``"0"``, ``"1"``, ...
    user_keys : sequence of str, optional
        One distinct key per row.
    name : str
        How messages name the matrix.

    Returns
    -------
    SparseBaskets

    Raises
    ------
    InputError
        Not a sparse matrix, not 2-D, no row, column or value > 0, a negative or non-finite value, keys
        of the wrong number or repeated.
    """
    if not is_matrix(matrix):
        raise InputError(
            f"{name} must be a scipy.sparse matrix or a 2-D NumPy array of numbers, "
            f"got {type(matrix).__name__}"
        )
    indptr, indices, (n_rows, n_cols) = sparse_rows(matrix, name)
    if len(indices) == 0:
        raise InputError(f"{name} of shape {(n_rows, n_cols)} holds no value > 0: there are no baskets")
    items = (
        [str(j) for j in range(n_cols)]
        if item_keys is None
        else check_keys(item_keys, n_cols, "item_keys", "column")
    )
    users = None if user_keys is None else check_keys(user_keys, n_rows, "user_keys", "row")
    return SparseBaskets(indptr, indices, items, users)
