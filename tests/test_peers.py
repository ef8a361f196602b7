"""The learned peers of basket completion: EASE against a dense NumPy reference, its penalty and memory
budget, implicit's ALS on a planted complement, and both reachable from fit_baselines and eval --holdout."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from likewise.baselines.counts import BASELINES, KNOWN_BASELINES, Recommender, fit_baselines
from likewise.baselines.peers import (
    ALS_ALPHAS,
    ALS_REGULARIZATIONS,
    HAS_IMPLICIT,
    ALSRecommender,
    EASERecommender,
    basket_matrix,
    coordinate_search,
)
from likewise.errors import InputError, ItemIndexError, MissingDependencyError, NotFittedError
from likewise.space.itemitem import MAX_ITEMS, covered_rows, gram_matrix, lambda_grid
from likewise.training.auto import split_validation


def grouped_baskets(
    n_groups: int = 6, group_size: int = 5, n: int = 600, seed: int = 0
) -> tuple[list[np.ndarray], int]:
    """Baskets of 2..5 items mostly from one planted group (Zipf inside it), one in ten items noise."""
    rng = np.random.default_rng(seed)
    v = n_groups * group_size
    weights = 1.0 / np.arange(1, group_size + 1) ** 0.8
    weights /= weights.sum()
    out = []
    for _ in range(n):
        g = int(rng.integers(n_groups))
        size = int(rng.integers(2, 6))
        items = g * group_size + rng.choice(group_size, size=size, p=weights)
        noise = rng.random(size) < 0.1
        items[noise] = rng.integers(v, size=int(noise.sum()))
        out.append(items.astype(np.int64))
    return out, v


def dense_ease_scores(
    baskets: list[np.ndarray], v: int, lam: float, contexts: list[np.ndarray]
) -> np.ndarray:
    """EASE by the book: ``P = inv(G + lam I)``, ``B = -P / diag(P)``, zero diagonal, scores ``x @ B``."""
    x = np.zeros((len(baskets), v))
    for r, b in enumerate(baskets):
        x[r, b] = 1.0
    p = np.linalg.inv(x.T @ x + lam * np.eye(v))
    b = -p / np.diag(p)[None, :]
    np.fill_diagonal(b, 0.0)
    q = np.zeros((len(contexts), v))
    for r, c in enumerate(contexts):
        q[r, c] = 1.0
    return q @ b


def reference_top_k(scores: np.ndarray, contexts: list[np.ndarray], k: int) -> np.ndarray:
    s = scores.copy()
    for r, c in enumerate(contexts):
        s[r, c] = -np.inf
    return np.lexsort((np.broadcast_to(np.arange(s.shape[1]), s.shape), -s), axis=1)[:, :k]


# ---- EASE --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def ease_fitted() -> tuple[list[np.ndarray], int, EASERecommender]:
    baskets, v = grouped_baskets()
    return baskets, v, EASERecommender(seed=3).fit(baskets, v)


def test_ease_equals_the_dense_reference(ease_fitted) -> None:
    baskets, v, rec = ease_fitted
    rng = np.random.default_rng(1)
    contexts = [np.unique(rng.choice(v, size=rng.integers(1, 5), replace=False)) for _ in range(80)]
    k = 8
    ref_scores = dense_ease_scores(baskets, v, rec.lam_, contexts)
    got = rec.recommend_ids(contexts, k)
    ref = reference_top_k(ref_scores, contexts, k)
    # the same ranking: the returned ids score what the reference's top k score (float32 vs float64)
    for r in range(len(contexts)):
        np.testing.assert_allclose(ref_scores[r, got[r]], ref_scores[r, ref[r]], rtol=0, atol=1e-4)
    assert (got == ref).all(axis=1).mean() > 0.95
    # and the same weights: every item is covered and no weight was pruned
    assert rec.note == "" and len(rec.model_.items) == v
    dense_b = np.zeros((v, v), dtype=np.float32)
    rows = np.repeat(rec.model_.items, np.diff(rec.model_.indptr))
    dense_b[rows, rec.model_.cols] = rec.model_.data
    ref_b = dense_ease_scores(baskets, v, rec.lam_, [np.array([i]) for i in range(v)])
    np.testing.assert_allclose(dense_b, ref_b, atol=1e-4)


def test_ease_chooses_lam_from_the_grid_on_a_held_out_slice(ease_fitted) -> None:
    baskets, v, rec = ease_fitted
    ids = np.concatenate(baskets)
    offsets = np.r_[0, np.cumsum([len(b) for b in baskets])]
    tr_ids, tr_off, _, _ = split_validation(ids, offsets, 3)
    items = covered_rows(np.bincount(ids, minlength=v), MAX_ITEMS)
    grid = lambda_grid(gram_matrix(tr_ids, tr_off, items, v))
    assert {f"{lam:g}" for lam in grid} <= set(rec.tried_)  # the grid, then refinements around its best
    assert f"{rec.lam_:g}" in rec.tried_
    best = max(rec.tried_.values())
    assert rec.tried_[f"{rec.lam_:g}"] == best
    assert all(0.0 <= m <= 1.0 for m in rec.tried_.values())


def test_ease_without_a_held_out_slice_takes_the_middle_of_the_grid() -> None:
    baskets = [np.array([0, 1]), np.array([1, 2]), np.array([0, 2, 3])]  # far too few to hold any out
    rec = EASERecommender().fit(baskets, 5)
    ids = np.concatenate(baskets)
    offsets = np.r_[0, np.cumsum([len(b) for b in baskets])]
    grid = lambda_grid(gram_matrix(ids, offsets, np.arange(4), 5))
    assert rec.tried_ == {} and rec.lam_ == grid[len(grid) // 2]
    top = rec.recommend_ids([np.array([0])], 4)
    assert top[0, -1] == 4  # item 4 was never bought: not covered, ranked last


def test_ease_memory_budget_is_refused_by_name() -> None:
    baskets, v = grouped_baskets()
    with pytest.raises(InputError, match=r"needs 14,400 bytes .* max_bytes == 1,000; pass max_items <= 7"):
        EASERecommender(max_bytes=1_000).fit(baskets, v)
    assert EASERecommender(max_bytes=14_400).fit(baskets, v).lam_ > 0  # exactly the budget is enough


def test_ease_above_max_items_covers_the_most_frequent_and_ranks_the_rest_last() -> None:
    baskets, v = grouped_baskets()
    rec = EASERecommender(max_items=10).fit(baskets, v)
    counts = np.bincount(np.concatenate(baskets), minlength=v)
    covered = covered_rows(counts, 10)
    np.testing.assert_array_equal(rec.model_.items, covered)
    assert "covers the 10 most frequent of 30 training items" in rec.note
    assert "the other 20 are not evidence" in rec.note
    ctx = np.array([int(covered[0])])
    top = rec.recommend_ids([ctx], 15)[0]
    assert set(top[:9].tolist()) == set(covered.tolist()) - {int(covered[0])}  # the 9 covered ones first
    uncovered = np.setdiff1d(np.arange(v), covered)
    np.testing.assert_array_equal(top[9:], uncovered[:6])  # then the lowest uncovered ids


def test_ease_follows_the_recommender_contract(ease_fitted) -> None:
    _, v, rec = ease_fitted
    assert isinstance(rec, Recommender) and rec.name == "ease"
    rng = np.random.default_rng(2)
    contexts = [rng.choice(v, size=rng.integers(0, 6), replace=False) for _ in range(40)]
    top = rec.recommend_ids(contexts, 7)
    assert top.shape == (40, 7) and top.dtype == np.int64
    for c, row in zip(contexts, top, strict=True):
        assert not set(c.tolist()) & set(row.tolist()) and len(set(row.tolist())) == 7
    assert rec.recommend_ids([np.arange(v - 3)], 10).shape == (1, 3)  # k clamped to what remains
    with pytest.raises(ItemIndexError, match=f"context item id {v}"):
        rec.recommend_ids([np.array([v])], 3)
    with pytest.raises(InputError, match="k == 0"):
        rec.recommend_ids([np.array([0])], 0)
    with pytest.raises(NotFittedError, match=r"call fit\(train, n_items\)"):
        EASERecommender().recommend_ids([np.array([0])], 3)
    with pytest.raises(InputError, match="max_items == 0"):
        EASERecommender(max_items=0)
    with pytest.raises(ItemIndexError, match="training item id 30"):
        EASERecommender().fit([np.array([0, 30])], 30)


# ---- ALS ---------------------------------------------------------------------------------------------


def complement_baskets(n_pairs: int = 8, n: int = 1500, seed: int = 0) -> tuple[list[np.ndarray], int]:
    """Items 2p and 2p+1 are complements: every basket holds one pair and one or two random items."""
    rng = np.random.default_rng(seed)
    v = 2 * n_pairs
    out = []
    for _ in range(n):
        p = int(rng.integers(n_pairs))
        extra = rng.integers(v, size=int(rng.integers(1, 3)))
        out.append(np.r_[2 * p, 2 * p + 1, extra].astype(np.int64))
    return out, v


@pytest.fixture(scope="module")
def als_fitted() -> tuple[list[np.ndarray], int, ALSRecommender]:
    pytest.importorskip("implicit")
    baskets, v = complement_baskets()
    return baskets, v, ALSRecommender(16, seed=4).fit(baskets, v)


def test_als_finds_the_planted_complement(als_fitted) -> None:
    _, v, rec = als_fitted
    contexts = [np.array([i]) for i in range(v)]
    top = rec.recommend_ids(contexts, 1)[:, 0]
    partner = np.arange(v) ^ 1
    assert (top == partner).mean() >= 0.9, top
    assert rec.item_vectors.shape == (v, 16) and rec.item_vectors.dtype == np.float32


def test_als_chooses_alpha_and_regularization_from_the_grids(als_fitted) -> None:
    _, _, rec = als_fitted
    assert rec.alpha_ in ALS_ALPHAS and rec.regularization_ in ALS_REGULARIZATIONS
    assert rec.tried_[(rec.alpha_, rec.regularization_)] == max(rec.tried_.values())
    # one coordinate at a time: every penalty at the middle alpha, every alpha at the best penalty, ...
    middle = ALS_ALPHAS[len(ALS_ALPHAS) // 2]
    assert {(middle, r) for r in ALS_REGULARIZATIONS} <= set(rec.tried_)
    assert {(a, rec.regularization_) for a in ALS_ALPHAS} <= set(rec.tried_)
    assert {(rec.alpha_, r) for r in ALS_REGULARIZATIONS} <= set(rec.tried_)
    assert set(rec.tried_) <= {(a, r) for a in ALS_ALPHAS for r in ALS_REGULARIZATIONS}
    assert all(0.0 <= m <= 1.0 for m in rec.tried_.values())


def test_coordinate_search_climbs_to_the_best_pair_of_a_known_surface() -> None:
    xs, ys = ALS_ALPHAS, ALS_REGULARIZATIONS
    # unimodal along each coordinate, best at (10, 100): the search must get there, scoring each pair once
    calls = []

    def score(x: float, y: float) -> float:
        calls.append((x, y))
        return -abs(np.log10(x) - 1.0) - abs(np.log10(y) - 2.0)

    best, tried = coordinate_search(score, xs, ys)
    assert best == (10.0, 100.0) and tried[best] == max(tried.values()) == 0.0
    assert len(calls) == len(set(calls)) == len(tried) < len(xs) * len(ys)
    assert calls[:4] == [(40.0, y) for y in ys]  # first every penalty at the middle alpha
    # ties: the smaller x, then the larger y
    assert coordinate_search(lambda x, y: 0.0, xs, ys)[0] == (1.0, 100.0)


def test_als_answers_as_implicit_recommend_does(als_fitted) -> None:
    baskets, v, rec = als_fitted
    rng = np.random.default_rng(5)
    contexts = [np.unique(rng.choice(v, size=rng.integers(1, 4), replace=False)) for _ in range(30)]
    offsets = np.r_[0, np.cumsum([len(c) for c in contexts])]
    ids, scores = rec.model_.recommend(
        np.arange(len(contexts)),
        basket_matrix(np.concatenate(contexts), offsets, v),
        N=5,
        recalculate_user=True,
        filter_already_liked_items=True,
    )
    got = rec.recommend_ids(contexts, 5)
    clear = (np.diff(scores, axis=1) < -1e-5).all(axis=1)  # rows without (near) ties
    assert clear.mean() > 0.8
    np.testing.assert_array_equal(got[clear], ids[clear])


def test_als_is_seeded_and_follows_the_contract(als_fitted) -> None:
    baskets, v, rec = als_fitted
    one = {"alphas": (rec.alpha_,), "regularizations": (rec.regularization_,)}  # the same fit, no search
    again = ALSRecommender(16, seed=4, **one).fit(baskets, v)
    np.testing.assert_array_equal(again.item_vectors, rec.item_vectors)
    assert isinstance(rec, Recommender) and rec.name == "als"
    contexts = [np.array([0, 1]), np.zeros(0, dtype=np.int64), np.arange(v - 2)]
    top = rec.recommend_ids(contexts, 2)
    assert top.shape == (3, 2) and not {0, 1} & set(top[0].tolist())
    np.testing.assert_array_equal(top[1], [0, 1])  # an empty query ties every item: the lowest ids
    assert sorted(top[2].tolist()) == [v - 2, v - 1]  # all that the context leaves
    with pytest.raises(NotFittedError, match="ALSRecommender is not fitted yet"):
        ALSRecommender(4).recommend_ids([np.array([0])], 1)
    with pytest.raises(InputError, match=r"alpha == -1.0 in alphas == \(1.0, -1.0\)"):
        ALSRecommender(4, alphas=(1.0, -1.0))
    with pytest.raises(InputError, match=r"regularizations == \(\)"):
        ALSRecommender(4, regularizations=())


def test_als_without_implicit_says_how_to_install_it(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "implicit.als", None)  # `from implicit.als import ...` now fails
    with pytest.raises(MissingDependencyError, match="pip install implicit"):
        ALSRecommender(4).fit([np.array([0, 1])], 2)


# ---- reachable from fit_baselines and eval --holdout ---------------------------------------------------


def test_the_default_baselines_hold_the_peers() -> None:
    assert set(KNOWN_BASELINES) >= {"ease", "als"}
    assert "ease" in BASELINES and ("als" in BASELINES) == HAS_IMPLICIT
    baskets, v = grouped_baskets(n=200)
    recs = fit_baselines(baskets, v, which=("ease",), seed=1)
    assert list(recs) == ["ease"] and isinstance(recs["ease"], EASERecommender)
    assert recs["ease"].recommend_ids([np.array([0])], 3).shape == (1, 3)
    if HAS_IMPLICIT:
        als = fit_baselines(baskets, v, dim=6, which=("als", "popular"), seed=1)
        assert list(als) == ["als", "popular"] and als["als"].factors == 6


def test_the_holdout_report_scores_ease() -> None:
    from likewise.data.datasets import planted_baskets
    from likewise.evaluate import holdout_report, split_sequences
    from likewise.training.train import train

    baskets, _ = planted_baskets(n_groups=4, group_size=8, n_baskets=400, zipf=1.0, seed=0)
    split = split_sequences(baskets, mode="basket", test_fraction=0.2, seed=0)
    emb = train(
        split.train, mode="basket", dim=4, min_count=1, sample=0.0, epochs=3, seed=0, deterministic=True
    )
    r = holdout_report(emb, split, k=5, baselines=("popular", "ease"))
    assert set(r["rows"]) >= {"model", "popular", "ease"}
    # planted groups: any basket item names its group, which EASE learns and popularity cannot
    assert r["rows"]["ease"]["hr"] > r["rows"]["popular"]["hr"]
