"""Count baselines: exact counts, PPMI and SVD against dense references, and the Recommender contract."""

from __future__ import annotations

import numpy as np
import pytest

import likewise.baselines.counts as bl
from likewise.baselines.counts import (
    CountMatrix,
    Recommender,
    cooccurrence,
    fit_baselines,
    ppmi,
    truncated_svd,
)
from likewise.errors import InputError, ItemIndexError


def _random_sequences(n_items: int = 30, n: int = 300, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.integers(0, n_items, size=rng.integers(1, 9)) for _ in range(n)]


def _dense_cooccurrence(seqs: list[np.ndarray], n_items: int) -> np.ndarray:
    d = np.zeros((n_items, n_items))
    for s in seqs:
        u = np.unique(s)
        for a in u:
            for b in u:
                if a != b:
                    d[a, b] += 1
    return d


def test_cooccurrence_counts_sequences_holding_both_items():
    seqs = _random_sequences()
    counts, occ = cooccurrence(seqs, 30)
    np.testing.assert_array_equal(counts.to_dense(), _dense_cooccurrence(seqs, 30))
    np.testing.assert_array_equal(occ, np.bincount(np.concatenate(seqs), minlength=30))


def test_cooccurrence_hand_example_and_long_sequences_are_cut():
    counts, _ = cooccurrence([np.array([0, 1, 1, 2]), np.array([1, 2])], 4)
    expected = np.array([[0, 1, 1, 0], [1, 0, 2, 0], [1, 2, 0, 0], [0, 0, 0, 0]])
    np.testing.assert_array_equal(counts.to_dense(), expected)
    # one sequence of 6 distinct items cut into pieces of 3: only pairs inside a piece count
    cut, _ = cooccurrence([np.arange(6)], 6, max_len=3)
    d = cut.to_dense()
    assert d[0, 1] == d[4, 5] == 1 and d[0, 3] == 0 and d.sum() == 12


def test_cooccurrence_rejects_ids_outside_the_table():
    with pytest.raises(ItemIndexError, match="out of range for a table of 4 rows"):
        cooccurrence([np.array([0, 4])], 4)


def test_count_matrix_products_match_dense():
    seqs = _random_sequences(seed=1)
    counts, _ = cooccurrence(seqs, 30)
    dense = counts.to_dense()
    m = np.random.default_rng(2).standard_normal((30, 5))
    np.testing.assert_allclose(counts.matmul(m), dense @ m)
    np.testing.assert_allclose(counts.transpose().to_dense(), dense.T)
    ctx = [np.array([1, 2]), np.zeros(0, dtype=np.int64), np.array([5])]
    rows = counts.sum_rows(ctx, 0, 3)
    np.testing.assert_allclose(rows[0], dense[1] + dense[2])
    np.testing.assert_allclose(rows[1], 0)
    np.testing.assert_allclose(rows[2], dense[5])


def test_ppmi_matches_the_formula():
    counts, _ = cooccurrence(_random_sequences(seed=3), 30)
    d = counts.to_dense()
    rows, cols = d.sum(1), d.sum(0) ** 0.75
    with np.errstate(divide="ignore"):
        ref = np.log(d * cols.sum() / (rows[:, None] * cols[None, :]))
    ref = np.where(d > 0, np.maximum(ref, 0), 0)
    np.testing.assert_allclose(ppmi(counts).to_dense(), ref, atol=1e-12)
    with pytest.raises(InputError, match="alpha"):
        ppmi(counts, alpha=0)


def test_truncated_svd_exact_path():
    counts, _ = cooccurrence(_random_sequences(seed=4), 30)
    u, s = truncated_svd(ppmi(counts), 5)
    ref = np.linalg.svd(ppmi(counts).to_dense(), compute_uv=False)[:5]
    np.testing.assert_allclose(s, ref, rtol=1e-10)
    assert u.shape == (30, 5)


def test_truncated_svd_randomized_path_finds_planted_blocks():
    """A block-diagonal matrix of constant blocks: singular values are block size x value, known exactly."""
    n = 2100  # over the exact-path limit
    sizes_values = [(40, 5.0), (30, 4.0), (50, 2.0), (20, 3.0)]  # singular values 200, 120, 100, 60
    rows, cols, vals, start = [], [], [], 0
    for size, v in sizes_values:
        r, c = np.meshgrid(np.arange(start, start + size), np.arange(start, start + size), indexing="ij")
        rows.append(r.ravel())
        cols.append(c.ravel())
        vals.append(np.full(size * size, v))
        start += size
    rest = np.arange(start, n)  # a small diagonal elsewhere (singular value 0.1)
    rows.append(rest)
    cols.append(rest)
    vals.append(np.full(len(rest), 0.1))
    m = CountMatrix.from_coo(np.concatenate(rows), np.concatenate(cols), np.concatenate(vals), n)
    u, s = truncated_svd(m, 4, seed=0)
    np.testing.assert_allclose(s, [200.0, 120.0, 100.0, 60.0], rtol=1e-6)
    # the first singular vector is the 40-block, uniform and positive (signs are fixed)
    np.testing.assert_allclose(u[:40, 0], 1 / np.sqrt(40), rtol=1e-6)


