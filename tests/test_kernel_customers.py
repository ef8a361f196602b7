"""The customer steps' kernels against their NumPy references, and the fit's searches against a query's."""

from __future__ import annotations

import numpy as np
import pytest

from likewise.errors import InputError
from likewise.kernels.history import add_history, add_history_reference, basket_heads, basket_heads_reference
from likewise.kernels.neighbours import history_top, history_top_reference, top_k_rows, top_k_rows_reference


def _log(seed: int, n_users: int = 30, n_items: int = 25, n_baskets: int = 200):
    rng = np.random.default_rng(seed)
    lens = rng.integers(1, 7, size=n_baskets)
    offsets = np.r_[0, np.cumsum(lens)].astype(np.int64)
    owner = rng.integers(0, n_users, size=n_baskets)
    users = np.repeat(owner, lens).astype(np.int32)
    ids = rng.integers(0, n_items, size=int(lens.sum())).astype(np.int32)  # repeats inside a basket too
    ids[rng.random(len(ids)) < 0.1] = -1  # products trimmed from the space
    users[rng.random(len(users)) < 0.03] = -1  # attribute tokens: no customer
    return users, ids, offsets


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_history_kernels_equal_their_references(seed):
    users, ids, offsets = _log(seed)
    head = basket_heads(users, ids, offsets)
    np.testing.assert_array_equal(head, basket_heads_reference(users, ids, offsets))
    age = np.random.default_rng(seed).integers(-1, 9, size=len(offsets) - 1)
    n_items = 25
    keep = (users >= 0) & (ids >= 0)
    pair = np.unique(users[keep].astype(np.int64) * n_items + ids[keep])
    outs = [[np.zeros(len(pair), np.int32) for _ in range(3)] + [np.zeros(len(pair))] for _ in range(2)]
    add_history(users, ids, offsets, age, n_items, pair, 8.0, *outs[0])
    add_history_reference(users, ids, offsets, age, n_items, pair, 8.0, *outs[1])
    counted = outs[1][0] > 0
    for got, want in zip(outs[0][:3], outs[1][:3], strict=True):
        np.testing.assert_array_equal(got[counted], want[counted])
    np.testing.assert_allclose(outs[0][3], outs[1][3], rtol=1e-12)
    assert (outs[0][0][~counted] == 0).all()


def test_a_line_outside_the_pairs_is_refused():
    users, ids, offsets = _log(3)
    pair = np.array([0, 1], dtype=np.int64)
    outs = [np.zeros(2, np.int32) for _ in range(3)] + [np.zeros(2)]
    with pytest.raises(InputError, match="not among the pairs"):
        add_history(users, ids, offsets, np.zeros(len(offsets) - 1, np.int64), 25, pair, 8.0, *outs)


@pytest.mark.parametrize("k", [1, 5, 40])
def test_top_k_rows_equals_its_reference(k):
    rng = np.random.default_rng(k)
    values = rng.normal(size=(6, 30)).astype(np.float32)
    values[2, :10] = 0.5  # ties: the lower column first
    values[3, 4] = np.nan
    skip = np.array([-1, 0, 3, 4, 29, -1])
    got, want = top_k_rows(values, k, skip, 1, 5), top_k_rows_reference(values, k, skip, 1, 5)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)
    ties = top_k_rows(np.zeros((1, 9), np.float32), 4, np.array([2]))
    assert ties[0][0].tolist() == [0, 1, 3, 4]  # equal scores: the lower column first


def _hood(seed: int):
    rng = np.random.default_rng(seed)
    n_cust, n_items = 50, 20
    rows, items = np.nonzero(rng.random((n_cust, n_items)) < 0.2)
    order = np.argsort(items, kind="stable")
    rows, items = rows[order].astype(np.int32), items[order]
    values = rng.random(len(rows))
    indptr = np.r_[0, np.cumsum(np.bincount(items, minlength=n_items))].astype(np.int64)
    norms = np.sqrt(np.bincount(rows, weights=values**2, minlength=n_cust))
    return indptr, rows, values, norms


@pytest.mark.parametrize("seed", [0, 1])
def test_history_top_equals_its_reference_and_leaves_its_scratch_clean(seed):
    indptr, rows, values, norms = _hood(seed)
    seen, dots = np.zeros(len(norms), bool), np.zeros(len(norms))
    rng = np.random.default_rng(seed + 10)
    for own in (-1, 3, 17):
        items = np.sort(rng.choice(20, size=5, replace=False))
        q = rng.random(5)
        for k in (1, 4, 100):
            got = history_top(indptr, rows, values, norms, items, q, own, k, seen, dots)
            want = history_top_reference(indptr, rows, values, norms, items, q, own, k, seen, dots)
            np.testing.assert_array_equal(got[0], want[0])
            np.testing.assert_allclose(got[1], want[1], rtol=1e-12)
            assert own not in got[0].tolist()
            assert not seen.any() and not dots.any()


def test_the_fits_searches_find_a_querys_neighbours():
    # block_neighbours (compiled, the fit's) and the NumPy path a query takes give the same shares
    from likewise.nextbasket.neighbours import (
        block_neighbours,
        history_neighbour_share,
        vector_neighbour_share,
    )
    from likewise.space.customers import customer_table

    users, ids, offsets = _log(5, n_users=40, n_items=25, n_baskets=400)
    vectors = np.random.default_rng(5).normal(size=(25, 6)).astype(np.float32)
    keys = [f"c{i}" for i in range(40)]
    table = customer_table(vectors, np.ones(25, np.int64), "fp", keys, users, ids, offsets=offsets)
    h = table.history
    queries, vecs = [], []
    for r in range(0, len(table), 3):
        s, e = int(table.bought_indptr[r]), int(table.bought_indptr[r + 1])
        queries.append(
            (np.asarray(table.bought_ids[s:e], np.int64), h["decay"][s:e], int(h["n_baskets"][r]), r)
        )
        vecs.append(table.vectors[r])
    by_vector, by_history = block_neighbours(table, 25, np.asarray(vecs, np.float64), queries, 5, threads=2)
    for (items, decay, n_b, own), vec, fv, fh in zip(queries, vecs, by_vector, by_history, strict=True):
        a = vector_neighbour_share(table, vec, own, 5, 25)
        np.testing.assert_allclose(vector_neighbour_share(table, vec, own, 5, 25, found=fv), a, atol=1e-6)
        b = history_neighbour_share(table, items, decay, n_b, own, 5, 25)
        np.testing.assert_allclose(
            history_neighbour_share(table, items, decay, n_b, own, 5, 25, found=fh), b, atol=1e-9
        )
