"""The strongest simple peers of basket completion, configured as a competent user would configure them.

:mod:`likewise.baselines.counts` counts; the two recommenders here *learn*, each with its important
hyper-parameters chosen on a held-out slice of the training sequences, so that a comparison with the
model is against the peer at its best rather than at a library default:

* ``ease`` -- :class:`EASERecommender`: EASE (Steck, WWW 2019), the closed-form item-item ridge
  regression of :mod:`likewise.space.itemitem`, with every weight of ``B`` kept (``keep=None``). Its penalty
  ``lam`` is chosen by :func:`likewise.space.itemitem.choose_lambda` on a held-out slice
  (:func:`likewise.training.auto.split_validation`, leave-one-out cases from
  :func:`likewise.training.auto.validation_queries`, MRR@10), then the model is refitted on every training
  sequence. A data set too small to hold a slice out gets the middle of
  :func:`likewise.space.itemitem.lambda_grid`.
* ``als`` -- :class:`ALSRecommender`: confidence-weighted implicit ALS (Hu, Koren & Volinsky, ICDM 2008)
  from the ``implicit`` package (optional: ``pip install implicit``) on the binary basket x item
  matrix, confidence ``alpha * X``, implicit's 15 iterations, factors = the model's dimension. Its two
  important hyper-parameters, ``alpha`` (1, 10, 40, 100) and ``regularization`` (0.1, 1, 10, 100), are
  chosen together by MRR@10 on the same kind of held-out slice, then the model is refitted on
  everything. A query is a new user whose factors are solved from the query's items.

  Why ``regularization`` is searched too: with a fixed 0.1 (implicit's default is 0.01), 100 factors
  over a few hundred items and two thousand baskets overfit so badly that ALS ranks below popularity
  (HR@10 0.11 against 0.37 on the small ``zipf-groups`` set of ``bench/defaults_vs_baselines.py``,
  0.07 against 0.30 on ``mixed-tastes``, means of seeds 1 and 2); searched, it reaches 0.59 and 0.38,
  level with EASE. The best penalty moves with ``alpha`` (the loss scales with the confidence), so the
  two are searched together; 1000 was worse than 100 on all three small sets.

Memory: EASE inverts a dense ``m x m`` float64 matrix, about ``16 * m**2`` bytes for ``m`` items. Above
``max_items`` (default :data:`likewise.space.itemitem.MAX_ITEMS`, 1 GiB) it covers the most frequent
``max_items`` items and says so in :attr:`EASERecommender.note`; items it does not cover are never
evidence and are ranked last. With an explicit ``max_bytes`` it refuses, naming both numbers, rather
than go over budget. The fitted weights, every one kept, take ``8 * m**2`` bytes (float32 and int32
column ids); ``keep=`` keeps fewer per row.

Both follow :class:`likewise.baselines.counts.Recommender` (``recommend_ids(contexts, k)``: int64 ``(n, k)``,
best first, no context item, ties by the lower id) and are reachable through
:func:`likewise.baselines.counts.fit_baselines` as ``"ease"`` and ``"als"``.
"""

from __future__ import annotations

import importlib.util
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .._check import check_int, check_real
from ..errors import InputError, MissingDependencyError, NotFittedError
from ..space.itemitem import (
    MAX_ITEMS,
    ItemItem,
    choose_lambda,
    covered_rows,
    fit_itemitem,
    gram_matrix,
    lambda_grid,
)
from ..space.search import top_k_search
from ..training.auto import split_validation, validation_queries
from ._ranking import as_sequences, check_contexts, check_k, check_training_ids, fill_unused

__all__ = [
    "ALS_ALPHAS",
    "ALS_REGULARIZATIONS",
    "HAS_IMPLICIT",
    "ALSRecommender",
    "EASERecommender",
    "basket_matrix",
    "coordinate_search",
    "ease_bytes",
]

#: Whether ``implicit`` can be found (looked up, not imported: importing it takes about a second).
HAS_IMPLICIT = importlib.util.find_spec("implicit") is not None
#: Confidence weights ALS tries (Hu et al. report 40 on TV viewing; the best differs per data set).
ALS_ALPHAS: tuple[float, ...] = (1.0, 10.0, 40.0, 100.0)
#: Ridge penalties ALS tries with them (implicit's default is 0.01; many factors on little data need more).
ALS_REGULARIZATIONS: tuple[float, ...] = (0.1, 1.0, 10.0, 100.0)
_VALIDATION_K = 10  # MRR@10, as choose_lambda and epochs="auto" score


