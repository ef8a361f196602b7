"""Item-item basket completion: EASE fitted beside the embeddings, and the arrays it is saved as.

EASE (Steck, "Embarrassingly Shallow Autoencoders for Sparse Data", WWW 2019) regresses every item on
all the others over the basket x item incidence matrix ``X``, with a ridge penalty ``lam`` and a zero
diagonal. It has a closed form::

    G = X^T X                    (G[i, j]: baskets holding both i and j; G[i, i]: baskets holding i)
    P = inv(G + lam * I)
    B = -P / diag(P)             (column j divided by P[j, j]), diag(B) = 0

and a basket ``q`` scores candidate ``j`` by ``sum_{i in q} B[i, j]``. It is the first baseline
recommendation papers report on basket and session data; on leave-one-out completion it beats both
co-purchase counts and skip-gram's affinity on most data sets of ``bench/defaults_vs_baselines.py``.

Here it is a plain-array model (:class:`ItemItem`) over a subset of a space's rows:

* **Budget.** ``G`` and its inverse are dense ``m x m`` float64 (``16 * m**2`` bytes, the inverse made
  in place by LAPACK's Cholesky routines when SciPy is installed, by NumPy's LU otherwise, which is
  about three times slower). A catalogue of more than ``max_items`` rows (:data:`MAX_ITEMS`: 8,192,
  1.0 GiB and about 25 s per inversion on 2 cores) is fitted on its ``max_items`` most frequent
  items; the rest are neither used as evidence nor recommended by it (the space's affinity still
  answers a basket of only those).
* **Sparse rows.** Only the ``keep`` (:data:`KEEP`) largest-magnitude weights of each row of ``B`` are
  kept (CSR), so the saved model is ``12 * m * keep`` bytes whatever ``m`` and a query touches only
  its basket's rows.
* **lam** is chosen on a held-out slice of the baskets (:func:`choose_lambda`) from a grid around
  :func:`lambda_grid`, by MRR@10 of leave-one-out completion, the measure ``epochs="auto"`` uses.

Everything here takes arrays and scalars; :mod:`likewise.train` decides when to fit, and
:class:`likewise.space.affinity.BasketQueries` answers with it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._arrays import unique
from ..errors import CorruptModelError, InputError, ItemIndexError
from .itemtail import (
    GRAM_LINES,
    TAIL_MIN_COUNT,
    TailCounts,
    basket_ranges,
    prune_rows,
    tail_cocounts,
    tail_ids,
    tail_weights,
)
from .search import select_top_k

__all__ = [
    "KEEP",
    "MAX_ITEMS",
    "TAIL_MIN_COUNT",
    "ItemItem",
    "TailCounts",
    "choose_lambda",
    "covered_rows",
    "describe",
    "ease_weights",
    "fit_itemitem",
    "gram_matrix",
    "lambda_grid",
    "prune_rows",
    "reciprocal_ranks",
    "segment_pairs",
    "tail_cocounts",
    "tail_ids",
    "tail_weights",
]

MAX_ITEMS = 8_192  # rows of the exact fit: 16 * m**2 bytes = 1.0 GiB, ~25 s per inversion (2 cores)
KEEP = 256  # weights kept per row of B
_BLOCK_ELEMS = 1 << 22  # dense scores per block when ranking many baskets


def covered_rows(counts: np.ndarray, max_items: int) -> np.ndarray:
    """The rows an item-item model covers: every row with a count, or the ``max_items`` most frequent.

    Returns sorted int64 ids; ties in count are broken by the lower id, so the choice is deterministic.
    """
    c = np.asarray(counts, dtype=np.int64)
    have = np.flatnonzero(c > 0)
    if len(have) <= max_items:
        return have.astype(np.int64)
    order = np.lexsort((have, -c[have]))[:max_items]
    return np.sort(have[order]).astype(np.int64)


def gram_matrix(
    ids: np.ndarray, offsets: np.ndarray, items: np.ndarray, n_items: int, out: np.ndarray | None = None
) -> np.ndarray:
    """``X^T X`` over the rows ``items``: ``(m, m)`` counts, ``m = len(items)``.

    Each basket counts once per distinct item (a repeated item is one purchase decision); ids outside
    ``items`` are ignored. Pairs are generated and counted a bounded number at a time. The counts are
    float32, exact below 2**24 baskets (float64 from there): half the memory of float64 at the sizes
    EASE is fitted at.

    Parameters
    ----------
    ids, offsets : ndarray
        Packed baskets: basket ``s`` is ``ids[offsets[s]:offsets[s + 1]]``, ids in ``[0, n_items)``.
    items : ndarray of int64
        Sorted distinct ids: row ``r`` of the result is item ``items[r]``.
    n_items : int
        Size of the id space.
    out : ndarray, optional
        A ``(m, m)`` matrix to add the counts to (the Gram matrix of more baskets), returned.
    """
    m = len(items)
    pos = np.full(int(n_items), -1, dtype=np.int64)
    pos[np.asarray(items, dtype=np.int64)] = np.arange(m, dtype=np.int64)
    ids = np.asarray(ids)
    offsets = np.asarray(offsets, dtype=np.int64)
    n_seq = len(offsets) - 1
    if out is None:
        out = np.zeros((m, m), dtype=np.float32 if n_seq < 2**24 else np.float64)
    elif out.shape != (m, m) or not out.flags.c_contiguous:
        raise InputError(f"out has shape {out.shape}; expected a C-contiguous ({m}, {m}) matrix")
    g = out
    if n_seq <= 0 or m == 0:
        return g
    from ..kernels.rowsum import add_pair_counts  # numba: loaded when a model is fitted, not on import

    # a range of baskets of about _GRAM_LINES lines at a time: the line-sized temporaries stay bounded
    # (whole baskets per range, so each is counted once per distinct item as in one pass)
    for b0, b1 in basket_ranges(offsets, GRAM_LINES):
        lo, hi = int(offsets[b0]), int(offsets[b1])
        rows = pos[np.asarray(ids[lo:hi], dtype=np.int64)]
        seq = np.repeat(np.arange(b1 - b0, dtype=np.int64), np.diff(offsets[b0 : b1 + 1]))
        keep = rows >= 0
        key = unique(seq[keep] * m + rows[keep])  # distinct (basket, row), sorted by basket
        del rows, seq, keep
        seq, rows = key // m, key % m
        del key
        starts = np.flatnonzero(np.r_[True, seq[1:] != seq[:-1]]) if len(seq) else np.zeros(0, np.int64)
        lens = np.diff(np.r_[starts, len(seq)])
        flat = g.reshape(-1)
        flat[:: m + 1] += np.bincount(rows, minlength=m)  # the diagonal: baskets holding each item
        two = lens >= 2
        add_pair_counts(g, rows, starts[two], lens[two])  # compiled: no pair is materialised
    return g


def segment_pairs(values: np.ndarray, starts: np.ndarray, lens: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every ordered pair ``(x, y)``, ``x != y``, of each segment ``values[starts[i]:starts[i] + lens[i]]``.

    Vectorised (no Python loop over segments); the caller bounds ``sum(lens**2)``. Returns the two
    columns of the pairs, each ``values``' dtype.
    """
    tok = np.repeat(starts, lens) + (np.arange(int(lens.sum())) - np.repeat(np.cumsum(lens) - lens, lens))
    rep = np.repeat(lens, lens)
    left = np.repeat(values[tok], rep)
    seg_start = np.repeat(np.repeat(starts, lens), rep)
    seg_off = np.arange(len(left)) - np.repeat(np.cumsum(rep) - rep, rep)
    right = values[seg_start + seg_off]
    mask = left != right
    return left[mask], right[mask]


