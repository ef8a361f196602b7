"""Validators shared across the package (as scikit-learn's ``utils.validation``).

Each raises :class:`~likewise.errors.InputError` naming the parameter, the value as given (``!r``) and
what is allowed, so a message reads the same whichever module checked the value.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence, Set
from typing import Any

import numpy as np

from .errors import InputError

__all__ = [
    "Row",
    "check_bool",
    "check_int",
    "check_k",
    "check_keys",
    "check_real",
    "check_vectors",
    "first_nonfinite_row",
    "is_batch",
    "is_item",
    "is_sparse",
    "jsonable",
    "sparse_rows",
]

_SCAN_BYTES = 1 << 24  # rows scanned for NaN / inf per step: a memory-mapped table is never copied whole


def check_int(name: str, v: Any, lo: int, more: str = "") -> None:
    """Raise unless ``v`` is an int (not a bool) ``>= lo``; ``more`` is appended to the message."""
    if isinstance(v, bool | np.bool_) or not isinstance(v, int | np.integer) or v < lo:
        tail = f" {more}" if more else ""
        raise InputError(f"{name} == {v!r}, must be an integer >= {lo}{tail}")


def check_bool(name: str, v: Any) -> bool:
    """``v`` as a bool; raises unless it is one (``"no"`` or ``1`` is not: a non-empty string is true
    in Python, so ``explore="no"`` would have explored)."""
    if not isinstance(v, bool | np.bool_):
        raise InputError(f"{name} == {v!r}, must be True or False")
    return bool(v)


def check_real(name: str, v: Any) -> float:
    """``v`` as a float; raises unless it is a finite real number (not a bool)."""
    if isinstance(v, bool | np.bool_) or not isinstance(v, int | float | np.integer | np.floating):
        raise InputError(f"{name} == {v!r}, must be a number")
    if not math.isfinite(v):
        raise InputError(f"{name} == {v!r}, must be a finite number")
    return float(v)


def check_k(k: object) -> int:
    """The number of results asked for, as an int ``>= 1``."""
    if not isinstance(k, int | np.integer) or isinstance(k, bool | np.bool_) or k < 1:
        raise InputError(f"k == {k!r}, must be an int >= 1")
    return int(k)


class Row:
    """A row number of a space (or of its customer table), said explicitly: ``emb.similar(Row(5))``.

    An item given in Python is the key it is written as: ``emb.similar(5)`` asks for the key ``"5"``
    (a DataFrame's int64 ids are stored as such keys), never for whatever sits in row 5. A row number is
    asked for only through this wrapper, or written ``#5`` on the command line and over HTTP (where it
    means the key ``"#5"`` when the space has one).

    Parameters
    ----------
    n : int
        The row, ``0 <= n < len(space)`` (checked when it is looked up).
    written : str, optional
        The text it was read from (``"#5"``), set by :func:`likewise.parse_item`: a key written the same
        way wins over the row.
    """

    __slots__ = ("n", "written")

    def __init__(self, n: int, written: str | None = None) -> None:
        if isinstance(n, bool | np.bool_) or not isinstance(n, int | np.integer):
            raise InputError(f"Row({n!r}): a row number is an int")
        self.n = int(n)
        self.written = written

    def __repr__(self) -> str:
        return f"Row({self.n})"

    def __str__(self) -> str:
        return self.written if self.written is not None else f"#{self.n}"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Row) and other.n == self.n

    def __hash__(self) -> int:
        return hash(("Row", self.n))


def is_item(x: object) -> bool:
    """A single item: a str key, an int (read as the key it is written as) or a :class:`Row`; not a bool."""
    return isinstance(x, str | int | np.integer | Row) and not isinstance(x, bool | np.bool_)


def is_batch(x: object) -> bool:
    """A sequence of things (list, tuple, range, 1-D or 2-D ndarray), not a str."""
    if isinstance(x, np.ndarray):
        return x.ndim >= 1
    return isinstance(x, Sequence) and not isinstance(x, str | bytes)


def jsonable(value: dict | None, name: str) -> dict:
    """A deep copy of ``value`` as JSON would round-trip it; raises InputError if it cannot be."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InputError(f"{name} must be a dict (JSON object), got {type(value).__name__}")
    try:
        return json.loads(json.dumps(value, allow_nan=False))
    except (TypeError, ValueError) as e:
        raise InputError(f"{name} must be JSON-serialisable: {e}") from None


