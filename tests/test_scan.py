"""The int8 scan for exact single queries over large spaces (kernels/scan.py, index/scan.py):
the error bounds hold, the kernel finds the same candidates as its NumPy reference, the candidates hold
the exact top k, and the answers equal exact search's; the searcher that chooses it (index/searcher.py)."""

from __future__ import annotations

import numpy as np
import pytest

from likewise import Embeddings, Vocab
from likewise.index import (
    ExactIndex,
    ExactSearcher,
    IndexSearcher,
    ScanSearcher,
    ScanTable,
    scan_top_k,
    searcher_for,
)
from likewise.index import searcher as searcher_mod
from likewise.kernels.scan import quantize_rows, scan_candidates, scan_candidates_reference
from likewise.space.search import normalise_rows, top_k_search


def unit_rows(n: int, d: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((20, d)).astype(np.float32)
    x = centres[rng.integers(0, 20, n)] + 0.7 * rng.standard_normal((n, d)).astype(np.float32)
    return normalise_rows(x)


def test_quantize_rows_bounds_the_error() -> None:
    x = unit_rows(2000, 40)
    x[5] = 0.0
    codes, scale, err = quantize_rows(x)
    assert codes.shape == (2000, 48) and codes.dtype == np.int8 and not codes[:, 40:].any()
    resid = x.astype(np.float64) - scale.astype(np.float64)[:, None] * codes[:, :40]
    assert (np.linalg.norm(resid, axis=1) <= err).all()
    assert err[5] < 1e-9 and scale[5] == 1.0


@pytest.mark.parametrize("k", [1, 10])
def test_kernel_candidates_match_the_reference_and_hold_the_top_k(k: int) -> None:
    x = unit_rows(5000, 40, seed=1)
    codes, scale, err = quantize_rows(x)
    for q in (3, 77, 4999):
        excluded = np.array([q, 12, 12, 9999, -4])  # duplicates and ids out of range are ignored
        got = scan_candidates(codes, scale, err, x[q], k, excluded)
        want = scan_candidates_reference(codes, scale, err, x[q], k, excluded)
        assert got is not None and np.array_equal(got, want)
        assert q not in got and 12 not in got
        truth, _ = top_k_search(x, x[q : q + 1], k, np.zeros(2, np.int64), np.array([q, 12]))
        assert set(truth[0].tolist()) <= set(got.tolist())
        assert len(got) < 200  # the bound is tight enough to rescore few rows
    assert scan_candidates(codes, scale, err, x[0], 10, np.array([0]), max_candidates=10) is None


def test_scan_top_k_equals_exact_search() -> None:
    x = unit_rows(3000, 24, seed=2)
    table = ScanTable(x)
    q = x[[10, 20, 30]]
    ex_rows = np.array([0, 1, 2, 2], dtype=np.int64)
    ex_ids = np.array([10, 20, 30, 7], dtype=np.int64)
    ids, scores = scan_top_k(table, q, 10, ex_rows, ex_ids)
    want_ids, want_scores = top_k_search(x, q, 10, ex_rows, ex_ids)
    assert np.array_equal(ids, want_ids)
    np.testing.assert_allclose(scores, want_scores, atol=1e-6)
    assert scan_top_k(table, q[:1], 3000, np.zeros(1, np.int64), np.array([10])) is None  # too few rows


def test_similar_on_a_large_space_goes_through_the_scan(monkeypatch) -> None:
    monkeypatch.setattr(searcher_mod, "SCAN_MIN_ROWS", 1000)  # read when the space's searcher is chosen
    calls = []
    real = searcher_mod.scan_top_k

    def spy(*args):
        calls.append(len(args[1]))
        return real(*args)

    monkeypatch.setattr(searcher_mod, "scan_top_k", spy)
    x = unit_rows(4000, 16, seed=3)
    emb = Embeddings(x, Vocab([f"i{i}" for i in range(4000)]))
    got = emb.similar(["i5", "i9"], k=7)
    assert calls == [2]
    want_ids, _ = top_k_search(emb.normed, emb.normed[[5, 9]], 7, np.array([0, 1]), np.array([5, 9]))
    assert np.array_equal(got.ids, want_ids)
    emb.similar(["i5"], k=7, restrict=100)  # restrict: exact search over the prefix, not the scan
    assert calls == [2]


def test_the_searcher_is_chosen_by_size_and_index_and_answers_as_exact_search(monkeypatch) -> None:
    monkeypatch.setattr(searcher_mod, "SCAN_MIN_ROWS", 1000)
    small, large = unit_rows(500, 8, seed=4), unit_rows(2000, 8, seed=5)
    assert type(searcher_for(small)) is ExactSearcher
    plain = searcher_for(large)
    assert type(plain) is ScanSearcher and plain.plain is plain
    through = searcher_for(large, ExactIndex(large, fingerprint="x"), plain=plain)
    assert type(through) is IndexSearcher and through.plain is plain  # the int8 table is kept
    q, ex_rows, ex_ids = large[[3, 8]], np.array([0, 1, 1]), np.array([3, 8, 40])
    want_ids, want_scores = top_k_search(large, q, 5, ex_rows, ex_ids)
    for searcher in (ExactSearcher(large), plain, through):
        ids, scores = searcher.search(q, 5, ex_rows, ex_ids)
        assert np.array_equal(ids, want_ids)
        np.testing.assert_allclose(scores, want_scores, atol=1e-6)
    # the index cannot fetch k + 2 of 2000 rows: the searcher below answers, exactly
    ids, _ = through.search(q, 1999, ex_rows, ex_ids)
    assert np.array_equal(ids, top_k_search(large, q, 1999, ex_rows, ex_ids)[0])
    among = (large[:100], None)  # a restriction to the first 100 rows goes exact
    ids, _ = through.search(q, 5, ex_rows, ex_ids, among)
    assert np.array_equal(ids, top_k_search(large[:100], q, 5, ex_rows, ex_ids)[0])
