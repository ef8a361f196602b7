"""What a space hands out: tagged vectors, neighbour results and the space's fingerprint.

1. :class:`SpaceVector` -- an ``np.ndarray`` that remembers which space it came from, so that
   ``king - man + woman`` across two different models raises instead of returning nonsense.
2. :class:`Neighbours` -- the small typed result every query returns (1-D for one query, 2-D for a batch).
3. :func:`compute_fingerprint` -- the identity of a space, from its vectors and keys.
4. :func:`items_table` -- one row per item as a pyarrow Table (for ``to_arrow``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import MissingDependencyError, SpaceMismatchError

if TYPE_CHECKING:  # pyarrow and pandas are imported inside the functions that need them
    import pandas as pd
    import pyarrow as pa

__all__ = [
    "FINGERPRINT_PREFIX",
    "Neighbours",
    "answer_records",
    "envelope",
    "SpaceVector",
    "compute_fingerprint",
    "items_frame",
    "items_table",
]

FINGERPRINT_PREFIX = "lw1-"


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

    For one query ``ids`` and ``scores`` are 1-D of length k, ``keys`` is ``list[str]``, ``len()`` is k,
    ``res[i]`` is the ``(key, score)`` pair ``i`` and :meth:`pairs` all of them. For a batch they are
    2-D ``[n_queries, k]``, ``keys`` is ``list[list[str]]``, ``len()`` is the number of queries and
    ``res[i]`` (or :meth:`rows`) gives one 1-D :class:`Neighbours` per query.

    A Neighbours is not a tuple and is not iterable: ``ids, scores = res`` (implicit's habit) or
    ``a, b = res`` would otherwise quietly unpack two rows or two pairs, so iterating raises
    ``TypeError`` pointing here. Take ``res.ids, res.scores`` (implicit's ``(ids, scores)``),
    ``res.keys``, ``res.pairs()``, ``res.rows()`` or ``res.records()``.

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
    names : list of (str or None), or list of such lists, optional
        The display name of each neighbour, shaped as ``keys`` (None where the space knows none; see
        :attr:`likewise.Embeddings.names`). ``None`` (the default) when no name is known at all.
    counts : ndarray of int64, shape as ``ids``, optional
        Each neighbour's evidence: its count in training (baskets, in a space trained on baskets).
        ``None`` when the answer does not carry it.

    Notes
    -----
    ``ids`` are the space's rows (``likewise.Row(i)`` asks for one), except in a space trained from a
    matrix (``likewise.train(user_items)``), where they are the matrix's columns whichever query made them.
    """

    keys: list[str] | list[list[str]]
    ids: np.ndarray
    scores: np.ndarray
    queries: np.ndarray | None = None
    names: list[str | None] | list[list[str | None]] | None = None
    counts: np.ndarray | None = None

    def _counts_of(self, i: int | None = None) -> list[int | None]:
        """One query's counts (row ``i`` of a batch): Nones when the answer carries none."""
        keys = self.keys if i is None else self.keys[i]
        if self.counts is None:
            return [None] * len(keys)
        return np.asarray(self.counts if i is None else self.counts[i]).tolist()

    def _names_of(self, i: int | None = None) -> list[str | None]:
        """One query's names (row ``i`` of a batch): Nones when none are known."""
        keys = self.keys if i is None else self.keys[i]
        if self.names is None:
            return [None] * len(keys)
        return list(self.names if i is None else self.names[i])  # type: ignore[arg-type]

    @property
    def batched(self) -> bool:
        """True for a 2-D (batch) result."""
        return self.ids.ndim == 2

    def __len__(self) -> int:
        return int(self.ids.shape[0])

    def __iter__(self) -> Iterator[Any]:
        raise TypeError(
            "a Neighbours is not a tuple: take res.ids, res.scores (implicit's (ids, scores)), res.keys, "
            "res.pairs() for (key, score) pairs or res.rows() for a batch's rows"
        )

    def pairs(self) -> list[tuple[str, float]]:
        """One query's ``(key, score)`` pairs, best first (gensim's ``most_similar`` answer)."""
        if self.batched:
            raise ValueError("pairs() is one query's answer; take res.rows() (or res[i]) of a batch first")
        return list(zip(self.keys, self.scores.tolist(), strict=True))  # type: ignore[arg-type]

    def rows(self) -> list[Neighbours]:
        """A batch's answers, one 1-D :class:`Neighbours` per query row."""
        if not self.batched:
            raise ValueError("rows() splits a batch; this is one query's answer (take res.pairs())")
        return [self[i] for i in range(len(self))]

    def __getitem__(self, i: int) -> Any:
        """One query's :class:`Neighbours` of a batch, or the ``(key, score)`` pair ``i`` of one query."""
        if self.batched:
            names = None if self.names is None else self._names_of(i)
            counts = None if self.counts is None else self.counts[i]
            return Neighbours(list(self.keys[i]), self.ids[i], self.scores[i], names=names, counts=counts)  # type: ignore[arg-type]
        return self.keys[i], float(self.scores[i])

    def __repr__(self) -> str:
        if self.batched:  # the first rows' answers, not just the shape: print() is how results are read
            rows = "; ".join(repr(self[i])[len("Neighbours(") : -1] for i in range(min(len(self), 3)))
            more = "; ..." if len(self) > 3 else ""
            return f"Neighbours({len(self)} queries × {self.ids.shape[1]} neighbours: {rows}{more})"
        pairs = ", ".join(f"{k!r}: {s:.3f}" for k, s in self.pairs()[:5])
        more = ", ..." if len(self) > 5 else ""
        return f"Neighbours({{{pairs}{more}}})"

    def at_least(self, min_score: float | None) -> Neighbours:
        """One query's answer without the neighbours scoring below ``min_score`` (all of it for None).

        Parameters
        ----------
        min_score : float or None

        Returns
        -------
        Neighbours
        """
        if min_score is None:
            return self
        if self.batched:
            raise ValueError("at_least filters one query's answer; index a batch first")
        keep = self.scores >= min_score
        kept = keep.tolist()
        return Neighbours(
            [k for k, ok in zip(self.keys, kept, strict=True) if ok],
            self.ids[keep],
            self.scores[keep],
            names=None
            if self.names is None
            else [n for n, ok in zip(self._names_of(), kept, strict=True) if ok],
            counts=None if self.counts is None else self.counts[keep],
        )

    def records(self) -> list[dict[str, Any]] | list[list[dict[str, Any]]]:
        """The answer as the one record every front end gives: ``{"item", "id", "score", "name", "count"}``
        per neighbour (``count``: its evidence, the item's count in training; None when not carried).

        The command line's ``--json``, the HTTP service and Python give these same records, best first,
        scores as computed (the float32 value as a Python float), ``name`` the item's display name or None.

        Returns
        -------
        list of dict, or list of list of dict
            One query: its records. A batch: one list per query row.
        """
        if not self.batched:
            return answer_records(self.keys, self.ids, self.scores, self._names_of(), self._counts_of())  # type: ignore[arg-type]
        return [
            answer_records(k, ids, s, self._names_of(r), self._counts_of(r))
            for r, (k, ids, s) in enumerate(zip(self.keys, self.ids, self.scores, strict=True))
        ]

    def to_records(self) -> list[dict[str, Any]]:
        """Plain-Python rows for a table or a data frame: :meth:`records` with the rank.

        Returns
        -------
        list of dict
            ``{"rank", "item", "id", "score", "name", "count"}`` per neighbour (rank starts at 1); batch
            results add ``"query"``, the position of the query in the input batch.
        """
        if not self.batched:
            return [{"rank": r + 1, **rec} for r, rec in enumerate(self.records())]  # type: ignore[dict-item]
        queries = self.queries if self.queries is not None else np.arange(len(self))
        return [
            {"query": q, "rank": r + 1, **rec}
            for q, recs in zip(queries.tolist(), self.records(), strict=True)
            for r, rec in enumerate(recs)  # type: ignore[arg-type]
        ]


