"""The batched (shared-negatives) SGNS kernel: reference agreement, group=1 equals classic word2vec,
threads, validation, and a quality check on planted data that fails if the speed trick costs accuracy."""

from __future__ import annotations

import numba
import numpy as np
import pytest

from likewise.errors import InputError, ItemIndexError
from likewise.kernels import (
    make_keep_prob,
    make_neg_cum,
    train_sgns_batched_block,
    train_sgns_batched_block_reference,
    train_sgns_batched_block_serial,
    train_sgns_block_serial,
)


def packed(seqs: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    offsets = np.zeros(len(seqs) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(s) for s in seqs])
    ids = np.array([i for s in seqs for i in s], dtype=np.int32)
    return ids, offsets


def make_data(V: int, D: int, seed: int = 1, n_seq: int = 40, sample: float = 0.003) -> dict:
    rng = np.random.default_rng(seed)
    seqs = [rng.integers(0, V, size=rng.integers(2, 12)).tolist() for _ in range(n_seq)]
    seqs[3] = []
    seqs[7] = [5]
    seqs[11] = rng.integers(0, V, size=25).tolist()  # basket larger than max_context + 1
    ids, offsets = packed(seqs)
    counts = np.bincount(ids, minlength=V) + 1
    return {
        "ids": ids,
        "offsets": offsets,
        "keep_prob": make_keep_prob(counts, sample),
        "neg_cum": make_neg_cum(counts, 0.75),
        "W": ((rng.random((V, D)) - 0.5) / D).astype(np.float32),
        "C": ((rng.random((V, D)) - 0.5) / D).astype(np.float32),
    }


@pytest.fixture(scope="module")
def small() -> dict:
    return make_data(30, 8)


def call(fn, d, *, mode=0, group=4, with_group=True, **kw):
    W, C = d["W"].copy(), d["C"].copy()
    p = dict(window=3, negative=3, max_context=4, lr0=0.05, min_lr=0.001, seed=7, n_chunks=3)
    p.update(kw)
    head = (d["ids"], d["offsets"], 0, len(d["offsets"]) - 1, W, C, d["keep_prob"], d["neg_cum"], mode)
    mid = (p["window"], p["negative"], p["max_context"])
    tail = (p["lr0"], p["min_lr"], 0, int(d["offsets"][-1]), p["seed"], p["n_chunks"])
    out = fn(*head, *mid, *((group,) if with_group else ()), *tail)
    return out, W, C


@pytest.mark.parametrize("mode", [0, 1])
@pytest.mark.parametrize("group", [1, 2, 4, 16])
def test_serial_matches_reference(small, mode, group):
    (s1, k1, p1, l1), W1, C1 = call(train_sgns_batched_block_serial, small, mode=mode, group=group)
    (s2, k2, p2, l2), W2, C2 = call(train_sgns_batched_block_reference, small, mode=mode, group=group)
    assert (s1, k1, p1) == (s2, k2, p2)
    assert p1 > 50
    np.testing.assert_allclose(W1, W2, atol=1e-5)
    np.testing.assert_allclose(C1, C2, atol=1e-5)
    assert l1 == pytest.approx(l2, rel=1e-5)
    assert not np.array_equal(W1, small["W"])  # it trained


@pytest.mark.parametrize("mode", [0, 1])
def test_specialised_width_matches_reference(mode):
    """From SPECIALISE_MIN_DIM columns up the drivers are compiled for the literal width (padded
    scratch rows, a vector tail of 40 - 32 = 8 columns): same draws, same pairs, same updates."""
    from likewise.kernels.batched import SPECIALISE_MIN_DIM

    d = make_data(30, 40, seed=2)
    assert d["W"].shape[1] >= SPECIALISE_MIN_DIM
    (s1, k1, p1, l1), W1, C1 = call(train_sgns_batched_block_serial, d, mode=mode, group=3, negative=5)
    (s2, k2, p2, l2), W2, C2 = call(train_sgns_batched_block_reference, d, mode=mode, group=3, negative=5)
    assert (s1, k1, p1) == (s2, k2, p2)
    np.testing.assert_allclose(W1, W2, atol=1e-5)
    np.testing.assert_allclose(C1, C2, atol=1e-5)
    assert l1 == pytest.approx(l2, rel=1e-5)
    r3, W3, C3 = call(train_sgns_batched_block_serial, d, mode=mode, group=3, negative=5)
    assert np.array_equal(W1, W3) and np.array_equal(C1, C3)  # bit-identical run to run


@pytest.mark.parametrize("mode", [0, 1])
def test_group_one_is_classic_word2vec(mode):
    """With a vocabulary far larger than the draws, no pair draws one negative twice, so group=1
    gives the classic kernel's result: same draws and pairs (counts equal), and updates equal up to
    the tabulated sigmoid (bins of 12/2048 on the clipped dot product: an error below 1e-3 * lr)."""
    d = make_data(5000, 8, seed=3)
    (s1, k1, p1, l1), W1, C1 = call(train_sgns_batched_block_serial, d, mode=mode, group=1, negative=2)
    (s2, k2, p2, l2), W2, C2 = call(train_sgns_block_serial, d, mode=mode, with_group=False, negative=2)
    assert (s1, k1, p1) == (s2, k2, p2)
    np.testing.assert_allclose(W1, W2, atol=2e-5)
    np.testing.assert_allclose(C1, C2, atol=2e-5)
    assert l1 == pytest.approx(l2, rel=1e-4)
    assert np.abs(W1 - d["W"]).max() > 1e-3  # the updates are far larger than the tolerance


