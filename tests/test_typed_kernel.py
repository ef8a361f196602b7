"""Typed negatives: the compiled kernel against its NumPy reference, and negatives from the right type."""

from __future__ import annotations

import numpy as np
import pytest

from likewise.errors import InputError
from likewise.kernels import (
    make_keep_prob,
    make_neg_cum,
    train_sgns_block_serial,
    train_sgns_typed_block,
    train_sgns_typed_block_reference,
    train_sgns_typed_block_serial,
)
from likewise.kernels.typed_negatives import check_typed_tables, make_typed_tables

V, D = 24, 8


def _data(seed: int = 3, only: int | None = None):
    """Sequences over 24 items of 3 types (ids % 3); with ``only``, sequences hold that type alone."""
    rng = np.random.default_rng(seed)
    pool = np.arange(V) if only is None else np.arange(only, V, 3)
    seqs = [rng.choice(pool, size=rng.integers(2, 9)).tolist() for _ in range(30)]
    seqs[4] = rng.choice(pool, size=20).tolist()  # longer than max_context + 1 in basket mode
    offsets = np.zeros(len(seqs) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(s) for s in seqs])
    ids = np.array([i for s in seqs for i in s], dtype=np.int32)
    counts = np.bincount(ids, minlength=V) + 1
    item_type = (np.arange(V) % 3).astype(np.int32)
    W = ((rng.random((V, D)) - 0.5) / D).astype(np.float32)
    return ids, offsets, counts, item_type, W


def _run(fn, ids, offsets, counts, item_type, W, *, mode, typed=True, sample=0.0, n_chunks=3):
    W = W.copy()
    C = np.zeros_like(W)
    args = (
        ids, offsets, 0, len(offsets) - 1, W, C, make_keep_prob(counts, sample), make_neg_cum(counts, 0.75),
        mode, 3, 4, 5, 0.05, 0.001, 0, int(offsets[-1]) * 2, 11, n_chunks,
    )  # fmt: skip
    out = fn(*args, *make_typed_tables(counts, item_type, 0.75)) if typed else fn(*args)
    return out, W, C


@pytest.mark.parametrize("mode", [0, 1])
@pytest.mark.parametrize("sample", [0.0, 0.02])
def test_serial_kernel_matches_the_reference(mode, sample):
    data = _data()
    got, W1, C1 = _run(train_sgns_typed_block_serial, *data, mode=mode, sample=sample)
    ref, W2, C2 = _run(train_sgns_typed_block_reference, *data, mode=mode, sample=sample)
    assert got[:3] == ref[:3] and got[2] > 0  # the same tokens seen and kept, the same pairs
    assert got[3] == pytest.approx(ref[3], rel=1e-4)
    np.testing.assert_allclose(W1, W2, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(C1, C2, rtol=1e-4, atol=1e-6)


def test_parallel_kernel_trains_the_same_pairs():
    data = _data()
    a = _run(train_sgns_typed_block, *data, mode=1)[0]
    b = _run(train_sgns_typed_block_serial, *data, mode=1)[0]
    assert a[:3] == b[:3]


def test_negatives_come_from_the_type_of_the_item_predicted():
    # Every sequence holds type-0 items only: typed negatives never touch the output rows of types 1
    # and 2, untyped negatives do (they are drawn from every row by count).
    ids, offsets, counts, item_type, W = _data(only=0)
    _, _, C_typed = _run(train_sgns_typed_block_serial, ids, offsets, counts, item_type, W, mode=1)
    _, _, C_plain = _run(train_sgns_block_serial, ids, offsets, counts, item_type, W, mode=1, typed=False)
    others = item_type != 0
    assert np.all(C_typed[others] == 0) and np.any(C_typed[~others] != 0)
    assert np.any(C_plain[others] != 0)


def test_tables_group_ids_by_type_with_a_total_per_type():
    counts = np.array([5, 1, 9, 2, 2, 7])
    item_type, start, order, cum = make_typed_tables(counts, np.array([1, 0, 1, 2, 0, 1]), 0.75)
    assert start.tolist() == [0, 2, 5, 6]
    assert order.tolist() == [1, 4, 0, 2, 5, 3]  # type 0, then 1, then 2; ascending ids within a type
    ends = start[1:] - 1
    assert np.all(cum[ends] == cum[ends].max()) and np.all(np.diff(cum[0:2]) > 0)
    check_typed_tables(item_type, start, order, cum, 6)
    with pytest.raises(InputError, match="one entry per row"):
        check_typed_tables(item_type, start, order, cum, 7)
    with pytest.raises(InputError, match="type_start must rise"):
        check_typed_tables(item_type, start[::-1].copy(), order, cum, 6)