def ease_weights(gram: np.ndarray, lam: float) -> np.ndarray:
    """EASE's ``B`` (float32, zero diagonal) from ``G = X^T X``; ``gram`` is not changed.

    Uses LAPACK's Cholesky factor and inverse in float32 (``spotrf`` / ``spotri``, SciPy) when SciPy
    is importable: half the memory of float64 and about 1.5 times faster, with the same rankings (the
    weights differ by about 1e-6 of the largest on the Complete Journey's 8,192 most bought products).
    A matrix that is not positive definite in float32 is inverted again in float64; without SciPy,
    NumPy's ``inv`` in float64.

    Raises
    ------
    InputError
        ``lam`` is not > 0.
    """
    p = _spd_inverse(gram, _check_lam(lam))
    d = np.diag(p).copy()
    p /= -d[None, :]
    np.fill_diagonal(p, 0.0)
    return p.astype(np.float32, copy=False)


def _check_lam(lam: float) -> float:
    lam = float(lam)
    if not lam > 0 or not math.isfinite(lam):
        raise InputError(f"lam == {lam!r}, must be a finite number > 0")
    return lam


def _spd_inverse(gram: np.ndarray, lam: float) -> np.ndarray:
    """``inv(gram + lam * I)`` for a symmetric positive semi-definite ``gram`` (not changed).

    float32 Cholesky first; float64 where float32 rounding leaves it not positive definite.
    """
    try:
        from scipy.linalg import lapack
    except ImportError:  # ~3x slower (LU instead of Cholesky), same answer
        a = np.array(gram, dtype=np.float64)
        a[np.diag_indices(len(a))] += lam
        return np.linalg.inv(a)
    for dtype, potrf, potri in (
        (np.float32, lapack.spotrf, lapack.spotri),
        (np.float64, lapack.dpotrf, lapack.dpotri),
    ):
        a = np.array(gram, dtype=dtype, order="F")  # a copy, factored in place
        a[np.diag_indices(len(a))] += lam
        c, info = potrf(a, lower=0, overwrite_a=1, clean=0)
        if info == 0:
            c, info = potri(c, lower=0, overwrite_c=1)
        if info == 0:
            # the upper triangle holds the inverse: mirror it in place, a block of rows at a time
            for r in range(0, len(c), 1024):
                c[r : r + 1024, :r] = c[:r, r : r + 1024].T
                d = np.triu(c[r : r + 1024, r : r + 1024])
                c[r : r + 1024, r : r + 1024] = d + np.triu(d, 1).T
            return c
        del a, c
    a = np.array(gram, dtype=np.float64)  # not positive definite in floating point: the general inverse
    a[np.diag_indices(len(a))] += lam
    return np.linalg.inv(a)