def test_serial_is_bit_identical(small):
    _, W1, C1 = call(train_sgns_batched_block_serial, small, group=8)
    _, W2, C2 = call(train_sgns_batched_block_serial, small, group=8)
    assert np.array_equal(W1, W2) and np.array_equal(C1, C2)


def test_parallel_with_one_thread_equals_serial(small):
    old = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        r1, W1, C1 = call(train_sgns_batched_block, small, mode=1, group=3)
    finally:
        numba.set_num_threads(old)
    r2, W2, C2 = call(train_sgns_batched_block_serial, small, mode=1, group=3)
    assert r1[:3] == r2[:3]
    assert np.array_equal(W1, W2) and np.array_equal(C1, C2)


def test_bad_group_and_bad_id(small):
    with pytest.raises(InputError, match=r"group == 0, must be >= 1"):
        call(train_sgns_batched_block_serial, small, group=0)
    bad = dict(small)
    bad["ids"] = small["ids"].copy()
    bad["ids"][4] = 30
    with pytest.raises(ItemIndexError, match="item id 30 is out of range for a table of 30 rows"):
        call(train_sgns_batched_block, bad)


def _purity(W: np.ndarray, group_of: np.ndarray, k: int = 10) -> float:
    U = W / np.linalg.norm(W, axis=1, keepdims=True)
    S = U @ U.T
    np.fill_diagonal(S, -np.inf)
    nn = np.argsort(-S, axis=1)[:, :k]
    return float((group_of[nn] == group_of[:, None]).mean())


@pytest.mark.parametrize("mode", [0, 1])
def test_sharing_negatives_costs_no_accuracy(mode):
    """Planted groups: sequences mix items of one group with 10 % noise. The batched kernel (group 16)
    must find the groups as well as classic word2vec (group 1) does, epoch for epoch."""
    rng = np.random.default_rng(0)
    n_groups, size, V, D = 20, 15, 300, 16
    group_of = np.arange(V) // size
    seqs = []
    for _ in range(3000):
        g = rng.integers(n_groups)
        s = g * size + rng.integers(0, size, size=rng.integers(4, 12))
        noise = rng.random(len(s)) < 0.1
        s[noise] = rng.integers(0, V, size=int(noise.sum()))
        seqs.append(s.tolist())
    ids, offsets = packed(seqs)
    counts = np.bincount(ids, minlength=V)
    keep = make_keep_prob(counts, 0.0)
    neg = make_neg_cum(counts, 0.75)
    scores = {}
    for group in (1, 16):
        init = np.random.default_rng(1)
        W = ((init.random((V, D)) - 0.5) / D).astype(np.float32)
        C = np.zeros((V, D), dtype=np.float32)
        total = int(offsets[-1]) * 5
        for epoch in range(5):
            train_sgns_batched_block_serial(
                ids, offsets, 0, len(seqs), W, C, keep, neg, mode, 5, 5, 50, group,
                0.025, 1e-4, epoch * int(offsets[-1]), total, epoch, 4,
            )  # fmt: skip
        scores[group] = _purity(W, group_of)
    assert scores[1] > 0.9, scores
    assert scores[16] >= scores[1] - 0.02, scores


@pytest.mark.parametrize("n_items", [1, 2, 3, 17, 1000])
def test_guide_table_starts_each_bucket_at_its_first_possible_negative(n_items):
    from likewise.kernels.batched import _guide_shift, _make_guide
    from likewise.kernels.sampling import make_neg_cum

    neg_cum = make_neg_cum(np.random.default_rng(n_items).integers(1, 1000, n_items), 0.75)
    shift = _guide_shift(n_items)
    total, t, want = int(neg_cum[-1]), 0, []
    for b in range(1 << (32 - shift)):  # the loop the table replaces, in plain Python integers
        floor = ((b << shift) * total) >> 32
        while neg_cum[t] <= floor:
            t += 1
        want.append(t)
    np.testing.assert_array_equal(_make_guide(neg_cum, shift), want)


@pytest.mark.parametrize("mode", [0, 1])
def test_pairs_learnt_past_settled_are_not_updated_as_in_the_reference(mode):
    """Rows large enough that many scores are past +-SETTLED (issue 43 item 5): the batched kernel skips
    those updates where its reference does."""
    from likewise.kernels import SETTLED

    d = make_data(30, 8)
    rng = np.random.default_rng(4)
    d["W"] = (rng.standard_normal((30, 8)) * 3).astype(np.float32)
    d["C"] = (rng.standard_normal((30, 8)) * 3).astype(np.float32)
    dots = d["W"] @ d["C"].T
    assert (dots > SETTLED).any() and (dots < -SETTLED).any() and (np.abs(dots) < SETTLED).any()
    (s1, k1, p1, l1), W1, C1 = call(train_sgns_batched_block_serial, d, mode=mode)
    (s2, k2, p2, l2), W2, C2 = call(train_sgns_batched_block_reference, d, mode=mode)
    assert (s1, k1, p1) == (s2, k2, p2)
    np.testing.assert_allclose(W1, W2, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(C1, C2, rtol=1e-5, atol=1e-4)
    assert l1 == pytest.approx(l2, rel=1e-5)