def answer_records(
    keys: Sequence[str],
    ids: Any,
    scores: Any,
    names: Sequence[str | None] | None = None,
    counts: Sequence[int | None] | None = None,
) -> list[dict[str, Any]]:
    """Ranked answers as the one answer record, ``[{"item", "id", "score", "name", "count"}, ...]``.

    Parameters
    ----------
    keys : sequence of str
    ids : array-like of int
    scores : array-like of float
    names : sequence of (str or None), optional
        Display names (None: unknown; all None when omitted).
    counts : sequence of (int or None), optional
        Each item's count in training, its evidence (None: not carried; all None when omitted).

    Returns
    -------
    list of dict
    """
    names = [None] * len(keys) if names is None else names
    counts = [None] * len(keys) if counts is None else counts
    return [
        {"item": k, "id": int(i), "score": float(s), "name": n, "count": c}
        for k, i, s, n, c in zip(
            keys, np.asarray(ids).tolist(), np.asarray(scores).tolist(), names, counts, strict=True
        )
    ]


def envelope(answers: Iterable[tuple[Any, Neighbours]], **facts: Any) -> dict[str, Any]:
    """The one JSON envelope of every query answer: the command line's ``--json`` and the HTTP service.

    ``{"answers": [{"query": Q, "results": [{"item", "id", "score", "name", "count"}, ...]}, ...],
    **facts}``: one
    answer per query, in the order asked (a batch that skipped unknown queries leaves them out), ``query`` as
    the caller gave it (a key, ``"#12"`` or an int, a list for a basket, seeds or an analogy's ``[a, b,
    c]``, a customer key, a vector's row number), ``results`` its :meth:`Neighbours.records`, best
    first. ``facts`` are what the request fixed for every answer (``"method"``, ``"scoring"``,
    ``"responders"``, ...), beside ``answers``.

    Parameters
    ----------
    answers : iterable of (query, Neighbours)
        One query's answer each (1-D :class:`Neighbours`).
    **facts
        JSON-serialisable values.

    Returns
    -------
    dict
    """
    return {"answers": [{"query": q, "results": n.records()} for q, n in answers], **facts}


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


def items_table(keys: Sequence[str], counts: Any, vectors: np.ndarray, metadata: dict[str, str]) -> pa.Table:
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


def items_frame(
    keys: Sequence[str], counts: Any, vectors: np.ndarray, fingerprint: str, caller: str
) -> pd.DataFrame:
    """A pandas DataFrame ``key, id, count, vector`` (float32 cells, one writable copy of the table).

    ``df.attrs["fingerprint"]`` is the space's; ``caller`` names the method in the message raised when
    pandas (not a dependency of likewise) is missing.
    """
    try:
        import pandas as pd
    except ImportError:
        raise MissingDependencyError("pandas", None, caller) from None
    vectors = np.array(vectors, dtype=np.float32)  # a writable copy
    df = pd.DataFrame(
        {
            "key": list(keys),
            "id": np.arange(len(vectors), dtype=np.int64),
            "count": np.asarray(counts, dtype=np.int64),
            "vector": list(vectors),
        }
    )
    df.attrs["fingerprint"] = fingerprint
    return df