@pytest.fixture(scope="module")
def fitted():
    seqs = _random_sequences(n_items=25, n=400, seed=5)
    return seqs, fit_baselines(seqs, 25, dim=6)


def test_fit_baselines_names_and_protocol(fitted):
    _, recs = fitted
    assert list(recs) == list(bl.BASELINES)
    assert list(recs)[:5] == ["popular", "cocount", "ppmi", "ppmi-svd", "ease"]
    for name, rec in recs.items():
        assert isinstance(rec, Recommender)
        assert rec.name == name


def test_recommenders_follow_the_contract(fitted):
    _, recs = fitted
    rng = np.random.default_rng(6)
    contexts = [rng.choice(25, size=rng.integers(0, 6), replace=False) for _ in range(50)]
    for rec in recs.values():
        top = rec.recommend_ids(contexts, 7)
        assert top.shape == (50, 7) and top.dtype == np.int64
        for c, row in zip(contexts, top, strict=True):
            assert not set(c.tolist()) & set(row.tolist())
            assert len(set(row.tolist())) == 7
        np.testing.assert_array_equal(top, rec.recommend_ids(contexts, 7))  # deterministic


def test_k_is_clamped_to_what_remains(fitted):
    _, recs = fitted
    top = recs["cocount"].recommend_ids([np.arange(20)], 10)
    assert top.shape == (1, 5) and sorted(top[0].tolist()) == [20, 21, 22, 23, 24]


def test_popular_ranks_by_frequency_ties_by_lower_id():
    rec = bl.PopularRecommender(np.array([5, 9, 5, 1, 9]))
    top = rec.recommend_ids([np.array([1]), np.zeros(0, dtype=np.int64)], 3)
    np.testing.assert_array_equal(top, [[4, 0, 2], [1, 4, 0]])


def test_cocount_hand_example():
    seqs = [np.array([0, 1]), np.array([0, 1]), np.array([0, 2]), np.array([3, 4])]
    recs = fit_baselines(seqs, 5, which=("cocount",))
    # with 0: item 1 (2 baskets), item 2 (1), then zeros tied -> lower ids 3, 4
    np.testing.assert_array_equal(recs["cocount"].recommend_ids([np.array([0])], 4), [[1, 2, 3, 4]])


def test_blocks_give_the_same_answer_as_one_block(fitted, monkeypatch):
    _, recs = fitted
    rng = np.random.default_rng(7)
    contexts = [rng.choice(25, size=3, replace=False) for _ in range(40)]
    whole = {n: r.recommend_ids(contexts, 5) for n, r in recs.items()}
    monkeypatch.setattr(bl, "_BLOCK_ELEMS", 60)  # 2 contexts per block
    for n, r in recs.items():
        np.testing.assert_array_equal(r.recommend_ids(contexts, 5), whole[n])


def test_corpus_input_equals_id_arrays(tmp_path):
    from likewise.data.corpus import corpus_from_sequences

    keys = [[f"i{x}" for x in s] for s in _random_sequences(n_items=12, n=80, seed=8)]
    corpus = corpus_from_sequences(keys, tmp_path / "c")
    arrays = [np.asarray(corpus.sequence(i)) for i in range(corpus.n_sequences)]
    a, _ = cooccurrence(corpus, len(corpus.vocab))
    b, _ = cooccurrence(arrays, len(corpus.vocab))
    np.testing.assert_array_equal(a.to_dense(), b.to_dense())


def test_bad_arguments_are_named():
    with pytest.raises(InputError, match="unknown baseline 'pop'"):
        fit_baselines([np.array([0, 1])], 2, which=("pop",))
    rec = fit_baselines([np.array([0, 1])], 3, which=("popular",))["popular"]
    with pytest.raises(ItemIndexError, match="context item id 3"):
        rec.recommend_ids([np.array([3])], 1)
    with pytest.raises(InputError, match="k == 0"):
        rec.recommend_ids([np.array([0])], 0)


@pytest.mark.parametrize("pair_block", [1 << 23, 7])
def test_fast_paths_equal_the_dense_reference(monkeypatch, pair_block):
    """Popular and the sparse co-count / PPMI paths against a dense score row per context."""
    monkeypatch.setattr(bl, "_PAIR_BLOCK", pair_block)  # 7: many small blocks
    rng = np.random.default_rng(9)
    seqs = [rng.integers(0, 60, size=rng.integers(1, 5)) for _ in range(150)]  # sparse: many zero scores
    recs = fit_baselines(seqs, 60, which=("popular", "cocount", "ppmi"))
    contexts = [rng.choice(60, size=rng.integers(0, 12), replace=False) for _ in range(120)]
    contexts.append(np.arange(50))  # a long context: k is clamped to the 10 items left
    for k in (1, 10, 40):
        for name, rec in recs.items():
            ref = rec.recommend_ids_reference(contexts, k)
            np.testing.assert_array_equal(rec.recommend_ids(contexts, k), ref, err_msg=name)
            if name != "popular":
                clamped = min(k, 10)
                for dense in (False, True):  # both ways of scoring a block
                    got = bl._sparse_top_k(rec.matrix_, bl.check_contexts(contexts, 60), clamped, dense)
                    np.testing.assert_array_equal(got, ref, err_msg=f"{name} dense={dense}")
