"""The SGNS kernel against its NumPy reference, plus learning, determinism, tables and validation."""

from __future__ import annotations

import numba
import numpy as np
import pytest

from likewise.errors import InputError, ItemIndexError
from likewise.kernels import (
    NEG_CUM_DOMAIN,
    check_corpus,
    make_keep_prob,
    make_neg_cum,
    train_sgns_block,
    train_sgns_block_reference,
    train_sgns_block_serial,
)
from likewise.kernels.sgns import chunk_bounds, chunk_states

V, D = 30, 8


def packed(seqs: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    offsets = np.zeros(len(seqs) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(s) for s in seqs])
    ids = np.array([i for s in seqs for i in s], dtype=np.int32)
    return ids, offsets


@pytest.fixture(scope="module")
def small():
    """A few dozen short sequences over 30 items, one long sequence, one empty, one of length 1."""
    rng = np.random.default_rng(1)
    seqs = [rng.integers(0, V, size=rng.integers(2, 10)).tolist() for _ in range(40)]
    seqs[3] = []
    seqs[7] = [5]
    seqs[11] = rng.integers(0, V, size=25).tolist()  # basket larger than max_context + 1
    ids, offsets = packed(seqs)
    counts = np.bincount(ids, minlength=V) + 1
    return {
        "ids": ids,
        "offsets": offsets,
        "keep_prob": make_keep_prob(counts, 0.003),
        "neg_cum": make_neg_cum(counts, 0.75),
        "W": ((rng.random((V, D)) - 0.5) / D).astype(np.float32),
        "C": ((rng.random((V, D)) - 0.5) / D).astype(np.float32),
    }


def run(fn, d, *, W=None, C=None, mode=0, seq_start=0, seq_end=None, **kw):
    """Call ``fn`` on copies of the fixture's tables; return (result, W, C)."""
    W = d["W"].copy() if W is None else W
    C = d["C"].copy() if C is None else C
    params = dict(
        window=3,
        negative=3,
        max_context=4,
        lr0=0.05,
        min_lr=0.001,
        words_before=0,
        total_words=int(d["offsets"][-1]),
        seed=7,
        n_chunks=3,
    )
    params.update(kw)
    seq_end = len(d["offsets"]) - 1 if seq_end is None else seq_end
    out = fn(
        d["ids"],
        d["offsets"],
        seq_start,
        seq_end,
        W,
        C,
        d["keep_prob"],
        d["neg_cum"],
        mode,
        params["window"],
        params["negative"],
        params["max_context"],
        params["lr0"],
        params["min_lr"],
        params["words_before"],
        params["total_words"],
        params["seed"],
        params["n_chunks"],
    )
    return out, W, C


# ---------------------------------------------------------------------------------------------------
# kernel == reference


