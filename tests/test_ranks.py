"""The held-out ranking kernel (likewise.kernels.ranks) against its NumPy reference, and the held-out
scoring built on it (validation_completion) against the per-query scoring it replaced."""

from __future__ import annotations

import numpy as np
import pytest

from likewise.errors import InputError
from likewise.kernels.ranks import count_above, count_above_reference
from likewise.space.search import basket_affinity
from likewise.training.auto import validation_completion


def _cases(rng, V, n_cases, max_len):
    queries, hidden = [], []
    for _ in range(n_cases):
        items = rng.choice(V, size=int(rng.integers(2, max_len + 2)), replace=False)
        hidden.append(int(items[0]))
        queries.append(np.sort(items[1:]).astype(np.int64))
    return queries, np.asarray(hidden, dtype=np.int64)


def _packed(W, C, queries):
    rows = np.concatenate(queries)
    off = np.concatenate([[0], np.cumsum([len(q) for q in queries])])
    return (W[rows] @ C.T).astype(np.float32), off, rows


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_count_above_equals_the_numpy_reference(seed):
    rng = np.random.default_rng(seed)
    V, D = 300, 8
    W = rng.standard_normal((V, D)).astype(np.float32)
    C = rng.standard_normal((V, D)).astype(np.float32)
    C[:40] = 0.0  # items never seen as context: exact ties in the pair scores
    bias = np.log(rng.integers(1, 50, size=V)).astype(np.float64)
    bias[:20] = bias[20]  # ties in popularity too
    bias[rng.choice(V, 15, replace=False)] = -np.inf  # ruled-out columns (hidden types)
    queries, hidden = _cases(rng, V, 60, 12)
    scores, off, rows = _packed(W, C, queries)
    got = count_above(scores, off, rows, off, hidden, bias, threads=2)
    want = count_above_reference(scores, off, rows, off, hidden, bias)
    np.testing.assert_array_equal(got, want)
    assert got.min() >= 0 and got.max() <= V - 1
    np.testing.assert_array_equal(count_above(scores, off, rows, off, hidden, bias, threads=1), got)


def test_count_above_ranks_a_planted_best_first_and_excludes_the_query():
    # one row: the product and the mixture of a single row are the row itself plus the bias
    scores = np.array([[0.0, 5.0, 1.0, 9.0, 2.0]], dtype=np.float32)
    bias = np.zeros(5)
    off = np.array([0, 1])
    # hidden 1 scores 5; 3 (the query item, 9) is excluded, so nothing is above it
    np.testing.assert_array_equal(count_above(scores, off, np.array([3]), off, np.array([1]), bias), [[0, 0]])
    # hidden 4 scores 2: 1 (5) is above; 2 (1) and 0 (0) are not
    np.testing.assert_array_equal(count_above(scores, off, np.array([3]), off, np.array([4]), bias), [[1, 1]])


def test_count_above_refuses_what_does_not_fit():
    scores = np.zeros((2, 4), dtype=np.float32)
    off = np.array([0, 2])
    with pytest.raises(InputError, match="hidden runs from"):
        count_above(scores, off, np.array([0]), np.array([0, 1]), np.array([4]), np.zeros(4))
    with pytest.raises(InputError, match="bias has shape"):
        count_above(scores, off, np.array([0]), np.array([0, 1]), np.array([1]), np.zeros(3))
    with pytest.raises(InputError, match="float32"):
        count_above(
            scores.astype(np.float64), off, np.array([0]), np.array([0, 1]), np.array([1]), np.zeros(4)
        )


def _per_query(W, C, bias, queries, hidden, k=10):
    """The scoring validation_completion did before the kernel: one product and NumPy passes per case."""
    rr = {r: np.zeros(len(hidden)) for r in ("mixture", "product")}
    for n, (q, h) in enumerate(zip(queries, hidden.tolist(), strict=True)):
        s = W[q] @ C.T
        for rule in rr:
            score = basket_affinity(s, bias, rule)
            score[q] = -np.inf
            rank = int(np.count_nonzero(score > score[h]))
            if rank < k:
                rr[rule][n] = 1.0 / (rank + 1)
    return rr


def test_validation_completion_in_blocks_equals_scoring_case_by_case(monkeypatch):
    import likewise.training.auto as auto

    rng = np.random.default_rng(5)
    V, D = 400, 16
    W = rng.standard_normal((V, D)).astype(np.float32) * 0.3
    C = rng.standard_normal((V, D)).astype(np.float32) * 0.3
    bias = np.log(rng.integers(1, 100, size=V)).astype(np.float64) * 0.75
    queries, hidden = _cases(rng, V, 80, 10)
    want = _per_query(W, C, bias, queries, hidden)
    monkeypatch.setattr(auto, "_RANK_BLOCK_BYTES", 4 * V * 7)  # blocks of a few cases (7 rows), many blocks
    got = validation_completion(W, C, bias, queries, hidden)
    for rule in want:
        np.testing.assert_array_equal(got[rule], want[rule])
    assert set(validation_completion(W, C, bias, queries, hidden, rules=("product",))) == {"product"}
    with pytest.raises(InputError, match="not a basket rule"):
        validation_completion(W, C, bias, queries, hidden, rules=("sum",))
