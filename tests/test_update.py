"""Incremental update: a new space with new products and customers; the parent folder is untouched."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest

import likewise
from likewise import retail
from likewise.data.datasets import retail_orders, write_retail
from likewise.errors import InputError
from likewise.retail.update import _start_rows, update
from likewise.training.train import train_tables


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    """Base period without 30 'launched later' products, then an update period that sells them."""
    root = tmp_path_factory.mktemp("update")
    data = retail_orders(2500, 600, seed=11)
    rng = np.random.default_rng(0)
    launched = rng.choice(np.arange(50, 400), 30, replace=False)  # mid-popularity ids, all departments
    t1 = np.quantile(data.timestamp, 0.7)
    is_new = np.isin(data.product_id, launched)
    base = data.subset((data.timestamp < t1) & ~is_new)
    later = data.subset(data.timestamp >= t1)
    write_retail(base, root / "base")
    write_retail(later, root / "later", formats=("parquet",))
    emb = retail.train_from_log(
        root / "base" / "orders.parquet",
        time_col="timestamp",
        dim=32,
        epochs=10,
        min_count=1,
        sample=0,
        deterministic=True,
    )
    emb.save(root / "m0")
    return data, launched, base, later, root


def _hashes(folder):
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


@pytest.fixture(scope="module")
def updated(setup):
    data, launched, base, later, root = setup
    before = _hashes(root / "m0")
    new = update(root / "m0", root / "later" / "orders.parquet", root / "m1")
    return new, before


def test_parent_untouched_and_named(setup, updated):
    _, _, _, _, root = setup
    new, before = updated
    assert _hashes(root / "m0") == before
    parent = likewise.load(root / "m0")
    manifest = json.loads((root / "m1" / "manifest.json").read_text())
    assert manifest["meta"]["parent"] == {
        "fingerprint": parent.fingerprint,
        "path": str((root / "m0").resolve()),
    }
    assert manifest["fingerprint"] != parent.fingerprint == new.meta["parent"]["fingerprint"]
    loaded = likewise.load(root / "m1")
    assert (
        loaded.keys == new.keys and loaded.context is not None and len(loaded.customers) == len(new.customers)
    )


def test_old_products_keep_their_ids_new_ones_appended(setup, updated):
    data, launched, _, _, root = setup
    new, _ = updated
    parent = likewise.load(root / "m0")
    assert new.keys[: len(parent)] == parent.keys
    added = set(new.keys[len(parent) :])
    assert {data.products[p] for p in launched} <= added
    assert new.meta["update"]["new_products"] == len(added)
    # counts add up: old counts plus the update period's lines
    i = new.vocab.id(parent.keys[0])
    later_lines = int(np.sum(np.asarray(data.products, dtype=object)[setup[3].product_id] == parent.keys[0]))
    assert new.counts[i] == parent.counts[0] + later_lines


def test_new_products_land_in_their_department(setup, updated):
    data, launched, _, _, root = setup
    new, _ = updated
    dept = data.product_labels()
    n_old = len(likewise.load(root / "m0"))
    old_keys = new.keys[:n_old]
    purity = []
    for p in launched:
        key = data.products[p]
        nb = new.similar(key, k=10, restrict=old_keys).keys
        purity.append(np.mean([dept[x] == dept[key] for x in nb]))
    assert np.mean(purity) > 0.7  # chance is 1/8


def test_customers_old_and_new(setup, updated):
    data, _, base, later, root = setup
    new, _ = updated
    parent = likewise.load(root / "m0")
    base_c = set(np.asarray(data.customers)[np.unique(base.customer_id)])
    later_c = set(np.asarray(data.customers)[np.unique(later.customer_id)])
    fresh = later_c - base_c
    assert fresh, "the update period should bring customers not seen before"
    assert set(new.customers.keys) == base_c | later_c
    assert not fresh & set(parent.customers.keys)
    # an old customer's purchases are the union of both periods
    c = next(iter(sorted(base_c & later_c)))
    ci = data.customers.index(c)
    want = {
        data.products[p]
        for p in np.concatenate(
            [base.product_id[base.customer_id == ci], later.product_id[later.customer_id == ci]]
        )
    }
    assert {new.keys[i] for i in new.customers.bought(c)} == want
    res = retail.for_customer(new, sorted(fresh)[0], k=5)
    assert len(res) == 5


def test_update_refuses_to_write_over_its_parent(setup):
    _, _, _, _, root = setup
    with pytest.raises(InputError, match="is the model being updated"):
        update(root / "m0", root / "later" / "orders.parquet", root / "m0", overwrite=True)
    with pytest.raises(InputError, match="already exists"):
        update(root / "m0", root / "later" / "orders.parquet", root / "m0")
    plain = likewise.Embeddings(np.ones((2, 3), np.float32), likewise.Vocab(["a", "b"]))
    with pytest.raises(InputError, match="does not record the order log"):
        update(plain, root / "later" / "orders.parquet")


def test_start_rows_are_means_of_co_bought_items():
    table = np.arange(12, dtype=np.float32).reshape(4, 3)
    ids = np.array([0, 3, 1, 3, 2, 1, 0], dtype=np.int32)  # item 3 is new: bought with 0 and with 1
    offsets = np.array([0, 2, 4, 7], dtype=np.int64)
    known = np.array([True, True, True, False])
    out = _start_rows(ids, offsets, table, known, np.array([3]), np.random.default_rng(0))
    assert np.allclose(out[0], (table[0] + table[1]) / 2)
    lonely = _start_rows(
        np.array([3], np.int32), np.array([0, 1]), table, known, np.array([3]), np.random.default_rng(0)
    )
    assert np.abs(lonely).max() < 1  # no co-bought item: small noise


def test_train_tables_is_deterministic_and_continues():
    from likewise.training.train import TrainConfig

    rng = np.random.default_rng(1)
    ids = rng.integers(0, 30, 3000).astype(np.int32)
    offsets = np.arange(0, 3001, 6, dtype=np.int64)
    counts = np.bincount(ids, minlength=30)
    cfg = TrainConfig(mode="basket", dim=8, epochs=2, deterministic=True)
    W1, C1, h1 = train_tables(ids, offsets, counts, cfg)
    W2, C2, _ = train_tables(ids, offsets, counts, cfg)
    assert np.array_equal(W1, W2) and np.array_equal(C1, C2) and len(h1) == 2
    W3, C3, h3 = train_tables(ids, offsets, counts, cfg, W=W1, C=C1)
    assert h3[-1]["loss"] < h1[0]["loss"]  # continuing starts from the trained tables
    assert not np.array_equal(W3, W1)  # and the given tables were copied, not trained in place
    assert np.array_equal(W1, W2)


def test_the_completion_model_is_carried_over(setup, updated):
    """EASE needs every basket and an update sees only the new ones: the parent's item-item model keeps
    answering for the products it covers; new products are completed through their vectors."""
    _, _, _, _, root = setup
    new, _ = updated
    parent = likewise.load(root / "m0")
    assert parent.completion == "itemitem", parent.meta["completion_reason"]
    assert new.itemitem is not None and new.itemitem.n_items == len(new) > len(parent)
    np.testing.assert_array_equal(new.itemitem.data, parent.itemitem.data)
    assert "carried over from the parent by update" in new.meta["completion_reason"]
    fresh = new.keys[len(parent)]  # a product the parent never saw: answered through its vector
    assert len(new.recommend([fresh], k=5).keys) == 5
    old = parent.keys[0]
    assert new.recommend([old], k=5).keys == parent.recommend([old], k=5).keys


def test_restrict_n_is_the_n_most_frequent_after_an_update(tmp_path):
    """An update appends new products after the old ones; ``restrict=N`` still means the N most frequent
    by the space's counts: a new product sold in every new order is among them, one sold once is not."""
    head = "order_id,product_id,customer_id\n"
    old = [(f"o{o}", f"p{j}", f"c{o % 5}") for o in range(60) for j in range(8) if o % (j + 1) == 0]
    (tmp_path / "old.csv").write_text(head + "".join(f"{a},{b},{c}\n" for a, b, c in old))
    m0 = retail.train_from_log(tmp_path / "old.csv", dim=4, epochs=1, min_count=1, deterministic=True)
    new_lines = [(f"n{o}", p, f"c{o % 5}") for o in range(40) for p in ("hot", f"p{o % 2}")]
    new_lines.append(("n99", "rare", "c1"))
    (tmp_path / "new.csv").write_text(head + "".join(f"{a},{b},{c}\n" for a, b, c in new_lines))
    m1 = update(m0, tmp_path / "new.csv", epochs=1)
    assert m1.keys[len(m0) :] == ["hot", "rare"]  # appended, after every old product
    order = sorted(range(len(m1)), key=lambda i: (-int(m1.counts[i]), i))
    assert [m1.keys[i] for i in order[:3]] == ["p0", "p1", "hot"]  # 80, 50, 40 lines; "hot" is row 8
    assert m1.keys[order[-1]] == "rare"
    for n in (2, 3, 5, len(m1) - 1):
        expected = {m1.keys[i] for i in order[:n]}
        assert ("hot" in expected) == (n >= 3) and "rare" not in expected
        assert set(m1.similar("p1", k=len(m1), restrict=n).keys) | {"p1"} == expected
        assert set(m1.similar_to_vector(m1.vector("p1"), k=len(m1), restrict=n).keys) == expected
