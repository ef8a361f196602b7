"""implicit's query names on a space trained from a user × item matrix, answering in matrix columns.

:class:`ImplicitNames` is a mixin of :class:`~likewise.space.embeddings.Embeddings` (its methods are
``Embeddings`` methods). A space trained with ``likewise.train(user_items)`` remembers the matrix's
columns (``meta["matrix"]``, saved with it), so code written for ``implicit`` keeps implicit's meaning:
ids in and out are matrix columns (and user ids matrix rows), and the answers are implicit's
``(ids, scores)`` NumPy arrays, 1-D for one query and 2-D for a batch. Each name translates onto the
space's own queries (:meth:`recommend`'s basket path, the shared ``search_rows`` plumbing), so it answers
what likewise answers; the scores are likewise's (cosines, or :meth:`recommend`'s completion scores),
not ALS dot products.

Where implicit means something likewise does not do, the call raises :class:`InputError` naming the
option, never a silently different answer: ``filter_already_liked_items=False`` (a basket's own items
are never proposed), ``recalculate_item=True`` (there are no user factors to solve an item from). A
user's recommendations are always computed from the row given (``recalculate_user=True``'s meaning);
likewise keeps no user factors that could be stale, so ``recalculate_user=False`` answers the same.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .._arrays import unique
from .._check import check_k, check_keys, is_batch, is_matrix, sparse_rows
from ..errors import InputError, ItemIndexError, NotFittedError
from .search import top_k_search

__all__ = ["ImplicitNames"]


def _id_array(x: Any, name: str) -> tuple[np.ndarray, bool]:
    """One int (single) or a 1-D sequence of ints (batch) -> (int64 array, single?)."""
    if isinstance(x, int | np.integer) and not isinstance(x, bool):
        return np.array([int(x)], dtype=np.int64), True
    arr = np.asarray(x) if is_batch(x) or isinstance(x, np.ndarray) else None
    if arr is None or arr.ndim != 1 or (arr.size and arr.dtype.kind not in "iu"):
        raise InputError(f"{name} must be an int or a 1-D sequence of ints, got {type(x).__name__} {x!r}")
    return arr.astype(np.int64), False


class ImplicitNames:
    """``recommend(userid, user_items, N=...)``'s implicit path, ``similar_items``, ``similar_users``,
    ``item_factors`` and ``user_factors`` (mixed into ``Embeddings``)."""

    _columns: tuple[Any, np.ndarray, np.ndarray] | None = None

    # ---- the matrix's columns --------------------------------------------------------------------------

    def _matrix_note(self, caller: str) -> dict[str, Any]:
        note = (self.meta or {}).get("matrix")  # type: ignore[attr-defined]
        if not note:
            raise InputError(
                f"{caller} is implicit's name for a space trained on a user × item matrix "
                "(likewise.train(user_items)); this space was not: use similar() / recommend() with keys"
            )
        return note

    def column_keys(self) -> list[str]:
        """The key of each column of the matrix this space was trained on (``"0"``, ``"1"``, ... when
        no ``item_keys`` were given).

        Raises
        ------
        InputError
            The space was not trained on a matrix, or was saved by a version that did not keep the keys
            it was given.
        """
        note = self._matrix_note("column_keys")
        if note.get("item_keys") == "column numbers":
            return [str(j) for j in range(int(note["columns"]))]
        keys = note.get("column_keys")
        if keys is None:
            raise InputError(
                "this space was trained with item_keys= by a version that did not keep them: "
                "retrain it, or name the columns with item_keys= where a query takes a matrix"
            )
        return list(keys)

    def _column_map(self) -> tuple[np.ndarray, np.ndarray]:
        """(likewise id of each column, -1 for a column without a vector; column of each id, -1 if none)."""
        vocab = self.vocab  # type: ignore[attr-defined]
        if self._columns is None or self._columns[0] is not vocab:
            keys = self.column_keys()
            index = vocab.index
            id_of_col = np.fromiter((index.get(k, -1) for k in keys), dtype=np.int64, count=len(keys))
            col_of_id = np.full(len(vocab), -1, dtype=np.int64)
            known = id_of_col >= 0
            col_of_id[id_of_col[known]] = np.flatnonzero(known)
            self._columns = (vocab, id_of_col, col_of_id)
        return self._columns[1], self._columns[2]

    def public_ids(self, rows: np.ndarray) -> np.ndarray:
        """The ids answers give for ``rows``: the rows themselves, or in a space trained from a matrix its
        columns (a row without a column, added after training, keeps its row)."""
        rows = np.asarray(rows, dtype=np.int64)
        if not (self.meta or {}).get("matrix"):  # type: ignore[attr-defined]
            return rows
        col_of_id = self._column_map()[1]
        cols = col_of_id[rows]
        return np.where(cols >= 0, cols, rows)

    def matrix_baskets(self, matrix: object, item_keys: Sequence[str] | None = None) -> list[list[str]]:
        """The rows of a sparse matrix as baskets of keys: how :meth:`recommend` reads a matrix.

        Parameters
        ----------
        matrix : scipy.sparse matrix
            A basket per row: the columns where it holds a value > 0.
        item_keys : sequence of str, optional
            The key of each column; default: the columns of the matrix the space was trained on
            (:meth:`column_keys`).

        Returns
        -------
        list of list of str

        Raises
        ------
        InputError
            No ``item_keys`` for a space not trained from a matrix, another number of columns, or a
            row with no value > 0.
        """
        indptr, indices, (n_rows, n_cols) = sparse_rows(matrix)
        if item_keys is None:
            trained = (self.meta or {}).get("matrix") or {}
            if not trained:
                raise InputError(
                    f"this space was not trained from a matrix: name the {n_cols} columns of the matrix "
                    "with item_keys="
                )
            if n_cols != trained.get("columns"):
                raise InputError(
                    f"the matrix has {n_cols} columns, the space was trained on {trained.get('columns')}: "
                    "give the same columns, or name them with item_keys="
                )
        keys = np.array(
            self.column_keys() if item_keys is None else check_keys(item_keys, n_cols, "item_keys", "column"),
            dtype=object,
        )
        empty = np.flatnonzero(np.diff(indptr) == 0)
        if len(empty):
            raise InputError(
                f"row {int(empty[0])} of the matrix ({len(empty)} of its {n_rows} rows) has no value > 0: "
                "nothing to complete (drop empty rows first)"
            )
        return [keys[indices[indptr[r] : indptr[r + 1]]].tolist() for r in range(n_rows)]

    def _ids_of_columns(self, cols: np.ndarray, name: str) -> np.ndarray:
        """The likewise ids of matrix columns; an out-of-range or vector-less column raises, saying why."""
        id_of_col, _ = self._column_map()
        bad = (cols < 0) | (cols >= len(id_of_col))
        if bad.any():
            raise ItemIndexError(int(cols[bad][0]), len(id_of_col), what=f"{name} (a matrix column)")
        ids = id_of_col[cols]
        if (ids < 0).any():
            col = int(cols[ids < 0][0])
            raise self.vocab.unknown(self.column_keys()[col])  # type: ignore[attr-defined]
        return ids

    def _candidates_of(self, filter_items: Any, items: Any) -> np.ndarray | None:
        """The likewise ids a query may return, from implicit's ``filter_items`` / ``items`` (columns)."""
        if filter_items is not None and items is not None:
            raise InputError("give filter_items= or items=, not both (as implicit)")
        id_of_col, col_of_id = self._column_map()
        if items is not None:
            return unique(self._ids_of_columns(_id_array(items, "items")[0], "items"))
        allowed = col_of_id >= 0
        if filter_items is not None:
            cols, _ = _id_array(filter_items, "filter_items")
            cols = cols[(cols >= 0) & (cols < len(id_of_col))]
            ids = id_of_col[cols]
            allowed[ids[ids >= 0]] = False
        if allowed.all():
            return None
        if not allowed.any():
            raise InputError("filter_items= leaves no item to return")
        return np.flatnonzero(allowed)

    @property
    def item_factors(self) -> np.ndarray:
        """implicit's ``item_factors``: the raw vector of each matrix column, float32 [columns, D].

        Row ``j`` is column ``j``'s vector (``emb.vectors`` is in likewise's id order); a column
        without a vector (empty, or dropped by ``min_count``) is a row of zeros.
        """
        id_of_col, _ = self._column_map()
        out = np.zeros((len(id_of_col), self.dim), dtype=np.float32)  # type: ignore[attr-defined]
        known = id_of_col >= 0
        out[known] = self.vectors[id_of_col[known]]  # type: ignore[attr-defined]
        return out

    @property
    def user_factors(self) -> np.ndarray:
        """implicit's ``user_factors``: the customer vector of each matrix row, float32 [rows, D]."""
        return np.asarray(self._user_table("user_factors").vectors)

    def _user_table(self, caller: str) -> Any:
        note = self._matrix_note(caller)
        table = self.customers  # type: ignore[attr-defined]
        if table is None:
            raise NotFittedError(
                f"{caller} needs user vectors: train with user_keys= (one key per matrix row), "
                "e.g. likewise.train(user_items, user_keys=[str(u) for u in range(user_items.shape[0])])"
            )
        if len(table) != note.get("rows"):
            raise InputError(
                f"the customer table has {len(table)} rows, the training matrix {note.get('rows')}: "
                "its rows are not the matrix's; name customers by key with emb.customers"
            )
        return table

    # ---- queries ---------------------------------------------------------------------------------------

    def similar_items(
        self,
        itemid: Any,
        N: int = 10,
        recalculate_item: bool = False,
        item_users: Any = None,
        filter_items: Any = None,
        items: Any = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """implicit's ``similar_items``: the ``N`` columns most cosine-similar to a column, itself included.

        Parameters
        ----------
        itemid : int or sequence of int
            A matrix column (1-D answer) or several (2-D answer).
        N : int
            Results per query, >= 1; clamped to the candidates available.
        recalculate_item, item_users
            Not supported (likewise has no user factors to solve an item from): ``True`` raises.
        filter_items, items : sequence of int, optional
            Columns never returned, or the only columns returned (not both).

        Returns
        -------
        ids : ndarray of int64, shape [N] or [n, N]
            Matrix columns, best first (the query column first, at cosine 1, as implicit gives it).
        scores : ndarray of float32
            Cosines.
        """
        if recalculate_item or item_users is not None:
            raise InputError(
                "recalculate_item / item_users: likewise has no user factors to solve a new item from; "
                "add the item's baskets with likewise.retail.update.update (`likewise update`), then ask "
                "similar_items"
            )
        cols, single = _id_array(itemid, "itemid")
        ids = self._ids_of_columns(cols, "itemid")
        restrict = self._candidates_of(filter_items, items)
        empty = np.zeros(0, dtype=np.int64)
        found, scores = self.search_rows(self.normed[ids], check_k(N), restrict, empty, empty)  # type: ignore[attr-defined]
        out = self._column_map()[1][found]
        return (out[0], scores[0]) if single else (out, scores)

    def similar_users(
        self, userid: Any, N: int = 10, filter_users: Any = None, users: Any = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """implicit's ``similar_users``: the ``N`` matrix rows whose customer vectors are most cosine-similar.

        Needs a space trained with ``user_keys`` (one customer per matrix row). The query row is
        included (first, at cosine 1), as implicit gives it.

        Parameters
        ----------
        userid : int or sequence of int
            A matrix row, or several (2-D answer).
        N : int
            Results per query, >= 1; clamped to the rows available.
        filter_users, users : sequence of int, optional
            Rows never returned, or the only rows returned (not both).

        Returns
        -------
        ids : ndarray of int64, shape [N] or [n, N]
            Matrix rows, best first.
        scores : ndarray of float32
        """
        table = self._user_table("similar_users")
        rows, single = _id_array(userid, "userid")
        n = len(table)
        if ((rows < 0) | (rows >= n)).any():
            raise ItemIndexError(int(rows[(rows < 0) | (rows >= n)][0]), n, what="userid (a matrix row)")
        if filter_users is not None and users is not None:
            raise InputError("give filter_users= or users=, not both (as implicit)")
        cand = np.arange(n, dtype=np.int64)
        if users is not None:
            cand = unique(_id_array(users, "users")[0])
            cand = cand[(cand >= 0) & (cand < n)]
        elif filter_users is not None:
            cand = np.setdiff1d(cand, _id_array(filter_users, "filter_users")[0])
        if len(cand) == 0:
            raise InputError("no user left to return")
        empty = np.zeros(0, dtype=np.int64)
        prof = table.profiles  # what sets users apart, as similar_customers compares them
        found, scores = top_k_search(prof[cand], prof[rows], check_k(N), empty, empty)
        out = cand[found]
        return (out[0], scores[0]) if single else (out, scores)

    def implicit_recommend(
        self,
        userid: Any,
        user_items: Any,
        N: int = 10,
        *,
        filter_already_liked_items: bool = True,
        filter_items: Any = None,
        items: Any = None,
        scoring: Any = "auto",
    ) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`recommend` called as implicit's ``recommend(userid, user_items, N=...)`` (which it
        delegates to this): ``(ids, scores)`` in matrix columns, 1-D for one ``userid``, 2-D for several.

        Parameters are implicit's (see :meth:`recommend`); ``scoring`` is :meth:`recommend`'s.
        """
        if not filter_already_liked_items:
            raise InputError(
                "filter_already_liked_items=False: likewise never proposes a basket's own items; "
                "to rank them too, score them with emb.similarity or emb.affinity_top_k"
            )
        self._matrix_note("recommend(userid, user_items, N=...)")  # columns mean something only then
        if not is_matrix(user_items):
            raise InputError(f"user_items must be a scipy.sparse matrix, got {type(user_items).__name__}")
        rows, single = _id_array(userid, "userid")
        if user_items.shape[0] != len(rows):
            raise InputError(
                f"user_items has {user_items.shape[0]} rows for {len(rows)} userid(s): give one row per "
                "user, user_items[userid] (as implicit)"
            )
        baskets = self.matrix_baskets(user_items)
        restrict = self._candidates_of(filter_items, items)
        got = self.recommend(baskets, k=N, restrict=restrict, scoring=scoring)  # type: ignore[attr-defined]
        out = got.ids  # already matrix columns: every answer of a matrix-trained space is (public_ids)
        return (out[0], got.scores[0]) if single else (out, got.scores)