@dataclass(frozen=True)
class ItemItem:
    """A fitted item-item completion model over some rows of a space of ``n_items`` rows.

    Attributes
    ----------
    items : ndarray of int64, shape (m,)
        Sorted ids of the rows the model covers.
    indptr : ndarray of int64, shape (m + 1,)
    cols : ndarray of int32, shape (nnz,)
        Space ids of the kept weights of each covered row (sorted within a row).
    data : ndarray of float32, shape (nnz,)
        ``B[items[r], cols[p]]`` for ``p`` in ``indptr[r]:indptr[r + 1]``.
    n_items : int
        Rows of the space it was fitted for.
    lam : float
        The ridge penalty it was fitted with.
    """

    items: np.ndarray
    indptr: np.ndarray
    cols: np.ndarray
    data: np.ndarray
    n_items: int
    lam: float

    @property
    def nbytes(self) -> int:
        """Bytes of its arrays (what saving it adds to a space)."""
        return int(self.items.nbytes + self.indptr.nbytes + self.cols.nbytes + self.data.nbytes)

    def rows_of(self, ids: np.ndarray) -> np.ndarray:
        """Row of each id in :attr:`items`, -1 where the model does not cover it."""
        ids = np.asarray(ids, dtype=np.int64)
        pos = np.minimum(np.searchsorted(self.items, ids), max(len(self.items) - 1, 0))
        hit = (self.items[pos] == ids) if len(self.items) else np.zeros(len(ids), dtype=bool)
        return np.where(hit, pos, -1)

    def scores(self, contexts: Sequence[np.ndarray]) -> np.ndarray:
        """Dense float32 ``(n, n_items)`` scores of every id for each context (ids it covers only).

        An id the model does not cover scores ``-inf`` (it is never recommended); a context item it
        does not cover adds nothing.
        """
        n, v = len(contexts), self.n_items
        out = np.full((n, v), -np.inf, dtype=np.float32)
        out[:, self.items] = 0.0
        if n == 0:
            return out
        rows = [self.rows_of(np.asarray(c, dtype=np.int64).reshape(-1)) for c in contexts]
        lens = np.fromiter((int((r >= 0).sum()) for r in rows), dtype=np.int64, count=n)
        if lens.sum() == 0:
            return out
        r = np.concatenate([x[x >= 0] for x in rows])
        owner = np.repeat(np.arange(n, dtype=np.int64), lens)
        rl = self.indptr[r + 1] - self.indptr[r]
        pos = np.repeat(self.indptr[r] - np.cumsum(rl) + rl, rl) + np.arange(int(rl.sum()), dtype=np.int64)
        flat = np.repeat(owner, rl) * v + self.cols[pos]
        add = np.bincount(flat, weights=self.data[pos], minlength=n * v).reshape(n, v)
        out += add.astype(np.float32)
        return out

    def top_k(
        self, contexts: Sequence[np.ndarray], k: int, allowed: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Top-``k`` ids and float32 scores per context, its own items and disallowed ids excluded.

        Parameters
        ----------
        contexts : sequence of ndarray of int64
            Ids in ``[0, n_items)``.
        k : int
            >= 1; the caller clamps it to the candidates left.
        allowed : ndarray of bool, shape (n_items,), optional
            Candidates that may be returned (default: all).

        Returns
        -------
        ids : ndarray of int64, shape (n, k)
        scores : ndarray of float32, shape (n, k)
            Best first, equal scores by ascending id. Uncovered ids score ``-inf`` and come last.
        """
        ctx = [np.asarray(c, dtype=np.int64).reshape(-1) for c in contexts]
        for c in ctx:
            if len(c) and (c.min() < 0 or c.max() >= self.n_items):
                bad = int(c.min() if c.min() < 0 else c.max())
                raise ItemIndexError(bad, self.n_items, what="context item id")
        n = len(ctx)
        ids = np.empty((n, k), dtype=np.int64)
        sc = np.empty((n, k), dtype=np.float32)
        step = max(1, _BLOCK_ELEMS // max(1, self.n_items))
        for a in range(0, n, step):
            b = min(n, a + step)
            s = self.scores(ctx[a:b])
            if allowed is not None:
                s[:, ~allowed] = -np.inf
            for r, c in enumerate(ctx[a:b]):
                s[r, c] = -np.inf
            ids[a:b], sc[a:b] = select_top_k(s, k)
        return ids, sc

    def with_placed(
        self, new_ids: Sequence[int], neighbours: Sequence[np.ndarray], weights: Sequence[np.ndarray]
    ) -> ItemItem:
        """A model that also covers products placed without orders, each as a blend of its neighbours.

        A placed product ``p`` with neighbours ``s`` (weights ``w``, made to sum to 1) gets the row
        ``sum_s w_s B[s, :]`` (what it completes) and the column ``B[:, p] = sum_s w_s B[:, s]`` (what
        it is recommended with): EASE's answer for an item that is bought as its neighbours are.
        Neighbours the model does not cover are skipped; a product with none keeps no weights.

        Parameters
        ----------
        new_ids : sequence of int
            Ids of the placed products (rows appended to the space; ``>= n_items`` grows the model).
        neighbours, weights : sequences of ndarray
            For each, the ids of its nearest products and their (positive) weights.
        """
        n_items = max([self.n_items, *[int(i) + 1 for i in new_ids]])
        row_of = np.repeat(self.items, np.diff(self.indptr))
        by_col = np.argsort(self.cols, kind="stable")
        sorted_cols = self.cols[by_col]
        parts_r, parts_c, parts_v = [row_of], [self.cols.astype(np.int64)], [self.data.astype(np.float64)]
        for new, nb, w in zip(new_ids, neighbours, weights, strict=True):
            nb = np.asarray(nb, dtype=np.int64)
            w = np.asarray(w, dtype=np.float64)
            r = self.rows_of(nb)
            ok = (r >= 0) & (w > 0)
            if not ok.any():
                continue
            nb, w, r = nb[ok], w[ok] / w[ok].sum(), r[ok]
            for s, ws, rs in zip(nb.tolist(), w.tolist(), r.tolist(), strict=True):
                lo, hi = np.searchsorted(sorted_cols, [s, s + 1])
                at = by_col[lo:hi]  # the column of s: B[x, s] for every covered x
                parts_r.append(row_of[at])
                parts_c.append(np.full(len(at), int(new), dtype=np.int64))
                parts_v.append(ws * self.data[at].astype(np.float64))
                seg = slice(int(self.indptr[rs]), int(self.indptr[rs + 1]))  # the row of s
                parts_r.append(np.full(seg.stop - seg.start, int(new), dtype=np.int64))
                parts_c.append(self.cols[seg].astype(np.int64))
                parts_v.append(ws * self.data[seg].astype(np.float64))
        r, c, v = np.concatenate(parts_r), np.concatenate(parts_c), np.concatenate(parts_v)
        keep = r != c
        key, inv = np.unique(r[keep] * n_items + c[keep], return_inverse=True)
        val = np.bincount(inv, weights=v[keep])
        rows, cols = np.divmod(key, n_items)
        items = unique(np.r_[self.items, rows])
        pos = np.searchsorted(items, rows)
        indptr = np.zeros(len(items) + 1, dtype=np.int64)
        np.cumsum(np.bincount(pos, minlength=len(items)), out=indptr[1:])
        return ItemItem(items, indptr, cols.astype(np.int32), val.astype(np.float32), n_items, self.lam)

    def to_arrays(self) -> dict[str, np.ndarray]:
        """The arrays to save, by file stem."""
        return {"items": self.items, "indptr": self.indptr, "cols": self.cols, "data": self.data}

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray], n_items: int, lam: float, where: str) -> ItemItem:
        """Rebuild a saved model, checking every shape, dtype and range.

        Raises
        ------
        CorruptModelError
            Naming ``where`` and what is wrong.
        """
        want = {"items": np.int64, "indptr": np.int64, "cols": np.int32, "data": np.float32}
        for name, dt in want.items():
            a = arrays.get(name)
            if a is None or a.dtype != dt or a.ndim != 1:
                got = "missing" if a is None else f"{a.dtype} with {a.ndim} dimensions"
                raise CorruptModelError(f"{where}: item-item {name} must be 1-D {np.dtype(dt)}, got {got}")
        items, indptr, cols, data = (arrays[k] for k in want)
        m = len(items)
        ok = (
            len(indptr) == m + 1
            and (m == 0 or (items[0] >= 0 and items[-1] < n_items and bool(np.all(np.diff(items) > 0))))
            and indptr[0] == 0
            and bool(np.all(np.diff(indptr) >= 0))
            and indptr[-1] == len(cols) == len(data)
            and (len(cols) == 0 or (int(cols.min()) >= 0 and int(cols.max()) < n_items))
            and bool(np.all(np.isfinite(data)))
        )
        if not ok or not (math.isfinite(lam) and lam > 0):
            raise CorruptModelError(
                f"{where}: the item-item arrays are inconsistent (rows {m}, weights {len(data)}, "
                f"space of {n_items} rows, lam {lam!r})"
            )
        return cls(items, indptr, cols, data, int(n_items), float(lam))


def fit_itemitem(
    ids: np.ndarray,
    offsets: np.ndarray,
    counts: np.ndarray,
    lam: float,
    *,
    max_items: int = MAX_ITEMS,
    keep: int = KEEP,
    gram: np.ndarray | None = None,
    tail_min_count: int | None = None,
) -> ItemItem:
    """Fit EASE on packed baskets over the rows :func:`covered_rows` picks, and optionally a tail.

    Parameters
    ----------
    ids, offsets : ndarray
        The training baskets.
    counts : ndarray of int, shape (V,)
        Count of each id (chooses the covered rows when there are more than ``max_items``, and the tail).
    lam : float
        Ridge penalty, > 0.
    max_items, keep : int
        See the module docstring.
    gram : ndarray, optional
        ``gram_matrix`` of these baskets over ``covered_rows(counts, max_items)``, when already made.
    tail_min_count : int, optional
        Also cover every id outside the dense rows whose count is at least this (the tail; see
        :func:`tail_weights`). None: the dense rows alone.
    """
    if not isinstance(max_items, int | np.integer) or max_items < 1:
        raise InputError(f"max_items == {max_items!r}, must be an int >= 1")
    if not isinstance(keep, int | np.integer) or keep < 1:
        raise InputError(f"keep == {keep!r}, must be an int >= 1")
    bad_tail = not isinstance(tail_min_count, int | np.integer) or tail_min_count < 1
    if tail_min_count is not None and bad_tail:
        raise InputError(f"tail_min_count == {tail_min_count!r}, must be an int >= 1 or None")
    n_items = len(counts)
    items = covered_rows(counts, int(max_items))
    g = gram_matrix(ids, offsets, items, n_items) if gram is None else gram
    tail = tail_ids(counts, items, tail_min_count) if tail_min_count is not None else np.zeros(0, np.int64)
    if len(tail) == 0:
        b = ease_weights(g, lam)
        indptr, cols, data = prune_rows(b, keep)
        return ItemItem(items, indptr, items[cols].astype(np.int32), data, int(n_items), float(lam))
    lam = _check_lam(lam)
    p = _spd_inverse(g, lam)
    co = tail_cocounts(ids, offsets, items, tail, n_items)
    return ItemItem(*tail_weights(p, items, tail, co, lam, keep, n_items), int(n_items), float(lam))


def lambda_grid(gram: np.ndarray) -> list[float]:
    """Ridge penalties to try: powers of ten around the mean diagonal of ``G`` (baskets per item).

    EASE's best penalty grows with how much data each item has (Steck reports 500 on ML-20M and 200 to
    3,000 on larger sets); this grid spans 1/100 to 10 times the mean item frequency, at least 1.
    """
    mean = float(np.mean(np.diag(gram))) if len(gram) else 1.0
    centre = 10 ** round(math.log10(max(mean, 1.0)))
    return sorted({float(max(1.0, centre * f)) for f in (0.01, 0.1, 1.0, 10.0)})


def reciprocal_ranks(
    model: ItemItem, queries: Sequence[np.ndarray], hidden: np.ndarray, k: int = 10
) -> np.ndarray:
    """``1 / rank`` of each hidden item among the model's completions of its query (0 past ``k``).

    Ranked as :meth:`ItemItem.top_k` ranks: ties go to the lower id, an uncovered hidden item is a
    miss. The mean is MRR@k and ``(rr > 0).mean()`` HR@k, as
    :func:`likewise.training.auto.validation_completion` measures the affinity.
    """
    rr = np.zeros(len(hidden), dtype=np.float64)
    step = max(1, _BLOCK_ELEMS // max(1, model.n_items))
    for a in range(0, len(hidden), step):
        b = min(len(hidden), a + step)
        s = model.scores(queries[a:b])
        for r in range(b - a):
            q, h = queries[a + r], int(hidden[a + r])
            row = s[r]
            row[q] = -np.inf
            t = row[h]
            if not np.isfinite(t):
                continue
            rank = int(np.count_nonzero(row > t)) + int(np.count_nonzero(row[:h] == t))
            if rank < k:
                rr[a + r] = 1.0 / (rank + 1)
    return rr


def choose_lambda(
    train: tuple[np.ndarray, np.ndarray],
    queries: Sequence[np.ndarray],
    hidden: np.ndarray,
    counts: np.ndarray,
    *,
    max_items: int = MAX_ITEMS,
    keep: int = KEEP,
    grid: Sequence[float] | None = None,
    gram: np.ndarray | None = None,
    models: dict[float, ItemItem] | None = None,
    tail_min_count: int | None = None,
) -> tuple[float, np.ndarray, dict[str, float]]:
    """The penalty chosen on held-out MRR@10, its reciprocal ranks, and MRR@10 per penalty tried.

    ``models``, when given, receives every model fitted (penalty -> :class:`ItemItem`), so a caller
    can keep the chosen one instead of fitting it again.

    Fits EASE on ``train`` (packed baskets) for each penalty of ``grid`` (default :func:`lambda_grid`,
    then the midpoints on a log scale either side of the best) and scores leave-one-out completion of
    the held-out ``queries`` / ``hidden`` (``gram``: the Gram matrix of ``train`` over the covered
    rows, when already made; ``tail_min_count`` as :func:`fit_itemitem`'s, so what is chosen is the
    model that serves). The one-standard-error rule picks among them: the largest
    penalty whose MRR is within one standard error (of its paired difference) of the best. The slice is
    small and the curve flat near its top, so the best alone is mostly noise; and a smoother model did
    no worse on the test baskets of ``bench/defaults_vs_baselines.py`` (the best penalty there was at
    or above the held-out best on all five data sets with seed 1).
    """
    ids, offsets = train
    tail_min = tail_min_count
    items = covered_rows(counts, int(max_items))
    g = gram_matrix(ids, offsets, items, len(counts)) if gram is None else gram
    tried: dict[float, np.ndarray] = {}

    def score(lam: float) -> None:
        if lam not in tried:
            model = fit_itemitem(
                ids, offsets, counts, lam, max_items=max_items, keep=keep, gram=g, tail_min_count=tail_min
            )
            tried[lam] = reciprocal_ranks(model, queries, hidden)
            if models is not None:
                models[lam] = model

    def best() -> float:
        return max(tried, key=lambda lam: (tried[lam].mean(), lam))

    for lam in grid if grid is not None else lambda_grid(g):
        score(float(lam))
    if grid is None:  # one refinement: half a decade either side of the best
        centre = best()
        for f in (10**-0.5, 10**0.5):
            score(float(max(1.0, centre * f)))
    top = best()
    lam = top
    for x in sorted(tried):
        d = tried[top] - tried[x]
        se = float(d.std(ddof=1) / math.sqrt(len(d))) if len(d) > 1 else 0.0
        if x > lam and float(d.mean()) <= se:
            lam = x
    return lam, tried[lam], {f"{x:g}": float(v.mean()) for x, v in sorted(tried.items())}


def describe(model: ItemItem, n_rows: int) -> dict[str, Any]:
    """What a manifest records of a model: penalty, rows covered, weights kept, bytes."""
    return {
        "method": "ease",
        "lam": model.lam,
        "rows": int(len(model.items)),
        "of_rows": int(n_rows),
        "weights": int(len(model.data)),
        "bytes": model.nbytes,
    }