@pytest.mark.parametrize("mode", [0, 1])
@pytest.mark.parametrize("n_chunks", [1, 3])
def test_serial_matches_reference(small, mode, n_chunks):
    assert (small["keep_prob"] < 1).any(), "fixture must exercise subsampling"
    (seen, kept, pairs, loss), W, C = run(train_sgns_block_serial, small, mode=mode, n_chunks=n_chunks)
    ref, rW, rC = run(train_sgns_block_reference, small, mode=mode, n_chunks=n_chunks)
    rseen, rkept, rpairs, rloss = ref
    assert (seen, kept, pairs) == (rseen, rkept, rpairs)
    assert seen == len(small["ids"]) and 0 < kept < seen and pairs > 0
    np.testing.assert_allclose(W, rW, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(C, rC, rtol=1e-5, atol=1e-5)
    assert loss == pytest.approx(rloss, rel=1e-5)
    assert not np.array_equal(W, small["W"])  # it trained


def test_serial_matches_reference_on_a_sub_block_late_in_the_run(small):
    kw = dict(seq_start=10, seq_end=30, words_before=500, total_words=800, seed=123, n_chunks=4)
    a, W, C = run(train_sgns_block_serial, small, mode=0, **kw)
    b, rW, rC = run(train_sgns_block_reference, small, mode=0, **kw)
    assert a[:3] == b[:3] and a[0] == small["offsets"][30] - small["offsets"][10]
    np.testing.assert_allclose(W, rW, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(C, rC, rtol=1e-5, atol=1e-5)
    untouched = np.setdiff1d(np.arange(V), small["ids"][small["offsets"][10] : small["offsets"][30]])
    np.testing.assert_array_equal(W[untouched], small["W"][untouched])  # only contexts' W rows move


def test_parallel_on_one_thread_equals_serial(small):
    before = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        a, W, C = run(train_sgns_block, small, mode=1, n_chunks=4)
    finally:
        numba.set_num_threads(before)
    b, sW, sC = run(train_sgns_block_serial, small, mode=1, n_chunks=4)
    assert a == b
    np.testing.assert_array_equal(W, sW)
    np.testing.assert_array_equal(C, sC)


@pytest.mark.parametrize("mode", [0, 1])
def test_serial_is_bit_identical_across_runs(small, mode):
    a, W1, C1 = run(train_sgns_block_serial, small, mode=mode)
    b, W2, C2 = run(train_sgns_block_serial, small, mode=mode)
    assert a == b
    np.testing.assert_array_equal(W1, W2)
    np.testing.assert_array_equal(C1, C2)
    c, W3, _ = run(train_sgns_block_serial, small, mode=mode, seed=8)
    assert not np.array_equal(W1, W3)  # the seed matters


# ---------------------------------------------------------------------------------------------------
# counts


def test_basket_pairs_are_linear_in_basket_size(small):
    keep = np.ones(V, dtype=np.float32)
    d = dict(small, keep_prob=keep)
    for max_context in (1, 4, 100):
        (_, kept, pairs, _), _, _ = run(train_sgns_block_serial, d, mode=1, max_context=max_context)
        lens = np.diff(small["offsets"])
        assert kept == lens.sum()
        assert pairs == sum(n * min(n - 1, max_context) for n in lens if n >= 2)


def test_sequence_pairs_with_window_one_are_neighbours(small):
    d = dict(small, keep_prob=np.ones(V, dtype=np.float32))
    (_, _, pairs, _), _, _ = run(train_sgns_block_serial, d, mode=0, window=1)
    lens = np.diff(small["offsets"])
    assert pairs == sum(2 * (n - 1) for n in lens if n >= 2)


def test_negative_zero_trains_positive_pairs_only(small):
    (_, _, pairs, loss), W, C = run(train_sgns_block_serial, small, negative=0)
    b, rW, rC = run(train_sgns_block_reference, small, negative=0)
    assert pairs == b[2] and pairs > 0 and loss == pytest.approx(b[3], rel=1e-5)
    np.testing.assert_allclose(C, rC, rtol=1e-5, atol=1e-5)
    # loss per pair is -log sigmoid(f) of the positive only, near log 2 with small random vectors
    assert 0.5 < loss / pairs < 0.8


@pytest.mark.parametrize("fn", [train_sgns_block, train_sgns_block_serial, train_sgns_block_reference])
def test_empty_block_and_short_sequences_train_nothing(fn):
    ids, offsets = packed([[], [3], [], [4]])
    d = {
        "ids": ids,
        "offsets": offsets,
        "keep_prob": np.ones(V, dtype=np.float32),
        "neg_cum": make_neg_cum(np.ones(V), 0.75),
        "W": np.ones((V, D), dtype=np.float32),
        "C": np.ones((V, D), dtype=np.float32),
    }
    for mode in (0, 1):
        assert run(fn, d, mode=mode, seq_start=2, seq_end=2)[0] == (0, 0, 0, 0.0)
        out, W, C = run(fn, d, mode=mode)
        assert out == (2, 2, 0, 0.0)
        np.testing.assert_array_equal(W, d["W"])
        np.testing.assert_array_equal(C, d["C"])


def test_a_draw_equal_to_the_centre_is_skipped():
    # one item holds all negative mass: every negative draw is item 0; pairs centred on 0 get no negative
    ids, offsets = packed([[0, 1], [1, 2]])
    neg_cum = np.full(3, 1000, dtype=np.int64)
    d = {
        "ids": ids,
        "offsets": offsets,
        "keep_prob": np.ones(3, np.float32),
        "neg_cum": neg_cum,
        "W": np.zeros((3, 2), np.float32),
        "C": np.zeros((3, 2), np.float32),
    }
    (_, _, pairs, loss), W, C = run(train_sgns_block_serial, d, negative=2, window=1, lr0=0.1, min_lr=0.1)
    # zero vectors stay zero (every update is g * 0), so every target costs exactly log 2;
    # 4 pairs, 1 centred on item 0 -> 1 + 3 * (1 + 2) = 10 targets
    assert pairs == 4
    assert loss == pytest.approx(10 * np.log(2), rel=1e-6)
    ref = run(train_sgns_block_reference, d, negative=2, window=1, lr0=0.1, min_lr=0.1)[0]
    assert ref == (4, 4, 4, pytest.approx(loss))


# ---------------------------------------------------------------------------------------------------
# learning, on planted groups, with the parallel kernel on two threads


def test_parallel_kernel_learns_planted_groups():
    rng = np.random.default_rng(0)
    n_groups, size = 10, 10
    n_items = n_groups * size
    seqs = []
    for _ in range(2000):
        g = rng.integers(n_groups)
        seqs.append((g * size + rng.integers(0, size, size=rng.integers(4, 12))).tolist())
    ids, offsets = packed(seqs)
    counts = np.bincount(ids, minlength=n_items)
    keep, neg = make_keep_prob(counts, 1e-3), make_neg_cum(counts, 0.75)
    dim = 16
    W = ((rng.random((n_items, dim)) - 0.5) / dim).astype(np.float32)
    C = np.zeros((n_items, dim), dtype=np.float32)
    epochs = 5
    total = epochs * len(ids)
    before = numba.get_num_threads()
    numba.set_num_threads(min(2, numba.config.NUMBA_NUM_THREADS))
    per_pair = []
    try:
        for epoch in range(epochs):
            _, _, pairs, loss = train_sgns_block(
                ids,
                offsets,
                0,
                len(seqs),
                W,
                C,
                keep,
                neg,
                0,
                4,
                5,
                8,
                0.05,
                1e-4,
                epoch * len(ids),
                total,
                epoch,
                8,
            )
            per_pair.append(loss / pairs)
    finally:
        numba.set_num_threads(before)
    assert per_pair[-1] < per_pair[0]
    assert all(b < a * 1.02 for a, b in zip(per_pair, per_pair[1:], strict=False))
    unit = W / np.linalg.norm(W, axis=1, keepdims=True)
    sims = unit @ unit.T
    np.fill_diagonal(sims, -np.inf)
    top = np.argsort(-sims, axis=1)[:, :5]
    in_group = (top // size == (np.arange(n_items) // size)[:, None]).mean()
    assert in_group > 0.9


# ---------------------------------------------------------------------------------------------------
# tables


def test_keep_prob_formula():
    # total 1000, sample 0.01 -> threshold 10; keep = (sqrt(c / 10) + 1) * 10 / c
    keep = make_keep_prob(np.array([810, 150, 30, 10, 0]), 0.01)
    assert keep.dtype == np.float32 and keep.shape == (5,)
    hand = [(9 + 1) * 10 / 810, (np.sqrt(15) + 1) * 10 / 150, (np.sqrt(3) + 1) / 3, 1.0, 1.0]
    np.testing.assert_allclose(keep, hand, rtol=1e-6)  # c = 10 gives 2 -> clipped; unseen items kept
    np.testing.assert_array_equal(make_keep_prob(np.array([810, 150]), 0.0), np.ones(2, np.float32))


def test_neg_cum_sampling_frequencies():
    counts = np.array([500, 200, 100, 50, 20, 10, 5, 1, 0])
    table = make_neg_cum(counts, 0.75)
    assert table.dtype == np.int64 and table[-1] == NEG_CUM_DOMAIN
    assert (np.diff(table) >= 0).all() and table[-1] == table[-2]  # count 0: never drawn
    rng = np.random.default_rng(3)
    draws = np.searchsorted(table, rng.integers(0, table[-1], size=200_000), side="right")
    freq = np.bincount(draws, minlength=len(counts)) / len(draws)
    expected = counts**0.75 / (counts**0.75).sum()
    np.testing.assert_allclose(freq, expected, atol=0.005)
    assert freq[-1] == 0


def test_table_builders_validate():
    with pytest.raises(InputError, match="-0.5"):
        make_keep_prob(np.ones(3), -0.5)
    with pytest.raises(InputError, match="-2"):
        make_keep_prob(np.array([1, -2]), 1e-3)
    with pytest.raises(InputError, match="positive count"):
        make_neg_cum(np.zeros(3), 0.75)
    with pytest.raises(InputError, match="nan"):
        make_neg_cum(np.ones(3), float("nan"))


# ---------------------------------------------------------------------------------------------------
# split and streams


def test_chunk_bounds_cover_the_block_in_order():
    offsets = np.array([0, 5, 5, 6, 20, 21, 22, 40], dtype=np.int64)
    for n_chunks in (1, 2, 3, 10):
        b = chunk_bounds(offsets, 1, 7, n_chunks)
        assert len(b) == n_chunks + 1 and b[0] == 1 and b[-1] == 7 and (np.diff(b) >= 0).all()
    states = chunk_states(7, 1, 4)
    assert states.dtype == np.uint64 and len(set(states.tolist())) == 4
    assert not np.array_equal(states, chunk_states(7, 2, 4))


# ---------------------------------------------------------------------------------------------------
# validation


@pytest.mark.parametrize(
    ("change", "match"),
    [
        ({"window": 0}, "window == 0"),
        ({"negative": -1}, "negative == -1"),
        ({"max_context": 0}, "max_context == 0"),
        ({"n_chunks": 0}, "n_chunks == 0"),
        ({"lr0": -0.1}, "lr0 == -0.1"),
        ({"min_lr": 0.5}, "min_lr == 0.5"),
        ({"total_words": 0}, "total_words == 0"),
        ({"words_before": -3}, "words_before == -3"),
        ({"mode": 2}, "mode == 2"),
        ({"seq_start": 5, "seq_end": 2}, "seq_end == 2"),
        ({"seq_end": 99}, "seq_end == 99"),
        ({"seq_start": -1}, "seq_start == -1"),
        ({"window": 2.5}, "window == 2.5"),
    ],
)
@pytest.mark.parametrize("fn", [train_sgns_block, train_sgns_block_serial, train_sgns_block_reference])
def test_invalid_parameters_raise(small, fn, change, match):
    with pytest.raises(InputError, match=match):
        run(fn, small, **change)


@pytest.mark.parametrize(
    ("change", "match"),
    [
        ({"W": np.zeros((V, D), np.float64)}, "W has dtype float64"),
        ({"C": np.zeros((V + 1, D), np.float32)}, r"C has shape \(31, 8\)"),
        ({"W": np.zeros((D, V), np.float32).T}, "W is not C-contiguous"),
        ({"ids": np.zeros(3, np.int64)}, "ids has dtype int64"),
        ({"keep_prob": np.ones(V - 1, np.float32)}, "keep_prob has 29 entries"),
        ({"neg_cum": np.zeros(V, np.int64)}, r"neg_cum\[-1\] == 0"),
        ({"offsets": np.array([0, 5, 3, 8], np.int64)}, r"offsets\[2\] == 3"),
        ({"offsets": np.array([0, 10**6], np.int64)}, "past the end of ids"),
    ],
)
def test_invalid_arrays_raise(small, change, match):
    d = dict(small, **{k: v for k, v in change.items() if k not in ("W", "C")})
    with pytest.raises(InputError, match=match):
        run(train_sgns_block_serial, d, W=change.get("W"), C=change.get("C"))


def test_read_only_tables_are_refused(small):
    W = small["W"].copy()
    W.flags.writeable = False
    with pytest.raises(InputError, match="W is read-only"):
        run(train_sgns_block, small, W=W)


@pytest.mark.parametrize("fn", [train_sgns_block, train_sgns_block_serial, train_sgns_block_reference])
def test_out_of_range_id_raises_item_index_error(small, fn):
    ids = small["ids"].copy()
    ids[small["offsets"][20]] = V + 4
    with pytest.raises(ItemIndexError, match=f"item id {V + 4} is out of range for a table of {V} rows"):
        run(fn, dict(small, ids=ids))
    ids[small["offsets"][20]] = -1
    with pytest.raises(ItemIndexError, match="item id -1"):
        run(fn, dict(small, ids=ids))


def test_check_corpus(small):
    check_corpus(small["ids"], small["offsets"], V)
    ids = small["ids"].copy()
    ids[[4, 9]] = [V, V + 7]
    with pytest.raises(ItemIndexError, match=f"item id {V} is out of range for a table of {V} rows"):
        check_corpus(ids, small["offsets"], V)
    with pytest.raises(InputError, match="nondecreasing"):
        check_corpus(small["ids"], np.array([0, 4, 2], np.int64), V)


def test_import_likewise_does_not_import_numba():
    import subprocess
    import sys

    code = "import sys, likewise; print('numba' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize("mode", [0, 1])
def test_pairs_learnt_past_settled_are_not_updated_as_in_the_reference(small, mode):
    """Rows large enough that many scores are past +-SETTLED (issue 43 item 5): the kernel skips those
    targets' updates exactly where the reference does, and a table of only settled pairs is unchanged."""
    from likewise.kernels import SETTLED

    rng = np.random.default_rng(4)
    W = (rng.standard_normal((V, D)) * 3).astype(np.float32)
    C = (rng.standard_normal((V, D)) * 3).astype(np.float32)
    dots = W @ C.T
    assert (dots > SETTLED).any() and (dots < -SETTLED).any() and (np.abs(dots) < SETTLED).any()
    (seen, kept, pairs, loss), kW, kC = run(train_sgns_block_serial, small, W=W.copy(), C=C.copy(), mode=mode)
    ref, rW, rC = run(train_sgns_block_reference, small, W=W.copy(), C=C.copy(), mode=mode)
    assert (seen, kept, pairs) == ref[:3]
    np.testing.assert_allclose(kW, rW, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(kC, rC, rtol=1e-5, atol=1e-4)
    assert loss == pytest.approx(ref[3], rel=1e-5)
    # every item's row along one direction: every positive is settled, and negatives (drawn among the
    # same rows) are too, on the wrong side, so they do train; with negative=0 nothing moves at all
    same = np.tile(np.full(D, 3.0, dtype=np.float32), (V, 1))
    _, sW, sC = run(train_sgns_block_serial, small, W=same.copy(), C=same.copy(), mode=mode, negative=0)
    assert np.array_equal(sW, same) and np.array_equal(sC, same)
