"""A trained embedding space: vectors + vocabulary + fingerprint, and the queries on it.

Read top to bottom:

1. :class:`SpaceVector` -- an ``np.ndarray`` that remembers which space it came from, so that
   ``king - man + woman`` across two different models raises instead of returning nonsense.
2. :class:`Neighbours` -- the small typed result every query returns (1-D for one query, 2-D for a batch).
3. :func:`top_k_search` -- the pure kernel: blocked matrix products through BLAS, top-k by
   ``np.argpartition`` and a deterministic tie-break by id. It sees only arrays and scalars.
4. :class:`Embeddings` -- a thin class that validates its arguments, resolves keys to ids and calls
   the kernel.

All scores are cosines computed on unit-normalised vectors (except 3CosMul, whose score is documented on
:meth:`Embeddings.analogy`). Results are best first; equal scores are ordered by ascending id so that two
runs on the same space always agree.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from .errors import InputError, ItemIndexError, MissingDependencyError, NotFittedError, SpaceMismatchError
from .vocab import OnUnknown, Vocab

if TYPE_CHECKING:  # pyarrow and pandas are imported inside the methods that need them
    import pandas as pd
    import pyarrow as pa

__all__ = ["Embeddings", "Neighbours", "SpaceVector", "compute_fingerprint", "top_k_search"]

FINGERPRINT_PREFIX = "lw1-"
_BLOCK_ELEMS = 1 << 23  # scores computed per block: 8M float32 = 32 MiB, whatever the batch size
_COSMUL_EPS = 1e-6  # gensim's most_similar_cosmul epsilon

Item = str | int | np.integer
Restrict = int | Sequence[Item] | set | frozenset | np.ndarray | None


# --------------------------------------------------------------------------------------------------------
# SpaceVector
# --------------------------------------------------------------------------------------------------------


def _fingerprints_in(objs: Sequence[Any]) -> list[str]:
    """Distinct fingerprints of the SpaceVectors in ``objs`` (one level of list/tuple nesting), in order."""
    found: list[str] = []
    for x in objs:
        inner = x if isinstance(x, list | tuple) else (x,)
        for y in inner:
            fp = getattr(y, "fingerprint", None) if isinstance(y, SpaceVector) else None
            if fp is not None and fp not in found:
                found.append(fp)
    return found


class SpaceVector(np.ndarray):
    """A vector (1-D) or stack of vectors (2-D) that remembers the space it came from.

    Arithmetic between two SpaceVectors of different spaces raises :class:`SpaceMismatchError`; the
    result of same-space arithmetic (or arithmetic with plain arrays and scalars) keeps the fingerprint.
    ``np.asarray(v)`` returns a plain ``ndarray`` view.

    Attributes
    ----------
    fingerprint : str or None
        Fingerprint of the originating space.
    """

    fingerprint: str | None

    def __new__(cls, data: Any, fingerprint: str | None) -> SpaceVector:
        obj = np.asarray(data).view(cls)
        obj.fingerprint = fingerprint
        return obj

    def __array_finalize__(self, obj: Any) -> None:
        self.fingerprint = getattr(obj, "fingerprint", None)

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        outs = kwargs.get("out") or ()
        fps = _fingerprints_in((*inputs, *outs))
        if len(fps) > 1:
            raise SpaceMismatchError(fps[0], fps[1], what="vector")
        plain_inputs = tuple(np.asarray(x) if isinstance(x, SpaceVector) else x for x in inputs)
        if outs:
            kwargs["out"] = tuple(np.asarray(x) if isinstance(x, SpaceVector) else x for x in outs)
        result = getattr(ufunc, method)(*plain_inputs, **kwargs)
        if result is NotImplemented or method == "at":
            return result
        if outs:
            return outs[0] if len(outs) == 1 else outs
        fp = fps[0] if fps else None

        def wrap(r: Any) -> Any:
            if isinstance(r, np.ndarray) and r.ndim >= 1:
                return SpaceVector(r, fp)
            return r

        return tuple(wrap(r) for r in result) if isinstance(result, tuple) else wrap(result)

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        # np.dot, np.inner, np.concatenate, np.vstack ... are not ufuncs; check them too.
        fps = _fingerprints_in((*args, *kwargs.values()))
        if len(fps) > 1:
            raise SpaceMismatchError(fps[0], fps[1], what="vector")
        return super().__array_function__(func, types, args, kwargs)

    def dot(self, b: Any, out: Any = None) -> Any:
        """``v.dot(w)``: the method bypasses both hooks above, so route it through ``np.dot``."""
        return np.dot(self, b, out=out)

    def __reduce__(self) -> Any:  # keep the fingerprint through copy.deepcopy / multiprocessing
        return (SpaceVector, (np.asarray(self).copy(), self.fingerprint))


# --------------------------------------------------------------------------------------------------------
# Neighbours
# --------------------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Neighbours:
    """Result of a neighbour query, best first.

    For one query ``ids`` and ``scores`` are 1-D of length k, ``keys`` is ``list[str]``, ``len()`` is k and
    iterating yields ``(key, score)`` pairs. For a batch they are 2-D ``[n_queries, k]``, ``keys`` is
    ``list[list[str]]``, ``len()`` is the number of queries and iterating (or indexing) yields one 1-D
    :class:`Neighbours` per query.

    Attributes
    ----------
    keys : list of str, or list of list of str
        Keys of the neighbours.
    ids : ndarray of int64, shape [k] or [n, k]
        Ids of the neighbours.
    scores : ndarray of float32, shape [k] or [n, k]
        Their scores (cosine similarity unless the query documents otherwise).
    queries : ndarray of int64, shape [n], optional
        For a batch: the position in the input batch that each row answers. Equal to ``arange(n)`` unless
        unknown queries were skipped with ``on_unknown="skip"``. ``None`` for one query.
    """

    keys: list[str] | list[list[str]]
    ids: np.ndarray
    scores: np.ndarray
    queries: np.ndarray | None = None

    @property
    def batched(self) -> bool:
        """True for a 2-D (batch) result."""
        return self.ids.ndim == 2

    def __len__(self) -> int:
        return int(self.ids.shape[0])

    def __iter__(self) -> Iterator[Any]:
        if self.batched:
            for i in range(len(self)):
                yield self[i]
        else:
            yield from zip(self.keys, self.scores.tolist(), strict=True)  # type: ignore[arg-type]

    def __getitem__(self, i: int) -> Any:
        """One query's :class:`Neighbours` of a batch, or the ``(key, score)`` pair ``i`` of one query."""
        if self.batched:
            return Neighbours(list(self.keys[i]), self.ids[i], self.scores[i])  # type: ignore[arg-type]
        return self.keys[i], float(self.scores[i])

    def __repr__(self) -> str:
        if self.batched:
            return f"Neighbours({len(self)} queries × {self.ids.shape[1]} neighbours)"
        pairs = ", ".join(f"{k!r}: {s:.3f}" for k, s in list(self)[:5])
        more = ", ..." if len(self) > 5 else ""
        return f"Neighbours({{{pairs}{more}}})"

    def to_records(self) -> list[dict[str, Any]]:
        """Plain-Python rows for JSON output.

        Returns
        -------
        list of dict
            ``{"rank", "key", "id", "score"}`` per neighbour (rank starts at 1); batch results add
            ``"query"``, the position of the query in the input batch.
        """
        if not self.batched:
            return [
                {"rank": r + 1, "key": k, "id": int(i), "score": float(s)}
                for r, (k, i, s) in enumerate(
                    zip(self.keys, self.ids.tolist(), self.scores.tolist(), strict=True)
                )
            ]
        queries = self.queries if self.queries is not None else np.arange(len(self))
        out: list[dict[str, Any]] = []
        for q, keys, ids, scores in zip(
            queries.tolist(), self.keys, self.ids.tolist(), self.scores.tolist(), strict=True
        ):
            out.extend(
                {"query": q, "rank": r + 1, "key": k, "id": int(i), "score": float(s)}
                for r, (k, i, s) in enumerate(zip(keys, ids, scores, strict=True))  # type: ignore[arg-type]
            )
        return out