def check_vectors(vectors: Any, keys: Sequence[str], *, check_finite: bool = True) -> np.ndarray:
    """``vectors`` as a C-contiguous float32 [len(keys), D] array, D >= 1, finite when checked.

    A float32 C-contiguous input (or memory map) is returned without a copy. The message for a
    non-finite row names the row and its key.
    """
    arr = np.asarray(vectors)
    if arr.dtype.kind not in "fiu":
        raise InputError(f"vectors must be real numbers (float32 or float64), got dtype {arr.dtype}")
    if arr.ndim != 2:
        raise InputError(f"vectors must be 2-D [items, dims], got shape {arr.shape}")
    if arr.shape[0] != len(keys):
        raise InputError(f"vectors has {arr.shape[0]} rows but the vocabulary has {len(keys)} keys")
    if arr.shape[1] < 1:
        raise InputError(f"dim == {arr.shape[1]}, must be >= 1")
    arr = np.ascontiguousarray(arr, dtype=np.float32)
    if check_finite:
        i = first_nonfinite_row(arr)
        if i is not None:
            raise InputError(
                f"vectors row {i} ({keys[i]!r}) is not finite (NaN or infinity); vectors must be finite"
            )
    return arr


def first_nonfinite_row(table: np.ndarray) -> int | None:
    """The index of the first row of a 2-D float table holding NaN or infinity, or None.

    Scanned in blocks of about 16 MiB, so a memory-mapped table of any size costs bounded memory.
    """
    step = max(1, _SCAN_BYTES // max(1, table.shape[1] * table.itemsize))
    for start in range(0, table.shape[0], step):
        bad = ~np.isfinite(table[start : start + step]).all(axis=1)
        if bad.any():
            return start + int(np.flatnonzero(bad)[0])
    return None


def is_sparse(x: object) -> bool:
    """A scipy.sparse matrix or array, recognised by the module of its type (scipy is not imported)."""
    return type(x).__module__.startswith("scipy.sparse")


def is_dense_matrix(x: object) -> bool:
    """A 2-D NumPy array of numbers (bool, int or float): a user × item matrix written out in full."""
    return isinstance(x, np.ndarray) and x.ndim == 2 and x.dtype.kind in "biuf"


def is_matrix(x: object) -> bool:
    """A user × item matrix: scipy.sparse (any format) or a dense 2-D NumPy array of numbers."""
    return is_sparse(x) or is_dense_matrix(x)


def _dense_rows(matrix: np.ndarray, name: str) -> tuple[np.ndarray, np.ndarray, tuple[int, int]]:
    """:func:`sparse_rows` for a dense 2-D NumPy array (no scipy needed)."""
    if matrix.shape[0] < 1 or matrix.shape[1] < 1:
        raise InputError(f"{name} has shape {matrix.shape}, expected at least one row and one column")
    bad = ~(np.isfinite(matrix) & (matrix >= 0)) if matrix.dtype.kind == "f" else matrix < 0
    if bad.any():
        row, col = (int(x) for x in np.argwhere(bad)[0])
        raise InputError(
            f"{name}[{row}, {col}] == {matrix[row, col].item()!r}, values must be finite and >= 0"
        )
    keep = matrix > 0
    indptr = np.zeros(matrix.shape[0] + 1, dtype=np.int64)
    np.cumsum(keep.sum(axis=1), out=indptr[1:])
    return indptr, np.nonzero(keep)[1].astype(np.int64), (int(matrix.shape[0]), int(matrix.shape[1]))


def sparse_rows(matrix: Any, name: str = "matrix") -> tuple[np.ndarray, np.ndarray, tuple[int, int]]:
    """The rows of a scipy.sparse matrix as packed column numbers: the entries with a value > 0.

    Any format is converted with ``.tocsr()``; the caller's matrix is never changed (a CSR that is not
    canonical, with duplicate or unsorted entries, is summed on a copy). A dense 2-D NumPy array of
    numbers is read the same way (:func:`is_dense_matrix`).

    Returns
    -------
    indptr : ndarray of int64, shape (n_rows + 1,)
    indices : ndarray of int, shape (indptr[-1],)
        Row ``r`` holds a value > 0 in the columns ``indices[indptr[r]:indptr[r + 1]]``, ascending.
    shape : tuple of int
        ``(n_rows, n_columns)``.

    Raises
    ------
    InputError
        ``matrix`` is not 2-D, has no row or no column, or holds a negative, NaN or infinite value (the
        message names its row and column).
    """
    if is_dense_matrix(matrix):
        return _dense_rows(matrix, name)
    shape = tuple(getattr(matrix, "shape", ()))
    if len(shape) != 2:
        raise InputError(f"{name} has shape {shape}, expected a 2-D matrix (rows x columns)")
    if shape[0] < 1 or shape[1] < 1:
        raise InputError(f"{name} has shape {shape}, expected at least one row and one column")
    csr = matrix.tocsr()
    data = np.asarray(csr.data)
    if data.dtype.kind not in "biuf":
        raise InputError(f"{name} holds {data.dtype} values, expected real numbers (counts, confidence)")
    bad = ~(np.isfinite(data) & (data >= 0)) if data.dtype.kind == "f" else data < 0
    if bad.any():
        p = int(np.flatnonzero(bad)[0])
        row = int(np.searchsorted(csr.indptr, p, side="right")) - 1
        raise InputError(
            f"{name}[{row}, {int(csr.indices[p])}] == {data[p].item()!r}, values must be finite and >= 0"
        )
    if not csr.has_canonical_format:  # duplicate or unsorted entries: summed and sorted on a copy
        csr = csr.copy()
        csr.sum_duplicates()
    indptr = np.asarray(csr.indptr, dtype=np.int64)
    indices = np.asarray(csr.indices)
    keep = np.asarray(csr.data) > 0  # explicit zeros are not in the basket
    if not keep.all():
        kept = np.zeros(len(keep) + 1, dtype=np.int64)
        np.cumsum(keep, out=kept[1:])
        indptr, indices = kept[indptr], indices[keep]
    return indptr, indices, (int(shape[0]), int(shape[1]))


def check_keys(keys: Any, n: int, name: str, per: str) -> list[str]:
    """``keys`` as a list of ``n`` distinct str, one ``per`` row or column (named in the messages)."""
    if isinstance(keys, str | bytes | Set | Mapping) or not isinstance(keys, Iterable):  # ordered only
        raise InputError(f"{name} must be a sequence of str keys, one per {per}; got {type(keys).__name__}")
    keys = list(keys)
    if len(keys) != n:
        raise InputError(f"{name} has {len(keys)} keys, expected {n} (one per {per} of the matrix)")
    for i, k in enumerate(keys):
        if not isinstance(k, str):
            hint = f" (leave {name} out: columns are then keyed by their numbers)" if per == "column" else ""
            raise InputError(f"{name}[{i}] is {type(k).__name__} {k!r}, keys must be str{hint}")
    if len(set(keys)) != n:
        seen: set[str] = set()
        dup = next(k for k in keys if k in seen or seen.add(k))  # type: ignore[func-returns-value]
        raise InputError(f"{name} holds {dup!r} more than once; keys must be distinct (one per {per})")
    return [k if type(k) is str else str(k) for k in keys]


def default_of(func: Any, name: str) -> Any:
    """The default of parameter ``name`` of the library function ``func``.

    A query option's default is declared once, in the library's signature; the command line and the HTTP
    request models read it from there, so ``likewise analogy``, ``POST .../analogy`` and
    ``Embeddings.analogy`` answer alike when nothing is given.

    Parameters
    ----------
    func : callable
    name : str

    Returns
    -------
    Any
    """
    import inspect

    default = inspect.signature(func).parameters[name].default
    if default is inspect.Parameter.empty:
        raise TypeError(f"{func.__qualname__}({name}) has no default to offer the front ends")
    return default