def ease_bytes(m: int) -> int:
    """Bytes of EASE's dense fit over ``m`` items: ``G`` and its inverse, float64 ``m x m`` each."""
    return 16 * int(m) ** 2


def _validation_slice(
    ids: np.ndarray, offsets: np.ndarray, seed: int
) -> tuple[tuple[np.ndarray, np.ndarray], list[np.ndarray], np.ndarray] | None:
    """(train part, queries, hidden ids) of the held-out slice, or None when the data is too small."""
    split = split_validation(ids, offsets, seed)
    if split is None:
        return None
    tr_ids, tr_off, va_ids, va_off = split
    queries, hidden = validation_queries(va_ids, va_off, seed)
    if len(hidden) == 0:
        return None
    return (tr_ids, tr_off), queries, hidden


# --------------------------------------------------------------------------------------------------------
# EASE
# --------------------------------------------------------------------------------------------------------


class EASERecommender:
    """EASE item-item regression, its penalty chosen on a held-out slice (see the module docstring).

    Parameters
    ----------
    max_items : int
        Items the dense fit may cover; above it, the most frequent ``max_items``.
    max_bytes : int, optional
        A memory budget for the dense fit: raise instead of fitting when ``16 * m**2`` exceeds it
        (``m`` the items covered). None: no budget beyond ``max_items``.
    keep : int, optional
        Weights kept per row of ``B`` (the largest in magnitude); None keeps them all (exact EASE).
    seed : int
        Chooses the held-out slice.

    Attributes
    ----------
    lam_ : float
        The penalty fitted with.
    tried_ : dict of str to float
        Held-out MRR@10 of each penalty tried (empty when no slice could be held out).
    model_ : ItemItem
        The fitted weights.
    note_ : str
        What the fit left out ('' when it covers every training item).
    """

    name = "ease"

    def __init__(
        self,
        *,
        max_items: int = MAX_ITEMS,
        max_bytes: int | None = None,
        keep: int | None = None,
        seed: int = 0,
    ) -> None:
        check_int("max_items", max_items, 1)
        if max_bytes is not None:
            check_int("max_bytes", max_bytes, 1, "or None")
        if keep is not None:
            check_int("keep", keep, 1, "or None")
        self.max_items = int(max_items)
        self.max_bytes = None if max_bytes is None else int(max_bytes)
        self.keep = None if keep is None else int(keep)
        check_int("seed", seed, 0)
        self.seed = int(seed)

    def fit(self, train: Any, n_items: int) -> EASERecommender:
        """Choose ``lam`` on a held-out slice of ``train``, then fit on all of it.

        Parameters
        ----------
        train : Corpus or sequence of int arrays
            Training baskets of ids in ``[0, n_items)``.
        n_items : int
            Size of the id space V.

        Returns
        -------
        EASERecommender
            ``self``.

        Raises
        ------
        InputError
            ``max_bytes`` is set and the dense fit needs more.
        """
        ids, offsets = as_sequences(train)
        n = check_training_ids(ids, n_items)
        counts = np.bincount(ids, minlength=n).astype(np.int64)
        n_seen = int(np.count_nonzero(counts))
        items = covered_rows(counts, self.max_items)
        m = len(items)
        need = ease_bytes(m)
        if self.max_bytes is not None and need > self.max_bytes:
            fits = math.isqrt(self.max_bytes // 16)
            raise InputError(
                f"EASE over {m:,} items needs {need:,} bytes (16 * m**2) but max_bytes == "
                f"{self.max_bytes:,}; pass max_items <= {fits:,} or a larger max_bytes"
            )
        self.note_ = (
            f"EASE covers the {m:,} most frequent of {n_seen:,} training items ({need / 2**30:.2f} GiB "
            f"dense fit, max_items={self.max_items:,}); the other {n_seen - m:,} are not evidence and "
            "are ranked last"
            if m < n_seen
            else ""
        )
        keep = max(1, m) if self.keep is None else self.keep
        held = _validation_slice(ids, offsets, self.seed) if m else None
        gram = None
        if held is not None:
            part, queries, hidden = held
            lam, _, tried = choose_lambda(part, queries, hidden, counts, max_items=self.max_items, keep=keep)
        else:
            gram = gram_matrix(ids, offsets, items, n)
            grid = lambda_grid(gram)
            lam, tried = grid[len(grid) // 2], {}
        if m:
            self.model_ = fit_itemitem(
                ids, offsets, counts, lam, max_items=self.max_items, keep=keep, gram=gram
            )
        else:  # no training item at all: every answer is padding
            empty = np.zeros(0, dtype=np.int64)
            self.model_ = ItemItem(
                empty, np.zeros(1, np.int64), np.zeros(0, np.int32), np.zeros(0, np.float32), n, float(lam)
            )
        self.lam_ = float(lam)
        self.tried_ = dict(tried)
        self.n_items = n
        return self

    @property
    def note(self) -> str:
        """What the fit left out ('' when it covers every training item); see :attr:`note_`."""
        return self._fitted().note_

    def chosen(self) -> dict[str, Any]:
        """What the held-out slice chose, JSON-ready: ``{"lam", "tried", "note"}``."""
        return {"lam": self._fitted().lam_, "tried": self.tried_, "note": self.note}

    def item_rows(self, rows: np.ndarray) -> np.ndarray:
        """Rows ``rows`` of ``B`` over the covered items, float32 ``(len(rows), m)``: the weights with which
        each item predicts every covered item (an uncovered item's row is zero)."""
        model = self._fitted().model_
        out = np.zeros((len(rows), len(model.items)), dtype=np.float32)
        pos = model.rows_of(rows)
        for i, r in enumerate(pos.tolist()):
            if r >= 0:
                a, b = model.indptr[r], model.indptr[r + 1]
                out[i, model.rows_of(model.cols[a:b].astype(np.int64))] = model.data[a:b]
        return out

    def _fitted(self) -> EASERecommender:
        if not hasattr(self, "model_"):
            raise NotFittedError("this EASERecommender is not fitted yet: call fit(train, n_items) first")
        return self

    def recommend_ids(self, contexts: Sequence[np.ndarray], k: int) -> np.ndarray:
        """See :class:`likewise.baselines.counts.Recommender`.

        A basket scores candidate ``j`` by ``sum_{i in basket} B[i, j]``. Items the model does not cover
        (never trained on, or past ``max_items``) come after every covered one, by lower id.
        """
        model = self._fitted().model_
        ctx = check_contexts(contexts, self.n_items)
        k = check_k(k, self.n_items, ctx)
        if k == 0 or not ctx:
            return np.empty((len(ctx), k), dtype=np.int64)
        ids, scores = model.top_k(ctx, k)
        fill_unused(ids, np.isfinite(scores).sum(axis=1), ctx)  # -inf: uncovered or context, sorted last
        return ids


# --------------------------------------------------------------------------------------------------------
# ALS
# --------------------------------------------------------------------------------------------------------


def basket_matrix(ids: np.ndarray, offsets: np.ndarray, n_items: int) -> Any:
    """The binary basket x item matrix, a ``scipy.sparse.csr_matrix`` of float32 (an item once a basket)."""
    from scipy.sparse import csr_matrix

    offsets = np.asarray(offsets, dtype=np.int64)
    cols = np.asarray(ids, dtype=np.int64)
    x = csr_matrix(
        (np.ones(len(cols), dtype=np.float32), cols, offsets), shape=(len(offsets) - 1, int(n_items))
    )
    x.sum_duplicates()
    x.data[:] = 1.0
    return x


def _positive_grid(name: str, values: Sequence[float]) -> tuple[float, ...]:
    """``values`` as a tuple of floats, each finite and > 0, at least one."""
    grid = tuple(values)
    if not grid:
        raise InputError(f"{name}s == (), give one or more values > 0")
    for v in grid:
        if check_real(name, v) <= 0:
            raise InputError(f"{name} == {v!r} in {name}s == {grid!r}, each must be > 0")
    return tuple(float(v) for v in grid)


def coordinate_search(
    score: Callable[[float, float], float], xs: Sequence[float], ys: Sequence[float]
) -> tuple[tuple[float, float], dict[tuple[float, float], float]]:
    """The best pair of a grid ``xs x ys``, searched one coordinate at a time; and every score computed.

    Starts at the middle of both grids; scores every ``y`` at the current ``x``, moves to the best, then
    every ``x`` at that ``y``, and so on until the pair stops changing. Each pair is scored once. Equal
    scores prefer the smaller ``x`` and then the larger ``y`` (for ALS: the flatter confidence and the
    stronger penalty). The order is total, so the search cannot cycle; it ends at a pair that no single
    coordinate improves (the grid's best when the score is unimodal along each coordinate).

    Parameters
    ----------
    score : callable
        ``score(x, y)``, larger is better.
    xs, ys : sequence of float
        The grids, each non-empty.
    """
    tried: dict[tuple[float, float], float] = {}

    def rank(pair: tuple[float, float]) -> tuple[float, float, float]:
        if pair not in tried:
            tried[pair] = float(score(*pair))
        return tried[pair], -pair[0], pair[1]

    x, y = xs[len(xs) // 2], ys[len(ys) // 2]
    last = None
    while last != (x, y):
        last = (x, y)
        y = max(((x, v) for v in ys), key=rank)[1]
        x = max(((u, y) for u in xs), key=rank)[0]
    return (x, y), tried


def _als_class() -> Any:
    """implicit's ALS factory, or MissingDependencyError with the install line."""
    try:
        from implicit.als import AlternatingLeastSquares
    except ImportError as e:
        raise MissingDependencyError("implicit", None, f"the ALS baseline ({e})") from e
    return AlternatingLeastSquares


class ALSRecommender:
    """Confidence-weighted implicit ALS, ``alpha`` and ``regularization`` chosen on a held-out slice.

    The two are searched together, one coordinate at a time (the module docstring says why both):
    every ``regularization`` at the middle ``alpha``, then every ``alpha`` at the best
    ``regularization``, and so on until the best pair stops changing (7 to about 12 fits of
    implicit's 15 iterations for the default grids), then the best pair is refitted on everything.

    Parameters
    ----------
    factors : int
        Latent dimension (give the model's).
    alphas : sequence of float
        Confidence weights to try (implicit's ``alpha``: confidence ``alpha * X``).
    regularizations : sequence of float
        implicit's ``regularization`` values to try.
    seed : int
        Chooses the held-out slice and seeds implicit (``random_state``).

    Attributes
    ----------
    alpha_, regularization_ : float
        What it was fitted with; the middle values of the grids when no slice could be held out.
    tried_ : dict of (float, float) to float
        Held-out MRR@10 of each ``(alpha, regularization)`` tried (empty when no slice was held out).
    model_ : implicit.cpu.als.AlternatingLeastSquares
        The fitted model (always the CPU one, so answers do not depend on the machine having a GPU).
    """

    name = "als"

    def __init__(
        self,
        factors: int = 100,
        *,
        alphas: Sequence[float] = ALS_ALPHAS,
        regularizations: Sequence[float] = ALS_REGULARIZATIONS,
        seed: int = 0,
    ) -> None:
        check_int("factors", factors, 1)
        self.factors = int(factors)
        self.alphas = _positive_grid("alpha", alphas)
        self.regularizations = _positive_grid("regularization", regularizations)
        check_int("seed", seed, 0)
        self.seed = int(seed)

    def _fit_one(self, x: Any, alpha: float, regularization: float) -> Any:
        from threadpoolctl import threadpool_limits

        als = _als_class()
        # implicit's advice: its own threads, one BLAS thread (it warns otherwise, and runs slower)
        with threadpool_limits(1, "blas"):
            model = als(
                factors=self.factors,
                regularization=float(regularization),
                alpha=float(alpha),
                use_gpu=False,
                random_state=self.seed,
            )
            model.fit(x, show_progress=False)
        return model

    def fit(self, train: Any, n_items: int) -> ALSRecommender:
        """Choose ``alpha`` and ``regularization`` on a held-out slice of ``train``, then fit on all of it.

        Parameters
        ----------
        train : Corpus or sequence of int arrays
            Training baskets of ids in ``[0, n_items)``.
        n_items : int
            Size of the id space V.

        Returns
        -------
        ALSRecommender
            ``self``.

        Raises
        ------
        MissingDependencyError
            ``implicit`` is not installed.
        """
        _als_class()  # fail before any work
        ids, offsets = as_sequences(train)
        n = check_training_ids(ids, n_items)
        self.n_items = n
        alpha = self.alphas[len(self.alphas) // 2]
        reg = self.regularizations[len(self.regularizations) // 2]
        tried: dict[tuple[float, float], float] = {}
        held = _validation_slice(ids, offsets, self.seed)
        if held is not None:
            (tr_ids, tr_off), queries, hidden = held
            x = basket_matrix(tr_ids, tr_off, n)

            def score(alpha: float, reg: float) -> float:
                self.model_ = self._fit_one(x, alpha, reg)
                top = self.recommend_ids(queries, _VALIDATION_K)
                hit = top == hidden[:, None]
                return float(np.where(hit.any(axis=1), 1.0 / (hit.argmax(axis=1) + 1), 0.0).mean())

            (alpha, reg), tried = coordinate_search(score, self.alphas, self.regularizations)
        self.model_ = self._fit_one(basket_matrix(ids, offsets, n), alpha, reg)
        self.alpha_, self.regularization_ = float(alpha), float(reg)
        self.tried_ = tried
        return self

    def _fitted(self) -> Any:
        if not hasattr(self, "model_"):
            raise NotFittedError("this ALSRecommender is not fitted yet: call fit(train, n_items) first")
        return self.model_

    @property
    def item_vectors(self) -> np.ndarray:
        """implicit's ``item_factors``, float32 ``(V, factors)``."""
        return np.asarray(self._fitted().item_factors, dtype=np.float32)

    def item_rows(self, rows: np.ndarray) -> np.ndarray:
        """Rows ``rows`` of :attr:`item_vectors`."""
        return self.item_vectors[rows]

    def chosen(self) -> dict[str, Any]:
        """What the held-out slice chose, JSON-ready: ``{"alpha", "regularization", "tried"}``."""
        self._fitted()
        tried = {f"alpha={a:g},regularization={r:g}": v for (a, r), v in self.tried_.items()}
        return {"alpha": self.alpha_, "regularization": self.regularization_, "tried": tried}

    def user_vectors(self, contexts: Sequence[np.ndarray]) -> np.ndarray:
        """Factors of each context as a new user (implicit's ``recalculate_user``), float32 (n, factors)."""
        model = self._fitted()
        ctx = check_contexts(contexts, self.n_items)
        if not ctx:
            return np.zeros((0, self.factors), dtype=np.float32)
        lens = np.fromiter((len(c) for c in ctx), dtype=np.int64, count=len(ctx))
        offsets = np.r_[0, np.cumsum(lens)].astype(np.int64)
        x = basket_matrix(np.concatenate(ctx), offsets, self.n_items)
        return np.asarray(model.recalculate_user(np.arange(len(ctx)), x), dtype=np.float32)

    def recommend_ids(self, contexts: Sequence[np.ndarray], k: int) -> np.ndarray:
        """See :class:`likewise.baselines.counts.Recommender`.

        The answer of implicit's ``recommend(np.arange(n), X_queries, N=k, recalculate_user=True,
        filter_already_liked_items=True)``: each query's factors are solved from its items, and items
        are ranked by the dot product with their factors, the query's own excluded. The ranking is
        done here so that ties go to the lower id (implicit leaves them in no set order; an empty
        query, whose factors are zero, ties every item).
        """
        self._fitted()
        ctx = check_contexts(contexts, self.n_items)
        k = check_k(k, self.n_items, ctx)
        if k == 0 or not ctx:
            return np.empty((len(ctx), k), dtype=np.int64)
        users = self.user_vectors(ctx)
        lens = np.fromiter((len(c) for c in ctx), dtype=np.int64, count=len(ctx))
        ex_rows = np.repeat(np.arange(len(ctx), dtype=np.int64), lens)
        rows, _ = top_k_search(self.item_vectors, users, k, ex_rows, np.concatenate(ctx))
        return rows