# --------------------------------------------------------------------------------------------------------
# The kernel (pure: arrays and scalars in, arrays out)
# --------------------------------------------------------------------------------------------------------


def _select_top_k(scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Columns of the ``k`` largest entries of each row of ``scores`` [n, C], best first, ties by column."""
    n, n_cols = scores.shape
    if k >= n_cols:
        sel = np.broadcast_to(np.arange(n_cols, dtype=np.int64), (n, n_cols)).copy()
    else:
        sel = np.argpartition(scores, n_cols - k, axis=1)[:, n_cols - k :].astype(np.int64)
        # argpartition picks arbitrarily among entries equal to the k-th largest value; redo those rows
        # so that the lowest columns win, which makes results independent of the partition algorithm.
        thresh = np.take_along_axis(scores, sel, axis=1).min(axis=1)
        n_ge = np.count_nonzero(scores >= thresh[:, None], axis=1)
        for r in np.flatnonzero(n_ge > k):
            row, t = scores[r], thresh[r]
            above = np.flatnonzero(row > t)
            tied = np.flatnonzero(row == t)[: k - len(above)]
            sel[r] = np.concatenate([above, tied])
    vals = np.take_along_axis(scores, sel, axis=1)
    order = np.lexsort((sel, -vals), axis=-1)
    return np.take_along_axis(sel, order, axis=1), np.take_along_axis(vals, order, axis=1)


def top_k_search(
    table: np.ndarray,
    queries: np.ndarray,
    k: int,
    ex_rows: np.ndarray,
    ex_cols: np.ndarray,
    method: Literal["dot", "cosmul"] = "dot",
    block_elems: int = _BLOCK_ELEMS,
) -> tuple[np.ndarray, np.ndarray]:
    """Top-``k`` rows of ``table`` for each query, best first, ties broken by lower row.

    Parameters
    ----------
    table : ndarray of float32, shape [C, D]
        Candidate vectors (unit-normalised for cosine scores).
    queries : ndarray of float32, shape [n, D] (``method="dot"``) or [n, 3, D] (``method="cosmul"``)
        Query vectors. For ``"cosmul"`` the three rows are the normalised ``a``, ``b`` and ``c`` of an
        analogy and the score is ``pos(b) * pos(c) / (pos(a) + 1e-6)`` with ``pos(x) = (1 + t·x) / 2``.
    k : int
        Neighbours wanted per query, >= 1; clamped to the smallest number of non-excluded candidates of
        any query so the result stays rectangular.
    ex_rows, ex_cols : ndarray of int64
        Pairs (query row, table row) that must not be returned, e.g. the query item itself.
    method : {"dot", "cosmul"}
        Scoring rule.
    block_elems : int
        Scores are computed for as many queries at a time as keep the block under this many floats.

    Returns
    -------
    rows : ndarray of int64, shape [n, k']
        Rows of ``table``.
    scores : ndarray of float32, shape [n, k']
        Their scores.
    """
    n = queries.shape[0]
    n_cols = table.shape[0]
    # drop duplicate exclusions so the count of available candidates per query is exact
    flat = np.unique(ex_rows.astype(np.int64) * max(n_cols, 1) + ex_cols.astype(np.int64))
    ex_rows, ex_cols = np.divmod(flat, max(n_cols, 1))
    available = n_cols - np.bincount(ex_rows, minlength=n) if n else np.array([n_cols])
    k = int(min(k, available.min()))
    out_rows = np.empty((n, k), dtype=np.int64)
    out_scores = np.empty((n, k), dtype=np.float32)
    if n == 0 or k == 0:
        return out_rows, out_scores
    step = max(1, block_elems // max(n_cols, 1))
    table_t = table.T  # a transposed view; BLAS takes it without a copy
    for start in range(0, n, step):
        stop = min(n, start + step)
        qb = queries[start:stop]
        if method == "dot":
            scores = qb @ table_t
        else:
            scores = qb[:, 1] @ table_t
            scores += 1.0
            scores *= 0.5
            pos_c = qb[:, 2] @ table_t
            pos_c += 1.0
            pos_c *= 0.5
            scores *= pos_c
            pos_a = qb[:, 0] @ table_t
            pos_a += 1.0
            pos_a *= 0.5
            pos_a += _COSMUL_EPS
            scores /= pos_a
            del pos_a, pos_c
        lo, hi = np.searchsorted(ex_rows, [start, stop])
        scores[ex_rows[lo:hi] - start, ex_cols[lo:hi]] = -np.inf
        out_rows[start:stop], out_scores[start:stop] = _select_top_k(scores, k)
    return out_rows, out_scores


def compute_fingerprint(vectors: np.ndarray, keys: Sequence[str]) -> str:
    """Fingerprint of a space: ``"lw1-"`` + the first 20 hex digits of sha256(vectors bytes + keys).

    The vectors are hashed as little-endian float32 in row-major order, in chunks, followed by the keys
    joined by newlines and encoded as UTF-8. Counts, config and meta are not part of the fingerprint.
    """
    h = hashlib.sha256()
    rows_per_chunk = max(1, (1 << 24) // max(1, vectors.shape[1] * 4))
    for start in range(0, vectors.shape[0], rows_per_chunk):
        chunk = np.ascontiguousarray(vectors[start : start + rows_per_chunk], dtype="<f4")
        h.update(memoryview(chunk).cast("B"))
    h.update("\n".join(keys).encode("utf-8"))
    return FINGERPRINT_PREFIX + h.hexdigest()[:20]


# --------------------------------------------------------------------------------------------------------
# Validation helpers
# --------------------------------------------------------------------------------------------------------


def _is_item(x: object) -> bool:
    """A single item: a str key or an int id (not a bool)."""
    return isinstance(x, str | int | np.integer) and not isinstance(x, bool | np.bool_)


def _is_batch(x: object) -> bool:
    """A sequence of things (list, tuple, range, 1-D or 2-D ndarray), not a str."""
    if isinstance(x, np.ndarray):
        return x.ndim >= 1
    return isinstance(x, Sequence) and not isinstance(x, str | bytes)


def _check_k(k: object) -> int:
    if not isinstance(k, int | np.integer) or isinstance(k, bool | np.bool_) or k < 1:
        raise InputError(f"k == {k!r}, must be an int >= 1")
    return int(k)


def _jsonable(value: dict | None, name: str) -> dict:
    """A deep copy of ``value`` as JSON would round-trip it; raises InputError if it cannot be."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InputError(f"{name} must be a dict (JSON object), got {type(value).__name__}")
    try:
        return json.loads(json.dumps(value, allow_nan=False))
    except (TypeError, ValueError) as e:
        raise InputError(f"{name} must be JSON-serialisable: {e}") from None


# --------------------------------------------------------------------------------------------------------
# Embeddings
# --------------------------------------------------------------------------------------------------------


class Embeddings:
    """Item vectors with their vocabulary, and neighbour / recommendation / analogy queries.

    Parameters
    ----------
    vectors : array-like of float, shape [V, D]
        One row per vocabulary item, in id order. Stored as float32 (float64 input is converted); must be
        finite. A float32 C-contiguous array (or memory map) is used without a copy.
    vocab : Vocab
        The items, ``len(vocab) == V``.
    config : dict, optional
        The training configuration (JSON-serialisable).
    fingerprint : str, optional
        Identity of the space; computed from the vectors and keys when omitted (see
        :func:`compute_fingerprint`). Spaces with different fingerprints cannot be compared.
    meta : dict, optional
        Free JSON-serialisable metadata (parent model, creation time ...).

    Notes
    -----
    Items may be given as str keys or int ids everywhere. Unknown keys raise
    :class:`~likewise.errors.UnknownItemError` (a ``KeyError``) with close suggestions; ids outside
    ``[0, V)`` raise :class:`~likewise.errors.ItemIndexError` (an ``IndexError``) naming the table size.
    Queries use :attr:`normed`, a unit-length float32 copy of the vectors computed once and cached.
    """

    def __init__(
        self,
        vectors: Any,
        vocab: Vocab,
        *,
        config: dict | None = None,
        fingerprint: str | None = None,
        meta: dict | None = None,
    ) -> None:
        self._setup(vectors, vocab, config, fingerprint, meta, check_finite=True)

    @classmethod
    def _trusted(
        cls,
        vectors: np.ndarray,
        vocab: Vocab,
        config: dict | None,
        fingerprint: str | None,
        meta: dict | None,
    ) -> Embeddings:
        """Build without the O(V·D) finiteness scan (for files whose checksums were verified)."""
        self = cls.__new__(cls)
        self._setup(vectors, vocab, config, fingerprint, meta, check_finite=False)
        return self

    def _setup(
        self,
        vectors: Any,
        vocab: Vocab,
        config: dict | None,
        fingerprint: str | None,
        meta: dict | None,
        check_finite: bool,
    ) -> None:
        if not isinstance(vocab, Vocab):
            raise InputError(f"vocab must be a likewise.Vocab, got {type(vocab).__name__}")
        arr = np.asarray(vectors)
        if arr.dtype.kind not in "fiu":
            raise InputError(f"vectors must be real numbers (float32 or float64), got dtype {arr.dtype}")
        if arr.ndim != 2:
            raise InputError(f"vectors must be 2-D [items, dims], got shape {arr.shape}")
        if arr.shape[0] != len(vocab):
            raise InputError(f"vectors has {arr.shape[0]} rows but the vocabulary has {len(vocab)} keys")
        if arr.shape[1] < 1:
            raise InputError(f"dim == {arr.shape[1]}, must be >= 1")
        arr = np.ascontiguousarray(arr, dtype=np.float32)
        if check_finite:
            bad = ~np.isfinite(arr).all(axis=1)
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                raise InputError(
                    f"vectors row {i} ({vocab.keys[i]!r}) is not finite "
                    f"({int(bad.sum())} bad rows in all); vectors must be finite"
                )
        if fingerprint is not None and (not isinstance(fingerprint, str) or not fingerprint):
            raise InputError(f"fingerprint == {fingerprint!r}, must be a non-empty str or None")
        view = arr.view()
        view.flags.writeable = False  # a read-only view: the fingerprint and the normed cache stay valid
        self._vectors = view
        self._vocab = vocab
        self._config = _jsonable(config, "config")
        self._meta = _jsonable(meta, "meta")
        self._fingerprint = fingerprint
        self._normed: np.ndarray | None = None
        self._index: Any = None  # an attached likewise.index.AnnIndex, used by queries without restrict
        self._customers: Any = None  # an attached likewise.retail.CustomerTable
        self._context: np.ndarray | None = None  # skip-gram's output table, when kept
        self._bias: np.ndarray | None = None  # cache of _affinity_bias()

    # ---- properties ------------------------------------------------------------------------------------

    @property
    def vocab(self) -> Vocab:
        """The vocabulary (ids ordered by descending count)."""
        return self._vocab

    @property
    def keys(self) -> list[str]:
        """Keys in id order."""
        return self._vocab.keys

    @property
    def counts(self) -> np.ndarray:
        """Count of each item, int64 [V]."""
        return self._vocab.counts

    @property
    def vectors(self) -> np.ndarray:
        """The raw vectors, float32 [V, D], read-only."""
        return self._vectors

    @property
    def dim(self) -> int:
        """Number of dimensions D."""
        return int(self._vectors.shape[1])

    @property
    def config(self) -> dict:
        """The training configuration."""
        return self._config

    @property
    def meta(self) -> dict:
        """Free metadata."""
        return self._meta

    @property
    def fingerprint(self) -> str:
        """Identity of the space (computed once, on first use, when not given)."""
        if self._fingerprint is None:
            self._fingerprint = compute_fingerprint(self._vectors, self._vocab.keys)
        return self._fingerprint

    @property
    def nbytes(self) -> int:
        """Bytes held by the raw vectors (the :attr:`normed` cache, once built, takes as many again)."""
        return int(self._vectors.nbytes)

    @property
    def normed(self) -> np.ndarray:
        """Unit-length rows, float32 [V, D], read-only and cached; all-zero rows stay zero."""
        if self._normed is None:
            normed = _normalise_rows(self._vectors)
            normed.flags.writeable = False
            self._normed = normed
        return self._normed

    def __len__(self) -> int:
        return len(self._vocab)

    def __contains__(self, item: object) -> bool:
        """True for a known key, or an int id in ``[0, V)``."""
        if isinstance(item, str):
            return item in self._vocab
        if _is_item(item):
            return 0 <= int(item) < len(self)  # type: ignore[arg-type]
        return False

    def __getitem__(self, item: Item | Sequence[Item]) -> SpaceVector:
        """``emb["tent"]``, ``emb[7]``: the raw vector of an item; ``emb[["tent", "tarp"]]``: a stack of them.

        Parameters
        ----------
        item : str, int, or sequence of them
            A key or an id (as in :meth:`vector`), or a batch of them (as in :meth:`vectors_of`).

        Returns
        -------
        SpaceVector
            float32 [D] for one item, float32 [n, D] for a batch; tagged with this space's fingerprint.

        Raises
        ------
        UnknownItemError
            An unknown key (a ``KeyError``, with close suggestions).
        ItemIndexError
            An id outside ``[0, V)`` (an ``IndexError``).
        InputError
            Anything else (a slice, a float, a dict ...).

        Notes
        -----
        The mapping protocol is consistent: ``x in emb`` is True exactly for the keys and ids ``emb[x]``
        accepts, ``len(emb)`` is V and iterating yields the keys in id order.
        """
        if _is_item(item):
            return self.vector(item)  # type: ignore[arg-type]
        if _is_batch(item):
            return self.vectors_of(item)  # type: ignore[arg-type]
        raise InputError(
            f"emb[...] takes a str key, an int id or a sequence of them, got {type(item).__name__} {item!r}"
        )

    def __iter__(self) -> Iterator[str]:
        """The keys in id order (as a dict iterates its keys; without this, ``__getitem__`` would be used)."""
        return iter(self._vocab.keys)

    def __repr__(self) -> str:
        return (
            f"Embeddings({len(self)} {self._vocab.what}s × {self.dim} dims, fingerprint={self.fingerprint!r})"
        )

    @property
    def index(self) -> Any:
        """The attached approximate index (:class:`likewise.index.AnnIndex`), or None for exact search."""
        return self._index

    def attach_index(self, index: Any) -> None:
        """Answer queries without ``restrict`` through an approximate index (None detaches it).

        Raises :class:`SpaceMismatchError` when the index was built on another space. Queries with
        ``restrict`` and 3CosMul analogies always use exact search.
        """
        if index is not None:
            from .index import _check_index_for

            _check_index_for(self, index)
        self._index = index

    @property
    def customers(self) -> Any:
        """The customer table (:class:`likewise.retail.CustomerTable`) saved with this space, or None."""
        return self._customers

    def attach_customers(self, table: Any) -> None:
        """Attach a customer table built in this space (None detaches it); saved with the space.

        Raises :class:`SpaceMismatchError` when the table carries another space's fingerprint, and
        :class:`InputError` when its dimension differs.
        """
        if table is not None:
            if table.fingerprint != self.fingerprint:
                raise SpaceMismatchError(self.fingerprint, str(table.fingerprint), what="customer table")
            if table.dim != self.dim:
                raise InputError(f"customer vectors have dim {table.dim}, the space has dim {self.dim}")
        self._customers = table

    @property
    def context(self) -> np.ndarray | None:
        """The output ("context") table of skip-gram, float32 [V, D] read-only, when kept; else None.

        Spaces trained from an order log keep it: ``vectors[i] @ context[j]`` scores how much more
        often ``j`` goes with ``i`` than chance (complements), and an update continues from it.
        """
        return self._context

    def attach_context(self, table: Any) -> None:
        """Keep the output table (float32 [V, D], same shape as :attr:`vectors`); saved with the space."""
        if table is not None:
            arr = np.ascontiguousarray(table, dtype=np.float32)
            if arr.shape != self._vectors.shape:
                raise InputError(f"context table has shape {arr.shape}, expected {self._vectors.shape}")
            arr = arr.view()
            arr.flags.writeable = False
            table = arr
        self._context = table

    def check_same_space(self, other: Any) -> None:
        """Raise :class:`SpaceMismatchError` unless ``other`` is this space."""
        got = getattr(other, "fingerprint", None)
        if got != self.fingerprint:
            raise SpaceMismatchError(self.fingerprint, str(got), what="Embeddings")

    # ---- items -----------------------------------------------------------------------------------------

    def _id(self, item: object) -> int:
        """Id of one item (str key or int id), with the vocabulary's errors."""
        if isinstance(item, str):
            return self._vocab.id(item)
        if _is_item(item):
            return int(self._vocab.check_ids([item])[0])  # type: ignore[list-item]
        raise InputError(
            f"an {self._vocab.what} must be a str key or an int id, got {type(item).__name__} {item!r}"
        )

    def _ids(self, items: Any, on_unknown: OnUnknown = "raise") -> tuple[np.ndarray, np.ndarray]:
        """Ids of a batch of items and the positions of those kept (unknown keys dropped when skipping)."""
        if on_unknown not in ("raise", "skip"):
            raise InputError(f"on_unknown == {on_unknown!r}, must be 'raise' or 'skip'")
        ids: list[int] = []
        kept: list[int] = []
        for pos, item in enumerate(items):
            if on_unknown == "skip" and isinstance(item, str) and item not in self._vocab:
                continue
            ids.append(self._id(item))
            kept.append(pos)
        return np.asarray(ids, dtype=np.int64), np.asarray(kept, dtype=np.int64)

    def vector(self, item: Item, *, norm: bool = False) -> SpaceVector:
        """The vector of one item.

        Parameters
        ----------
        item : str or int
            Key or id.
        norm : bool
            Return the unit-length vector instead of the raw one.

        Returns
        -------
        SpaceVector, float32 [D]
            A copy, tagged with this space's fingerprint.
        """
        if not _is_item(item):
            raise InputError(
                f"vector() takes one str key or int id, got {type(item).__name__}; "
                "use vectors_of() for a batch"
            )
        source = self.normed if norm else self._vectors
        return SpaceVector(source[self._id(item)].copy(), self.fingerprint)

    def vectors_of(self, items: Sequence[Item], *, norm: bool = False) -> SpaceVector:
        """Vectors of a batch of items, float32 [n, D], as a :class:`SpaceVector`."""
        if not _is_batch(items):
            raise InputError(
                f"vectors_of() takes a sequence of items, got {type(items).__name__}; "
                "use vector() for one item"
            )
        ids, _ = self._ids(items)
        source = self.normed if norm else self._vectors
        return SpaceVector(source[ids].reshape(len(ids), self.dim), self.fingerprint)

    # ---- query plumbing --------------------------------------------------------------------------------

    def _candidates(self, restrict: Restrict) -> tuple[np.ndarray, np.ndarray | None]:
        """(table of candidate vectors, sorted candidate ids or None when the table is a prefix)."""
        if restrict is None:
            return self.normed, None
        if _is_item(restrict) and not isinstance(restrict, str):
            n = int(restrict)  # type: ignore[arg-type]
            if not 1 <= n <= len(self):
                raise InputError(f"restrict == {n}, must be between 1 and the vocabulary size {len(self)}")
            return self.normed[:n], None
        if isinstance(restrict, str) or not isinstance(restrict, Sequence | set | frozenset | np.ndarray):
            raise InputError(
                f"restrict must be None, an int (the N most frequent items) or a collection of keys, "
                f"got {type(restrict).__name__} {restrict!r}"
            )
        ids, _ = self._ids(list(restrict))
        if len(ids) == 0:
            raise InputError("restrict is an empty collection: there would be nothing to return")
        cand = np.unique(ids)
        return self.normed[cand], cand

    def _search(
        self,
        queries: np.ndarray,
        k: int,
        restrict: Restrict,
        ex_rows: np.ndarray,
        ex_ids: np.ndarray,
        method: Literal["dot", "cosmul"] = "dot",
    ) -> tuple[np.ndarray, np.ndarray]:
        """Map exclusions into candidate positions, run the kernel, map positions back to ids."""
        k = _check_k(k)
        if self._index is not None and restrict is None and method == "dot":
            from .index import ann_top_k

            found = ann_top_k(self._index, self.normed, queries, k, ex_rows, ex_ids)
            if found is not None:
                return found
        table, cand = self._candidates(restrict)
        ex_rows = np.asarray(ex_rows, dtype=np.int64)
        ex_ids = np.asarray(ex_ids, dtype=np.int64)
        if cand is None:
            keep = ex_ids < table.shape[0]
            ex_pos = ex_ids[keep]
        else:
            pos = np.minimum(np.searchsorted(cand, ex_ids), len(cand) - 1)
            keep = cand[pos] == ex_ids
            ex_pos = pos[keep]
        rows, scores = top_k_search(table, queries, k, ex_rows[keep], ex_pos, method=method)
        return (rows if cand is None else cand[rows]), scores

    def _result(
        self, ids: np.ndarray, scores: np.ndarray, single: bool, queries: np.ndarray | None = None
    ) -> Neighbours:
        keys = self._vocab.keys
        if single:
            return Neighbours([keys[i] for i in ids[0].tolist()], ids[0], scores[0])
        return Neighbours(
            [[keys[i] for i in row] for row in ids.tolist()],
            ids,
            scores,
            np.arange(len(ids), dtype=np.int64) if queries is None else queries,
        )

    def _query_matrix(self, v: Any) -> tuple[np.ndarray, bool]:
        """Validate query vectors -> (unit-normalised float32 [n, D], single?)."""
        if isinstance(v, SpaceVector) and v.fingerprint is not None and v.fingerprint != self.fingerprint:
            raise SpaceMismatchError(self.fingerprint, v.fingerprint, what="vector")
        arr = np.asarray(v)
        if arr.dtype.kind not in "fiu":
            raise InputError(f"query vector must hold real numbers, got dtype {arr.dtype}")
        if arr.ndim not in (1, 2):
            raise InputError(f"query vector must be 1-D [D] or 2-D [n, D], got shape {arr.shape}")
        single = arr.ndim == 1
        arr = np.array(arr.reshape(1, -1) if single else arr, dtype=np.float32)  # always a copy
        if arr.shape[1] != self.dim:
            raise InputError(f"query vector has length {arr.shape[1]}, expected {self.dim} (the space's dim)")
        if not np.isfinite(arr).all():
            raise InputError("query vector contains NaN or infinite values")
        return _normalise_rows(arr), single

    # ---- queries ---------------------------------------------------------------------------------------

    def similar(
        self,
        items: Item | Sequence[Item],
        k: int = 10,
        *,
        restrict: Restrict = None,
        on_unknown: OnUnknown = "raise",
    ) -> Neighbours:
        """The ``k`` items most cosine-similar to each query item, the query itself excluded.

        Parameters
        ----------
        items : str, int, or sequence of them
            One item (1-D result) or a batch (2-D result, one row per query).
        k : int
            Neighbours per query, >= 1. Clamped to the number of candidates available (for a batch, the
            smallest number available to any query, so that the result stays rectangular).
        restrict : None, int or collection of keys
            Only return items among the ``N`` most frequent (an int, ``1 <= N <= V``; ids ``< N``) or among
            the given keys/ids.
        on_unknown : {"raise", "skip"}
            With ``"skip"`` unknown keys in a batch are dropped; ``Neighbours.queries`` then says which
            input each row answers. A single unknown item always raises. Out-of-range ids always raise.

        Returns
        -------
        Neighbours
            ids/scores of shape [k] for one item, [n, k] for a batch.
        """
        if _is_item(items):
            ids, kept = np.array([self._id(items)], dtype=np.int64), None
            single = True
        elif _is_batch(items):
            ids, kept = self._ids(items, on_unknown)
            single = False
        else:
            raise InputError(f"items must be a key, an id or a sequence of them, got {type(items).__name__}")
        queries = self.normed[ids]
        out_ids, scores = self._search(queries, k, restrict, np.arange(len(ids)), ids)
        return self._result(out_ids, scores, single, kept)

    def similar_to_vector(
        self,
        v: Any,
        k: int = 10,
        *,
        restrict: Restrict = None,
        exclude: Item | Sequence[Item] = (),
    ) -> Neighbours:
        """The ``k`` items most cosine-similar to a vector.

        Parameters
        ----------
        v : array-like, shape [D] or [n, D]
            Query vector(s); a :class:`SpaceVector` from another space raises :class:`SpaceMismatchError`.
        k : int
            Neighbours per query, >= 1; clamped to the number of candidates available.
        restrict : None, int or collection of keys
            As in :meth:`similar`.
        exclude : item or sequence of items
            Items never returned (for every query).

        Returns
        -------
        Neighbours
            1-D for a 1-D ``v``, 2-D for a 2-D ``v``.
        """
        queries, single = self._query_matrix(v)
        ex = self._ids([exclude] if _is_item(exclude) else list(exclude))[0]
        n = len(queries)
        out_ids, scores = self._search(queries, k, restrict, np.repeat(np.arange(n), len(ex)), np.tile(ex, n))
        return self._result(out_ids, scores, single)

    def recommend(
        self,
        basket: Sequence[Item] | Sequence[Sequence[Item]],
        k: int = 10,
        *,
        restrict: Restrict = None,
        on_unknown: OnUnknown = "raise",
        scoring: Literal["auto", "affinity", "cosine"] = "auto",
    ) -> Neighbours:
        """Items to add to a basket, basket items excluded.

        Parameters
        ----------
        basket : sequence of items, or sequence of such sequences
            One basket (1-D result) or a batch of baskets (2-D result).
        k : int
            Recommendations per basket, >= 1; clamped to the number of candidates available.
        restrict : None, int or collection of keys
            As in :meth:`similar`.
        on_unknown : {"raise", "skip"}
            With ``"skip"`` unknown keys are dropped from the baskets; a basket left with no known item
            raises :class:`InputError`.
        scoring : {"auto", "affinity", "cosine"}
            ``affinity`` (needs the :attr:`context` table, which :func:`likewise.train` keeps): each
            basket item ``i`` scores a candidate ``j`` by ``vectors[i] · context[j] + a·log(count[j])``,
            skip-gram's estimate of ``log P(j | i)`` up to a constant (``a`` = the ``ns_exponent`` it
            was trained with); the basket's score is the log of the mean of ``exp`` of those (a
            mixture: a candidate that goes with one basket item ranks high, as co-purchase counts
            summed over the basket do). ``cosine``: the cosine to the sum of the basket's unit vectors
            (finds items *like* the basket: substitutes more than complements; repeated items weigh
            more). ``auto``: affinity when the space has a context table, else cosine.

        Returns
        -------
        Neighbours
        """
        if not _is_batch(basket):
            raise InputError(
                f"basket must be a sequence of items, got {type(basket).__name__} {basket!r} "
                "(wrap a single item in a list)"
            )
        if len(basket) == 0:
            raise InputError("basket is empty: give at least one item")
        nested = [_is_batch(b) for b in basket]
        if all(nested):
            baskets, single = list(basket), False
        elif not any(nested):
            baskets, single = [basket], True
        else:
            raise InputError("basket mixes items and lists of items: give one basket or a list of baskets")
        if scoring not in ("auto", "affinity", "cosine"):
            raise InputError(f"scoring == {scoring!r}, must be 'auto', 'affinity' or 'cosine'")
        if scoring == "affinity" and self.context is None:
            raise NotFittedError(
                "scoring='affinity' needs the context (output) table, which this space does not have "
                "(it was imported or trained by an older version); use scoring='cosine'"
            )
        use_affinity = scoring == "affinity" or (scoring == "auto" and self.context is not None)
        ex_rows: list[np.ndarray] = []
        ex_ids: list[np.ndarray] = []
        contexts: list[np.ndarray] = []
        queries = np.zeros((len(baskets), self.dim), dtype=np.float32)
        for row, b in enumerate(baskets):
            ids, _ = self._ids(b, on_unknown)
            if len(ids) == 0:
                where = "basket" if single else f"basket {row}"
                raise InputError(f"{where} has no known {self._vocab.what} (given {list(b)[:5]!r})")
            contexts.append(ids)
            queries[row] = self.normed[ids].sum(axis=0)
            ex_rows.append(np.full(len(ids), row, dtype=np.int64))
            ex_ids.append(ids)
        if use_affinity:
            out_ids, scores = self.affinity_top_k(contexts, k, restrict=restrict)
            return self._result(out_ids, scores, single)
        out_ids, scores = self._search(
            _normalise_rows(queries), k, restrict, np.concatenate(ex_rows), np.concatenate(ex_ids)
        )
        return self._result(out_ids, scores, single)

    def affinity_top_k(
        self, contexts: Sequence[np.ndarray], k: int, *, restrict: Restrict = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Top-``k`` ids for each context (an array of item ids) by the mixture affinity of :meth:`recommend`.

        A context's own items are never returned; an empty context is ranked by ``a·log(count)`` alone.

        Returns
        -------
        ids, scores : ndarray, shape [n, k']
            int64 ids and float32 scores, best first, ties by lower id; ``k`` is clamped to the fewest
            candidates any context leaves.

        Raises
        ------
        NotFittedError
            The space has no :attr:`context` table.
        """
        if self.context is None:
            raise NotFittedError("this space has no context (output) table: affinity needs one")
        k = _check_k(k)
        _, cand = self._candidates(restrict)
        ctx = [np.unique(np.asarray(c, dtype=np.int64).reshape(-1)) for c in contexts]
        for c in ctx:
            if len(c) and (c[0] < 0 or c[-1] >= len(self)):
                raise ItemIndexError(int(c[0] if c[0] < 0 else c[-1]), len(self))
        allowed = np.ones(len(self), dtype=bool) if cand is None else np.isin(np.arange(len(self)), cand)
        left = min((int(allowed.sum()) - int(allowed[c].sum()) for c in ctx), default=int(allowed.sum()))
        k = min(k, left)
        if k < 1:
            raise InputError("no candidate is left after excluding the context's own items")
        W = np.asarray(self.vectors)
        C = np.asarray(self.context)
        bias = self._affinity_bias()
        out_ids = np.empty((len(ctx), k), dtype=np.int64)
        out_scores = np.empty((len(ctx), k), dtype=np.float32)
        for r, c in enumerate(ctx):
            if len(c) == 0:
                s = bias.copy()
            else:
                s = (W[c] @ C.T).astype(np.float64)  # [len(c), V]
                top = s.max(axis=0)
                s = top + np.log(np.exp(s - top).mean(axis=0)) + bias  # log-mean-exp, stable
                s[c] = -np.inf
            s[~allowed] = -np.inf
            ids, sc = _select_top_k(s[None, :], k)
            out_ids[r], out_scores[r] = ids[0], sc[0]
        return out_ids, out_scores

    def _affinity_bias(self) -> np.ndarray:
        """The popularity term of the affinity (see :meth:`recommend`), float64 [V].

        ``a·log(count[j]) - log(keep[j])``: skip-gram fits ``vectors[i] · context[j]`` against noise drawn
        from ``count ** a``, on a corpus where item ``j`` was kept with probability ``keep[j]`` (the
        subsampling of the config's ``sample``); adding the noise log-probability and undoing the
        subsampling turns it into ``log P(j | i)`` of the real baskets, up to a constant.
        """
        cached = self._bias
        if cached is None:
            from .kernels.tables import make_keep_prob  # NumPy only

            cfg = self._config or {}
            alpha = float(cfg.get("ns_exponent", 0.75))
            counts = np.maximum(np.asarray(self.counts, dtype=np.float64), 1.0)
            keep = make_keep_prob(counts, float(cfg.get("sample", 0.0) or 0.0)).astype(np.float64)
            cached = self._bias = np.log(counts) * alpha - np.log(keep)
        return cached

    def analogy(
        self,
        a: Item | Sequence[Item],
        b: Item | Sequence[Item],
        c: Item | Sequence[Item],
        k: int = 10,
        *,
        method: Literal["add", "mul"] = "add",
        restrict: Restrict = None,
    ) -> Neighbours:
        """Answer "``a`` is to ``b`` as ``c`` is to ?"; ``a``, ``b`` and ``c`` themselves are excluded.

        Parameters
        ----------
        a, b, c : item, or sequences of items of equal length
            One analogy (1-D result) or a batch (2-D result).
        k : int
            Answers per analogy, >= 1; clamped to the number of candidates available.
        method : {"add", "mul"}
            ``"add"`` (3CosAdd): score ``cos(x, b̂ - â + ĉ)`` on unit vectors. ``"mul"`` (3CosMul, Levy &
            Goldberg 2014, as gensim's ``most_similar_cosmul``): with ``pos(y) = (1 + cos(x, y)) / 2``, score
            ``pos(b) * pos(c) / (pos(a) + 1e-6)``.
        restrict : None, int or collection of keys
            As in :meth:`similar`.

        Returns
        -------
        Neighbours
        """
        if method not in ("add", "mul"):
            raise InputError(f"method == {method!r}, must be 'add' or 'mul'")
        if _is_item(a) and _is_item(b) and _is_item(c):
            single, abc = True, [[a], [b], [c]]
        elif _is_batch(a) and _is_batch(b) and _is_batch(c):
            if not len(a) == len(b) == len(c):  # type: ignore[arg-type]
                raise InputError(f"a, b and c must have equal lengths, got {len(a)}, {len(b)}, {len(c)}")  # type: ignore[arg-type]
            single, abc = False, [a, b, c]
        else:
            raise InputError("a, b and c must all be single items or all be sequences of items")
        ia, ib, ic = (self._ids(x)[0] for x in abc)
        n = len(ia)
        normed = self.normed
        if method == "add":
            queries = _normalise_rows(normed[ib] - normed[ia] + normed[ic])
        else:
            queries = np.stack([normed[ia], normed[ib], normed[ic]], axis=1)
        rows = np.tile(np.arange(n), 3)
        out_ids, scores = self._search(
            queries,
            k,
            restrict,
            rows,
            np.concatenate([ia, ib, ic]),
            method="dot" if method == "add" else "cosmul",
        )
        return self._result(out_ids, scores, single)

    def doesnt_match(self, items: Sequence[Item], *, on_unknown: OnUnknown = "raise") -> str:
        """The item least like the others: lowest cosine to the mean of the unit vectors (gensim semantics).

        Parameters
        ----------
        items : sequence of items
            At least two (known) items.
        on_unknown : {"raise", "skip"}
            ``"skip"`` drops unknown keys first.

        Returns
        -------
        str
            Its key; ties go to the lower id.
        """
        if not _is_batch(items):
            raise InputError(f"items must be a sequence of at least two items, got {type(items).__name__}")
        ids, _ = self._ids(items, on_unknown)
        if len(ids) < 2:
            raise InputError(f"doesnt_match needs at least two known {self._vocab.what}s, got {len(ids)}")
        vecs = self.normed[ids]
        mean = _normalise_rows(vecs.mean(axis=0, keepdims=True))[0]
        dists = vecs @ mean
        worst = np.lexsort((ids, dists))[0]
        return self._vocab.keys[int(ids[worst])]

    def similarity(self, a: Item | Sequence[Item], b: Item | Sequence[Item]) -> Any:
        """Cosine of two items (a float), or of two equal-length sequences pairwise (float32 [n])."""
        if _is_item(a) and _is_item(b):
            normed = self.normed
            return float(normed[self._id(a)] @ normed[self._id(b)])
        if _is_batch(a) and _is_batch(b):
            if len(a) != len(b):  # type: ignore[arg-type]
                raise InputError(f"a and b must have equal lengths, got {len(a)} and {len(b)}")  # type: ignore[arg-type]
            va, vb = self.normed[self._ids(a)[0]], self.normed[self._ids(b)[0]]
            return np.einsum("ij,ij->i", va, vb).astype(np.float32)
        raise InputError("a and b must both be single items or both be sequences of items")

    def most_similar(
        self,
        positive: Any = None,
        negative: Any = None,
        topn: int = 10,
        *,
        restrict: Restrict = None,
    ) -> list[tuple[str, float]]:
        """gensim's ``KeyedVectors.most_similar``: the items nearest to ``mean(positive) - mean(negative)``.

        The query is the weighted mean of the terms' unit vectors (weight +1 for each positive term and
        -1 for each negative one), normalised; items are ranked by cosine to it and the items named in
        ``positive`` and ``negative`` are never returned. ``most_similar(positive=["king", "woman"],
        negative=["man"])`` is :meth:`analogy` ``("man", "king", "woman")``; ``most_similar("tent")`` is
        :meth:`similar` ``("tent")``.

        Parameters
        ----------
        positive, negative : term, sequence of terms, or None
            A term is a str key or an int id, a ``(key, weight)`` pair (the weight replaces the default
            +1 or -1, in either list, as in gensim), or a raw 1-D vector of length D (added as given, not
            normalised, and not excluded from the result, as in gensim; a :class:`SpaceVector` of another
            space raises :class:`SpaceMismatchError`). A single key, id or 1-D vector needs no list.
        topn : int
            Results wanted, >= 1; fewer when fewer candidates are left. (gensim's ``topn=None``, the raw
            score array, has no equivalent: use :meth:`similar_to_vector` or :attr:`normed`.)
        restrict : None, int or collection of keys
            As in :meth:`similar`; an int ``N`` is gensim's ``restrict_vocab=N``.

        Returns
        -------
        list of (str, float)
            ``(key, cosine)`` pairs, best first, ties by lower id.

        Raises
        ------
        UnknownItemError
            An unknown key.
        InputError
            No term at all, or a malformed term or ``topn``.
        """
        terms = [(t, 1.0) for t in self._terms(positive, "positive")]
        terms += [(t, -1.0) for t in self._terms(negative, "negative")]
        if not terms:
            raise InputError("most_similar needs at least one positive or negative term")
        topn = _check_k(topn)
        query = np.zeros(self.dim, dtype=np.float64)
        total = 0.0
        exclude: list[int] = []
        normed = self.normed
        for term, default in terms:
            weight = default
            if isinstance(term, tuple):
                if len(term) != 2 or not isinstance(term[1], int | float | np.integer | np.floating):
                    raise InputError(f"a weighted term must be a (key, weight) pair, got {term!r}")
                term, weight = term[0], float(term[1])
            if _is_item(term):
                i = self._id(term)
                exclude.append(i)
                query += weight * normed[i]
            elif isinstance(term, np.ndarray) and term.ndim == 1:
                self._query_matrix(term)  # validates the space, dtype, length and finiteness
                query += weight * np.asarray(term, dtype=np.float64)
            else:
                raise InputError(
                    f"a most_similar term must be a str key, an int id, a (key, weight) pair or a 1-D "
                    f"vector, got {type(term).__name__} {term!r}"
                )
            total += abs(weight)
        if total > 0:
            query /= total
        found = self.similar_to_vector(query, topn, restrict=restrict, exclude=exclude)
        return list(found)

    @staticmethod
    def _terms(value: Any, name: str) -> list[Any]:
        """``positive`` or ``negative`` of :meth:`most_similar` as a list (gensim's ``_ensure_list``)."""
        if value is None:
            return []
        if _is_item(value) or (isinstance(value, np.ndarray) and value.ndim == 1):
            return [value]
        if isinstance(value, np.ndarray) and value.ndim == 2:
            return list(value)
        if _is_batch(value):
            return list(value)
        raise InputError(
            f"{name} must be a term or a sequence of terms (keys, ids, (key, weight) pairs or vectors), "
            f"got {type(value).__name__} {value!r}"
        )

    # ---- export ----------------------------------------------------------------------------------------

    def to_arrow(self, *, norm: bool = False) -> pa.Table:
        """The space as a pyarrow Table, one row per item in id order.

        Parameters
        ----------
        norm : bool
            Export the unit-length vectors instead of the raw ones.

        Returns
        -------
        pyarrow.Table
            Columns ``key`` (string), ``id`` (int64), ``count`` (int64) and ``vector``
            (``fixed_size_list<float32>[D]``); the schema metadata holds ``likewise.fingerprint`` and
            ``likewise.what``. The vector column shares memory with the space where pyarrow allows.
        """
        return _items_table(
            self.keys,
            self.counts,
            self.normed if norm else self._vectors,
            {"likewise.fingerprint": self.fingerprint, "likewise.what": self._vocab.what},
        )

    def to_pandas(self, *, norm: bool = False) -> pd.DataFrame:
        """The space as a pandas DataFrame: the columns of :meth:`to_arrow`, one row per item.

        Parameters
        ----------
        norm : bool
            Export the unit-length vectors instead of the raw ones.

        Returns
        -------
        pandas.DataFrame
            Columns ``key``, ``id`` (int64), ``count`` (int64) and ``vector``, whose cells are float32
            arrays of length D (rows of one writable copy of the table); ``df.attrs["fingerprint"]`` is
            the space's fingerprint.

        Raises
        ------
        MissingDependencyError
            pandas is not installed (an ``ImportError``; it is not a dependency of likewise).
        """
        try:
            import pandas as pd
        except ImportError:
            err = MissingDependencyError("pandas", "pandas", "Embeddings.to_pandas()")
            err.msg = "pandas is needed for Embeddings.to_pandas(): pip install pandas"
            err.args = (err.msg,)
            raise err from None
        vectors = np.array(self.normed if norm else self._vectors, dtype=np.float32)  # a writable copy
        df = pd.DataFrame(
            {
                "key": self.keys,
                "id": np.arange(len(self), dtype=np.int64),
                "count": np.asarray(self.counts, dtype=np.int64),
                "vector": list(vectors),
            }
        )
        df.attrs["fingerprint"] = self.fingerprint
        return df

    # ---- persistence -----------------------------------------------------------------------------------

    def save(self, path: str | os.PathLike, *, overwrite: bool = False) -> None:
        """Save to a folder (see :func:`likewise.store.save`)."""
        from . import store

        store.save(self, path, overwrite=overwrite)

    @classmethod
    def load(
        cls, path: str | os.PathLike, *, mmap: bool = False, verify: bool = True, index: bool = True
    ) -> Embeddings:
        """Load a folder written by :meth:`save` (see :func:`likewise.store.load`).

        With ``index=True`` an approximate index saved beside the model (``path/index``, written by
        ``likewise index``) is attached; one built on another space is ignored with a warning, and queries
        then use exact search.
        """
        from . import store

        emb = store.load(path, mmap=mmap, verify=verify)
        if index:
            from .index import attach_saved_index

            attach_saved_index(emb, path, verify=verify)
        return emb


def _normalise_rows(x: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length, as a new float32 array; all-zero rows stay zero.

    Norms and the division are done in float64 (tiny rows would underflow in float32), a block of rows
    at a time so the float64 temporary stays small whatever the table size.
    """
    out = np.empty(x.shape, dtype=np.float32)
    step = max(1, (1 << 20) // max(1, x.shape[1]))
    for start in range(0, x.shape[0], step):
        block = np.asarray(x[start : start + step], dtype=np.float64)
        norms = np.sqrt(np.einsum("ij,ij->i", block, block))
        norms[norms == 0] = 1.0
        out[start : start + step] = block / norms[:, None]
    return out


def _items_table(keys: Sequence[str], counts: Any, vectors: np.ndarray, metadata: dict[str, str]) -> pa.Table:
    """A pyarrow Table ``key, id, count, vector`` (``fixed_size_list<float32>[D]``) of one row per item."""
    import pyarrow as pa

    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    n, dim = vectors.shape
    flat = pa.array(vectors.reshape(-1), type=pa.float32())
    table = pa.table(
        {
            "key": pa.array(list(keys), type=pa.string()),
            "id": pa.array(np.arange(n, dtype=np.int64)),
            "count": pa.array(np.asarray(counts, dtype=np.int64)),
            "vector": pa.FixedSizeListArray.from_arrays(flat, dim),
        }
    )
    return table.replace_schema_metadata(metadata)
